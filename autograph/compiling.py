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
import sys
import types

import gast

import autograph.runtime.operators as operators
from autograph import templates
from autograph.context import AG_NAME

_AG_CELL = types.CellType(operators)
_FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag
del _feature


def to_source(node) -> str:
    """The source text of a converted node, printed with ``ast.unparse``."""
    tree = gast.gast_to_ast(node)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree)


def _strip(node):
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
    node = _strip(node)
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
    module_code = compile(to_ast(module), filename, "exec", flags=flags, dont_inherit=True)
    factory_code = _nested_code(module_code, factory_name)
    wanted = "<lambda>" if type(node) is gast.Lambda else node.name
    return _nested_code(factory_code, wanted)


# -- gast -> ast, locations filled in ------------------------------------------------


def to_ast(node):
    """``ast.fix_missing_locations(gast.gast_to_ast(node))`` in one walk.

    The same tree (``tests/test_compiling.py`` compares the two on every
    golden file), built without ``gast``'s generic visitor: a table per
    node class of the ``ast`` class and the fields to copy.  A node without
    a location takes its parent's, as ``fix_missing_locations`` does (a few
    generated statements, such as ``x, = vars_`` in ``set_state``, have none).
    """
    return _convert(node, 1, 0, 1, 0)


# gast node classes whose gast_to_ast rule copies the location with ast.copy_location
# (a None line or column is not copied); the others copy every location attribute set.
_COPY_LOCATION = {gast.Name, gast.ExceptHandler, gast.Assign}
if sys.version_info < (3, 12):
    _COPY_LOCATION |= {gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef}
_CLASSES: dict = {}  # gast class -> (ast class or None, fields to copy, has a location, copy_location)
_NAME_FIELDS = ("id", "ctx")


def _class_of(kind):
    target = getattr(ast, kind.__name__, None)
    fields = kind._fields
    if kind is gast.Name:
        fields = _NAME_FIELDS
    elif kind is gast.Assign:  # gast_to_ast leaves out the type comment
        fields = ("targets", "value")
    elif sys.version_info < (3, 12) and kind in (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef):
        fields = tuple(f for f in fields if f != "type_params")
    located = target is not None and "lineno" in target._attributes
    found = _CLASSES[kind] = (target, fields, located, kind in _COPY_LOCATION)
    return found


def _convert(node, lineno, col_offset, end_lineno, end_col_offset):
    # Node fields live in the instance dicts of both gast and ast nodes: read and
    # write them there (this walk visits every node of every converted function).
    kind = type(node)
    target, fields, located, copy_location = _CLASSES.get(kind) or _class_of(kind)
    if target is None:  # not a node of this Python's ast (gast_to_ast drops it too)
        return None
    new = target()
    old, d = node.__dict__, new.__dict__
    if located:  # gast_to_ast's copy of the location, then ast.fix_missing_locations
        value = old.get("lineno", _MISSING)
        if value is _MISSING or (value is None and copy_location):
            d["lineno"] = lineno
        else:
            d["lineno"] = lineno = value
        value = old.get("col_offset", _MISSING)
        if value is _MISSING or (value is None and copy_location):
            d["col_offset"] = col_offset
        else:
            d["col_offset"] = col_offset = value
        value = old.get("end_lineno")
        if value is None:
            d["end_lineno"] = end_lineno
        else:
            d["end_lineno"] = end_lineno = value
        value = old.get("end_col_offset")
        if value is None:
            d["end_col_offset"] = end_col_offset
        else:
            d["end_col_offset"] = end_col_offset = value
    location = (lineno, col_offset, end_lineno, end_col_offset)
    if kind is gast.arguments:
        for field in ("posonlyargs", "args", "kwonlyargs"):
            d[field] = [_arg(a, location) for a in old[field]]
        for field in ("vararg", "kwarg"):
            d[field] = _arg(old[field], location)
        d["kw_defaults"] = _value(old["kw_defaults"], location)
        d["defaults"] = _value(old["defaults"], location)
        return new
    if kind is gast.ExceptHandler and node.name:
        d["type"] = _value(node.type, location)
        d["name"] = node.name.id
        d["body"] = _value(node.body, location)
        return new
    for field in fields:
        value = old.get(field, _MISSING)
        if value is _MISSING:
            continue
        if type(value) is list:
            d[field] = [_convert(v, *location) if isinstance(v, gast.AST) else v for v in value]
        elif isinstance(value, gast.AST):
            d[field] = _convert(value, *location)
        else:
            d[field] = value
    return new


_MISSING = object()


def _value(value, location):
    if isinstance(value, gast.AST):
        return _convert(value, *location)
    if isinstance(value, list):
        return [_convert(v, *location) if isinstance(v, gast.AST) else v for v in value]
    return value


def _arg(name, location):
    """A parameter (a ``gast.Name``) as an ``ast.arg``, located as ``gast_to_ast`` and
    ``fix_missing_locations`` would locate it."""
    if name is None:
        return None
    new = ast.arg(arg=name.id, type_comment=name.type_comment)
    for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):  # ast.copy_location
        value = getattr(name, attr, None)
        if value is not None or (attr.startswith("end_") and hasattr(name, attr)):
            setattr(new, attr, value)
    for attr, inherited in zip(("lineno", "col_offset", "end_lineno", "end_col_offset"), location):
        if getattr(new, attr, None) is None and (attr.startswith("end_") or not hasattr(new, attr)):
            setattr(new, attr, inherited)
    own = (new.lineno, new.col_offset, new.end_lineno, new.end_col_offset)
    new.annotation = _value(name.annotation, own)
    return new


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
