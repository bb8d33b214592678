"""Code generation: from the converted ``gast`` function to a live function.

The converted ``def`` is compiled directly from the AST (no source text is
re-parsed), under the original file name, so every node keeps the user's
line numbers and tracebacks show the user's own lines.  It is compiled
nested in a factory function that declares ``ag__`` and the original's
free variables, only so that the compiler makes them free variables of the
converted function (and declares the function's own name ``global`` unless
it is one of them, so recursion resolves as in the original); the factory
never runs.  ``instantiate`` then builds
the function object with:

* the original's ``__globals__`` (the live module namespace: reads and
  ``global`` writes are those of the original);
* the original's closure cells, matched by name (a ``nonlocal`` write is
  seen by the enclosing scope and vice versa), plus a cell holding the
  operators module for ``ag__``;
* the original's defaults, keyword defaults, annotations, name, qualname,
  docstring, module, attributes, and ``__wrapped__`` pointing to it.
"""

from __future__ import annotations

import __future__
import ast
import types

import gast

import autograph.runtime.operators as operators
from autograph.pyct import gast_conversion, templates
from autograph.pyct.context import AG_NAME

_AG_CELL = types.CellType(operators)
_FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag
del _feature


def to_source(node) -> str:
    """The source text of a converted node, printed with ``ast.unparse``."""
    return ast.unparse(gast_conversion.to_ast(node))


def strip(node):
    """The converted def as it is compiled: without its decorators."""
    if type(node) is gast.Lambda:
        return node
    node.decorator_list = []
    return node


def future_flags(code) -> int:
    """The ``from __future__`` compiler flags ``code`` was compiled with."""
    return code.co_flags & _FUTURE_FLAGS


def compile_function(node, filename, freevars, flags=0):
    """Compiles the converted ``node``; returns its code object.

    ``flags``: ``__future__`` flags of the original (``future_flags``), so
    that, say, annotations stay unevaluated under ``from __future__ import
    annotations``.
    """
    node = strip(node)
    factory_name = "ag__factory"
    member = node if type(node) is not gast.Lambda else gast.Expr(value=node)
    gast.copy_location(member, node)
    declared = [AG_NAME] + sorted(v for v in freevars if v != AG_NAME)
    factory = templates.replace(
        """
        def factory():
            names = None
        """,
        origin=node, factory=factory_name, names=templates.name_tuple(declared, store=True),
    )[0]
    if type(node) is not gast.Lambda and node.name not in freevars:
        # The def binds its name in the factory; a recursive call must still
        # find the function through the module globals, as the original does.
        factory.body += templates.replace("global name", origin=node, name=node.name)
    factory.body.append(member)
    module = gast.Module(body=[factory], type_ignores=[])
    module_code = compile(gast_conversion.to_ast(module), filename, "exec", flags=flags, dont_inherit=True)
    factory_code = _nested_code(module_code, factory_name)
    wanted = "<lambda>" if type(node) is gast.Lambda else node.name
    return _nested_code(factory_code, wanted)


def _nested_code(code, name):
    for const in code.co_consts:
        if type(const) is types.CodeType and const.co_name == name:
            return const
    raise AssertionError(f"compiled code has no function {name!r}")


def instantiate(code, original):
    """A function running ``code`` in ``original``'s globals and closure."""
    cells = {}
    if original.__closure__:
        cells = dict(zip(original.__code__.co_freevars, original.__closure__))
    cells[AG_NAME] = _AG_CELL
    closure = tuple(cells[name] for name in code.co_freevars) or None
    function = types.FunctionType(code, original.__globals__, original.__name__, original.__defaults__, closure)
    function.__kwdefaults__ = dict(original.__kwdefaults__) if original.__kwdefaults__ else None
    function.__annotations__ = original.__annotations__
    function.__qualname__ = original.__qualname__
    function.__doc__ = original.__doc__
    function.__module__ = original.__module__
    function.__dict__.update(original.__dict__)
    function.__wrapped__ = original
    return function

