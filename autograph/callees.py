"""Which callees, resolved at conversion time, converted code calls directly.

The ``call_trees`` converter resolves a callee statically when it is a
global or builtin name, or a dotted path through modules.  This module
(on the composing side: it knows the runtime) says what to do with it:

* ``BUILTIN_NAMES``: builtins with an ``ag__`` counterpart that dispatches
  tensors to the graph (``range`` -> ``ag__.range``);
* ``leave_alone(value)``: True for callees needing no conversion -- C
  functions and methods, classes, ``do_not_convert``-ed functions, and
  anything from numpy, the standard library or autograph.

Converters get both through the ``Context``; they never import the runtime.
"""

from __future__ import annotations

import types

from autograph.runtime.operators import calls, py_builtins

BUILTIN_NAMES = frozenset(py_builtins.BUILTINS)

_NATIVE_CALLABLES = (
    types.BuiltinFunctionType,
    types.BuiltinMethodType,
    types.MethodWrapperType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
)


def leave_alone(value) -> bool:
    """True for callees that need no conversion: natives, classes, libraries, do_not_convert."""
    if isinstance(value, _NATIVE_CALLABLES) or isinstance(value, type):
        return True
    if getattr(value, calls.DO_NOT_CONVERT_ATTR, False):
        return True
    if isinstance(value, types.ModuleType):
        return calls.is_skipped_module(value.__name__)
    return calls.is_skipped_module(getattr(value, "__module__", None))
