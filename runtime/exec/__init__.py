"""Execution: running a graph on values.

``plan.py`` the plan (slots, schedule, steps), ``memory.py`` last uses and
buffer donation, ``interpreter.py`` the rules and the loop that runs a plan,
``parallel.py`` the runner that puts independent heavy steps on threads,
``tiering.py`` ``While`` loops interpreted, then compiled once hot (imported
here: it adds the interpreter's ``While`` rule).
"""

from autograph.runtime.exec import tiering as _tiering  # noqa: F401 - adds the While rule
