"""Conversions between ``ast`` and ``gast`` trees, without ``gast``'s generic visitors.

``to_gast(tree)`` is ``gast.ast_to_gast(tree)`` and ``to_ast(tree)`` is
``ast.fix_missing_locations(gast.gast_to_ast(tree))``: the same trees
(``tests/test_gast_conversion.py`` compares them, location attributes
included, on every golden file), built by one walk over the nodes' instance
dicts with a converter per node class instead of a ``NodeTransformer``
method lookup per node: made on first sight from a template that copies
the class's fields one by one (``node_copiers``).  Loading (``loading.py``) converts every function's tree
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
import functools
import sys

import gast

from autograph.pyct import node_copiers

FAST = (3, 10) <= sys.version_info[:2] < (3, 12)
_MISSING = object()
_LOCATION = ("lineno", "col_offset", "end_lineno", "end_col_offset")


# -- ast -> gast -------------------------------------------------------------------------


def to_gast(node):
    """``gast.ast_to_gast(node)``."""
    if not FAST:
        return gast.ast_to_gast(node)
    return _to_gast(node)


_TYPE_PARAMS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _to_gast(node):
    kind = type(node)
    convert = _GAST_CONVERTERS.get(kind)
    if convert is None:
        convert = _gast_converter(kind)
    return convert(node)


# ast class -> its converter, made on first sight: ast node -> gast node or None
_GAST_CONVERTERS: dict = {}

# The fields of one ast class (not arg, Name, ExceptHandler: _SPECIAL) copied one by one
# (``node_copiers``), as ``_FIELD_TEMPLATE`` does for the other direction.
_GAST_FIELD_TEMPLATE = """    value = old.get({field!r}, _MISSING)
    if value is not _MISSING:
        if type(value) is list:
            d[{field!r}] = [_to_gast(v) if isinstance(v, _AST) else v for v in value]
        elif isinstance(value, _AST):
            d[{field!r}] = (_converters.get(type(value)) or _converter(type(value)))(value)
        else:
            d[{field!r}] = value
"""

_GAST_LOCATION_TEMPLATE = """    for attr in _LOCATION:
        value = old.get(attr, _MISSING)
        if value is not _MISSING:
            d[attr] = value
"""


def _gast_converter(kind):
    """The converter of the ast class ``kind``, made and remembered."""
    convert = _GAST_CONVERTERS[kind] = _SPECIAL.get(kind) or _generated_gast_converter(kind)
    return convert


@functools.lru_cache(maxsize=None)
def _generated_gast_converter(kind):
    """``kind``'s converter, its fields copied one by one (``node_copiers``)."""
    target = getattr(gast, kind.__name__, None)
    if target is None:  # not a gast node (ast_to_gast drops it too)
        return lambda node: None
    body = "".join(_GAST_FIELD_TEMPLATE.format(field=f) for f in kind._fields)
    if kind in _TYPE_PARAMS:
        body += '    d["type_params"] = []\n'
    if "lineno" in kind._attributes:
        body += _GAST_LOCATION_TEMPLATE
    return node_copiers.copier("node", body, _new=target.__new__, _target=target, _MISSING=_MISSING, _AST=ast.AST,
                               _to_gast=_to_gast, _converters=_GAST_CONVERTERS, _converter=_gast_converter,
                               _LOCATION=_LOCATION)


def _name(identifier, ctx, annotation, type_comment):
    """A ``gast.Name`` built without its constructor (most nodes are names)."""
    new = _GAST_NAME.__new__(_GAST_NAME)
    d = new.__dict__
    d["id"], d["ctx"], d["annotation"], d["type_comment"] = identifier, ctx, annotation, type_comment
    return new


_GAST_NAME = gast.Name


def _located(node, new):
    """``new`` with ``node``'s location attributes (those it has)."""
    old, d = node.__dict__, new.__dict__
    for attr in _LOCATION:
        value = old.get(attr, _MISSING)
        if value is not _MISSING:
            d[attr] = value
    return new


def _arg_to_gast(node):
    """A parameter is a ``Name`` in ``Param`` context in gast."""
    return _located(node, _name(node.arg, gast.Param(), _gast_value(node.annotation), node.type_comment))


def _name_to_gast(node):
    return _located(node, _name(node.id, _to_gast(node.ctx), None, None))


def _handler_to_gast(node):
    """``except ... as e`` names ``e`` with a ``Name`` in gast."""
    if not node.name:
        return _generated_gast_converter(ast.ExceptHandler)(node)
    return _located(node, gast.ExceptHandler(
        _gast_value(node.type), gast.Name(node.name, gast.Store(), None, None), _gast_value(node.body)))


_SPECIAL = {ast.arg: _arg_to_gast, ast.Name: _name_to_gast, ast.ExceptHandler: _handler_to_gast}


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
_NAME_FIELDS = ("id", "ctx")


def _class_of(kind):
    """(ast class or None, fields to copy, has a location, copy_location) of the gast class ``kind``."""
    target = getattr(ast, kind.__name__, None)
    fields = kind._fields
    if kind is gast.Name:
        fields = _NAME_FIELDS
    elif kind is gast.Assign:  # gast_to_ast leaves out the type comment
        fields = ("targets", "value")
    elif sys.version_info < (3, 12) and kind in (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef):
        fields = tuple(f for f in fields if f != "type_params")
    located = target is not None and "lineno" in target._attributes
    return target, fields, located, kind in _COPY_LOCATION


def _convert(node, location):
    kind = type(node)
    convert = _CONVERTERS.get(kind)
    if convert is None:
        convert = _converter(kind)
    return convert(node, location)


# gast class -> its converter, made on first sight: (gast node, location) -> ast node or None
_CONVERTERS: dict = {}

# The converter of one node class (``node_copiers``): its location, then its fields copied one by
# one, children converted through _CONVERTERS (this walk visits every node of every converted
# function).  Node fields live in the instance dicts of both gast and ast nodes: read and written there.
# gast_to_ast's copy of the location, then ast.fix_missing_locations (``_inherited``: a node without
# all four attributes)
_LOCATION_TEMPLATE = """    lineno, col_offset = old.get("lineno"), old.get("col_offset")
    end_lineno, end_col_offset = old.get("end_lineno"), old.get("end_col_offset")
    if lineno is None or col_offset is None or end_lineno is None or end_col_offset is None:
        lineno, col_offset, end_lineno, end_col_offset = _inherited(old, location, {copy_location})
    d["lineno"], d["col_offset"], d["end_lineno"], d["end_col_offset"] = location = (
        lineno, col_offset, end_lineno, end_col_offset)
"""


def _inherited(old, location, copy_location):
    """The location of a node (``old``: its dict) that lacks some of its own: gast_to_ast copies a
    line or column that is set (with ``ast.copy_location``, for ``copy_location`` classes, only one
    that is not None), and ``fix_missing_locations`` fills the rest from its parent's ``location``."""
    lineno, col_offset, end_lineno, end_col_offset = location
    value = old.get("lineno", _MISSING)
    if not (value is _MISSING or value is None and copy_location):
        lineno = value
    value = old.get("col_offset", _MISSING)
    if not (value is _MISSING or value is None and copy_location):
        col_offset = value
    value = old.get("end_lineno")
    if value is not None:
        end_lineno = value
    value = old.get("end_col_offset")
    if value is not None:
        end_col_offset = value
    return lineno, col_offset, end_lineno, end_col_offset


_FIELD_TEMPLATE = """    value = old.get({field!r}, _MISSING)
    if value is not _MISSING:
        if type(value) is list:
            d[{field!r}] = [_convert(v, location) if isinstance(v, _AST) else v for v in value]
        elif isinstance(value, _AST):
            d[{field!r}] = (_converters.get(type(value)) or _converter(type(value)))(value, location)
        else:
            d[{field!r}] = value
"""

_RULE_TEMPLATE = """    _rule(old, d, _fields, location)
"""


def _converter(kind):
    """The converter of the gast class ``kind``, made and remembered."""
    target, fields, located, copy_location = _class_of(kind)
    if target is None:  # not a node of this Python's ast (gast_to_ast drops it too)
        def convert(node, location):
            return None
    elif not fields and not located:  # Load, Store, Add, ...: one shared instance, as ast.parse does
        shared = target()

        def convert(node, location):
            return shared
    else:
        location_code = ""
        if located:
            location_code = _LOCATION_TEMPLATE.replace("{copy_location}", str(copy_location))
        rule = _FIELD_RULES.get(kind)
        if rule is not None:
            fields_code = _RULE_TEMPLATE
        else:
            fields_code = "".join(_FIELD_TEMPLATE.format(field=f) for f in fields)
        convert = node_copiers.copier(
            "node, location", location_code + fields_code, _new=target.__new__, _target=target, _MISSING=_MISSING,
            _AST=gast.AST, _convert=_convert, _converters=_CONVERTERS, _converter=_converter, _rule=rule,
            _fields=fields, _inherited=_inherited)
    _CONVERTERS[kind] = convert
    return convert


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
