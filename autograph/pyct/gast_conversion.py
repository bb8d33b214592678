"""Conversions between ``ast`` and ``gast`` trees, without ``gast``'s generic visitors.

``to_gast(tree)`` is ``gast.ast_to_gast(tree)`` and ``to_ast(tree)`` is
``ast.fix_missing_locations(gast.gast_to_ast(tree))``: the same trees
(``tests/test_gast_conversion.py`` compares them, location attributes
included, on every golden file), built by one walk over the nodes' instance
dicts with a table per node class instead of a ``NodeTransformer`` method
lookup per node.  Loading (``loading.py``) converts every function's tree
one way and compiling (``compiling.py``) the converted tree back, so these
walks are part of every conversion.

The node classes of the two libraries match field for field except where
gast's own rules say otherwise (Python 3.10 and 3.11): ``Name`` carries an
annotation and a type comment in gast; parameters are ``Name``s in
``Param`` context in gast and ``arg``s in ast; an ``except ... as e`` names
``e`` with a ``Name`` in gast; gast's ``FunctionDef``/``ClassDef`` have
``type_params``; gast_to_ast drops an ``Assign``'s type comment.  On other
Python versions (``FAST`` is False) both functions call gast's converters.
"""

from __future__ import annotations

import ast
import sys

import gast

FAST = (3, 10) <= sys.version_info[:2] < (3, 12)
_MISSING = object()
_LOCATION = ("lineno", "col_offset", "end_lineno", "end_col_offset")


# -- ast -> gast -------------------------------------------------------------------------


def to_gast(node):
    """``gast.ast_to_gast(node)``."""
    if not FAST:
        return gast.ast_to_gast(node)
    return _to_gast(node)


_GAST_CLASSES: dict = {}  # ast class -> (gast class or None, fields, has a location)
_TYPE_PARAMS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _gast_class_of(kind):
    target = getattr(gast, kind.__name__, None)
    found = _GAST_CLASSES[kind] = (target, kind._fields, "lineno" in kind._attributes)
    return found


def _name(identifier, ctx, annotation, type_comment):
    """A ``gast.Name`` built without its constructor (most nodes are names)."""
    new = _GAST_NAME.__new__(_GAST_NAME)
    d = new.__dict__
    d["id"], d["ctx"], d["annotation"], d["type_comment"] = identifier, ctx, annotation, type_comment
    return new


_GAST_NAME = gast.Name


def _to_gast(node):
    kind = type(node)
    if kind is ast.arg:
        new = _name(node.arg, gast.Param(), _gast_value(node.annotation), node.type_comment)
    elif kind is ast.Name:
        new = _name(node.id, _to_gast(node.ctx), None, None)
    elif kind is ast.ExceptHandler and node.name:
        new = gast.ExceptHandler(_gast_value(node.type), gast.Name(node.name, gast.Store(), None, None),
                                 _gast_value(node.body))
    else:
        target, fields, _ = _GAST_CLASSES.get(kind) or _gast_class_of(kind)
        if target is None:  # not a gast node (ast_to_gast drops it too)
            return None
        new = target.__new__(target)
        old, d = node.__dict__, new.__dict__
        for field in fields:
            value = old.get(field, _MISSING)
            if value is _MISSING:
                continue
            if type(value) is list:
                d[field] = [_to_gast(v) if isinstance(v, ast.AST) else v for v in value]
            elif isinstance(value, ast.AST):
                d[field] = _to_gast(value)
            else:
                d[field] = value
        if kind in _TYPE_PARAMS:
            d["type_params"] = []
    if "lineno" in kind._attributes:
        old, d = node.__dict__, new.__dict__
        for attr in _LOCATION:
            value = old.get(attr, _MISSING)
            if value is not _MISSING:
                d[attr] = value
    return new


def _gast_value(value):
    if isinstance(value, ast.AST):
        return _to_gast(value)
    if isinstance(value, list):
        return [_to_gast(v) if isinstance(v, ast.AST) else v for v in value]
    return value


# -- gast -> ast, locations filled in ----------------------------------------------------


def to_ast(node):
    """``ast.fix_missing_locations(gast.gast_to_ast(node))`` in one walk (Python < 3.12).

    The same tree (``tests/test_gast_conversion.py`` compares the two on every
    golden file), built without ``gast``'s generic visitor: a table per
    node class of the ``ast`` class and the fields to copy.  A node without
    a location takes its parent's, as ``fix_missing_locations`` does (a few
    generated statements, such as ``x, = vars_`` in ``set_state``, have none).
    """
    if not FAST:
        tree = gast.gast_to_ast(node)
        ast.fix_missing_locations(tree)
        return tree
    return _convert(node, (1, 0, 1, 0))


# gast node classes whose gast_to_ast rule copies the location with ast.copy_location
# (a None line or column is not copied); the others copy every location attribute set.
_COPY_LOCATION = {gast.Name, gast.ExceptHandler, gast.Assign}
if sys.version_info < (3, 12):
    _COPY_LOCATION |= {gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef}
_CLASSES: dict = {}  # gast class -> (ast class or None, fields to copy, has a location, copy_location)
_NAME_FIELDS = ("id", "ctx")
_SHARED: dict = {}  # ast class without fields or location -> its one instance


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


def _convert(node, location):
    # Node fields live in the instance dicts of both gast and ast nodes: read and
    # write them there (this walk visits every node of every converted function).
    kind = type(node)
    target, fields, located, copy_location = _CLASSES.get(kind) or _class_of(kind)
    if target is None:  # not a node of this Python's ast (gast_to_ast drops it too)
        return None
    if not fields and not located:  # Load, Store, Add, ...: one shared instance, as ast.parse does
        shared = _SHARED.get(target)
        if shared is None:
            shared = _SHARED[target] = target()
        return shared
    new = target()
    old, d = node.__dict__, new.__dict__
    if located:  # gast_to_ast's copy of the location, then ast.fix_missing_locations
        lineno, col_offset, end_lineno, end_col_offset = location
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
    rule = _FIELD_RULES.get(kind)
    if rule is not None:
        rule(old, d, fields, location)
        return new
    for field in fields:
        value = old.get(field, _MISSING)
        if value is _MISSING:
            continue
        if type(value) is list:
            d[field] = [_convert(v, location) if isinstance(v, gast.AST) else v for v in value]
        elif isinstance(value, gast.AST):
            d[field] = _convert(value, location)
        else:
            d[field] = value
    return new


def _arguments_fields(old, d, fields, location):
    """``gast.arguments``: its parameters are ``Name``s in gast and ``arg``s in ast."""
    for field in ("posonlyargs", "args", "kwonlyargs"):
        d[field] = [_arg(a, location) for a in old[field]]
    for field in ("vararg", "kwarg"):
        d[field] = _arg(old[field], location)
    d["kw_defaults"] = _value(old["kw_defaults"], location)
    d["defaults"] = _value(old["defaults"], location)


def _handler_fields(old, d, fields, location):
    """``except ... as e`` names ``e`` with a ``Name`` in gast and a string in ast."""
    name = old.get("name")
    if not name:
        for field in fields:
            if field in old:
                d[field] = _value(old[field], location)
        return
    d["type"] = _value(old["type"], location)
    d["name"] = name.id
    d["body"] = _value(old["body"], location)


# The node classes whose fields _convert does not copy one for one: class -> rule(old, d, fields, location).
_FIELD_RULES = {gast.arguments: _arguments_fields, gast.ExceptHandler: _handler_fields}


def _value(value, location):
    if isinstance(value, gast.AST):
        return _convert(value, location)
    if isinstance(value, list):
        return [_convert(v, location) if isinstance(v, gast.AST) else v for v in value]
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
