"""Execution: running a graph on values (the plan, the interpreter, the parallel runner, loop tiering)."""
