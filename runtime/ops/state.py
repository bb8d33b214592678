"""Stateful ops, in one place: variables (``ops/variables.py``), printing and calls
back into Python (``ops/effects.py``).

Every op type of those modules (and of ``random_ops``) is registered
``stateful=True``, so while tracing the graph chains them through automatic
control dependencies (``graph.last_stateful``): their side effects happen
in program order at every execution of the graph, and the executor and the
optimizer never drop them even when their results are unused.

This module names them together (``state.Variable``, ``state.print``,
``state.py_function``, ...) for the code that refers to "the stateful
ops"; each lives in the module of its responsibility.
"""

from __future__ import annotations

from autograph.runtime.ops.effects import print, py_function  # noqa: A004 - rt.print mirrors print
from autograph.runtime.ops.variables import (
    Variable,
    VariableHandle,
    creation_scope,
    export_variable,
    import_variable,
    lookup_variable,
)

__all__ = [
    "Variable", "VariableHandle", "creation_scope", "lookup_variable", "export_variable", "import_variable",
    "print", "py_function",
]
