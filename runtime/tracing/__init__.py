"""Tracing: Python functions, branches and loop bodies recorded into graphs.

``rt.function`` (signature binding, cache keys, concrete functions), the
branch and loop tracing of ``If``/``While``, and staged lists.
"""
