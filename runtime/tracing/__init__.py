"""Tracing: Python functions, branches and loop bodies recorded into graphs.

``rt.function``: ``function.py`` (the ``Function`` and its cache),
``options.py`` (its one options record), ``binding.py`` (argument binding,
``input_signature``), ``signature.py`` (cache keys), ``trace.py`` (the trace
step), ``concrete.py`` (``ConcreteFunction``: optimize, compile or plan,
run).  ``control_flow.py`` traces the branches and loop bodies of
``If``/``While``, ``cond_while.py`` is ``rt.cond``/``rt.while_loop``,
``staged_list.py`` the staged lists.
"""
