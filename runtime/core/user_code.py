"""Which modules are the user's code: not numpy, JAX, the standard library, autograph or test machinery.

Frame walks (aliases, outside writes, escapes) and the conversion of callees ask it of module
names; the answer is cached per name (``skipped_modules``).
"""

from __future__ import annotations

import sys
import types

_SKIPPED_MODULES = frozenset({"autograph", "numpy", "gast", "pytest", "_pytest", "hypothesis", "jax", "jaxlib"})
_STDLIB = frozenset(sys.stdlib_module_names) | frozenset(sys.builtin_module_names)

skipped_modules: dict[str, bool] = {}  # module name -> is_skipped_module (frame walks ask it of every frame)


def is_skipped_module(module_name) -> bool:
    """True for numpy, JAX, the standard library, autograph and test machinery."""
    found = skipped_modules.get(module_name)
    if found is None:
        if not module_name or type(module_name) is not str:
            return False
        root = module_name.partition(".")[0]
        found = skipped_modules[module_name] = root in _SKIPPED_MODULES or root in _STDLIB
    return found


def is_user_namespace(value) -> bool:
    """A class, function or module of the user's code, whose attributes are state a call may change
    (``Counter.count += 1``, ``helper.calls += 1``, ``settings.total += x``)."""
    if isinstance(value, types.ModuleType):
        return not is_skipped_module(value.__name__)
    return isinstance(value, (type, types.FunctionType)) and not is_skipped_module(getattr(value, "__module__", None))


_DEFINITIONS = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType)


def namespace_attributes(value) -> dict:
    """The attributes of such a class or function: its own, not the dunders Python (or autograph:
    ``__ag_converted__``) keeps there; of a module, its variables (not the functions, classes and
    modules it defines or imports)."""
    attributes = {k: v for k, v in vars(value).items() if not k.startswith("__")}
    if isinstance(value, types.ModuleType):
        attributes = {k: v for k, v in attributes.items() if not isinstance(v, _DEFINITIONS)}
    return attributes
