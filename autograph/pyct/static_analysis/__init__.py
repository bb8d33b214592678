"""Static analyses: passes that annotate nodes under the keys documented in ``autograph.pyct.anno``.

``activity`` (what each statement reads and binds; ``walrus_reads`` the
names a statement reads only after its own ``:=`` bound them), ``liveness``
(what is live into and out of each statement) and ``reaching_definitions``
(which bindings reach each read), run in that order by ``autograph.pipeline``.
"""
