"""Code templates: generate AST from readable source with named placeholders.

    templates.replace('''
        def body_name():
            nonlocal state
            body
        ''', body_name='if_body', state=['y'], body=stmts, origin=node)

A placeholder is any identifier equal to a keyword argument:

* a ``str`` value renames it (names, ``def`` names, parameters, and the
  names of ``nonlocal``/``global`` statements);
* a list of ``str`` replaces the names of a ``nonlocal``/``global``
  statement (an empty list removes the statement);
* an expression node replaces a name in expression position (inserted the
  first time, copied after);
* a list of statements replaces a statement that is just the placeholder
  (an empty list removes it; an emptied block gets ``pass``).

Each template is parsed once and copied on every use.  Every node the
template creates gets the source location of ``origin`` (the user's
statement being lowered), so tracebacks point at the user's line; the
substituted user nodes keep their own locations.
"""

from __future__ import annotations

import gast

from autograph.pyct import anno, node_copiers

_PARSED: dict = {}
_LOCATION_FIELDS = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def _parse(template: str) -> list:
    body = _PARSED.get(template)
    if body is None:
        lines = template.split("\n")
        indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
        source = "\n".join(line[indent:] for line in lines)
        body = _PARSED[template] = gast.parse(source).body
    return body


def _header_location(origin):
    """The location generated nodes get: ``origin``'s first line only.

    A compound statement spans its whole body, and CPython attributes a
    method call (``ag__.if_stmt(...)``) to the *last* line of its span: the
    generated calls must stay on the statement's own line (``if x > 0:``),
    which tracebacks and the runtime's op locations report.
    """
    lineno, col_offset, end_lineno, end_col_offset = [getattr(origin, f, None) for f in _LOCATION_FIELDS]
    if end_lineno is not None and end_lineno != lineno:
        header = getattr(origin, "test", None) or getattr(origin, "iter", None)
        if header is not None and getattr(header, "end_lineno", None) == lineno:
            end_col_offset = header.end_col_offset
        else:
            end_col_offset = col_offset
        end_lineno = lineno
    return lineno, col_offset, end_lineno, end_col_offset


class _Cloner:
    __slots__ = ("replacements", "location", "used")

    def __init__(self, replacements, origin):
        self.replacements = replacements
        self.location = None
        if origin is not None and getattr(origin, "lineno", None) is not None:
            self.location = _header_location(origin)
        self.used = set()

    def _located(self, node):
        if self.location is not None:
            node.lineno, node.col_offset, node.end_lineno, node.end_col_offset = self.location
        return node

    def _substitute_expr(self, key, ctx):
        value = self.replacements[key]
        if isinstance(value, str):
            return self._located(gast.Name(id=value, ctx=ctx, annotation=None, type_comment=None))
        if key in self.used:
            value = copy_tree(value)
        self.used.add(key)
        if type(ctx) is gast.Store:
            set_store_ctx(value)
        if self.location is not None:
            self._locate_missing(value)
        return value

    def _locate_missing(self, node):
        """Gives hand-built nodes (names, constants, tuples) the template's location."""
        if "lineno" in type(node)._attributes:
            if getattr(node, "lineno", None) is not None:
                return  # a located (user) subtree
            self._located(node)
        for field in node._fields:
            value = getattr(node, field)
            if type(value) is list:
                for item in value:
                    if isinstance(item, gast.AST):
                        self._locate_missing(item)
            elif isinstance(value, gast.AST):
                self._locate_missing(value)

    def clone(self, node):
        kind = type(node)
        if kind is gast.Name and node.id in self.replacements:
            return self._substitute_expr(node.id, node.ctx)
        clone = _CLONERS.get(kind)
        if clone is None:
            clone = _cloner_of(kind)
        return clone(self, node)

    def clone_list(self, items, field):
        result = []
        for item in items:
            kind = type(item)
            if kind is gast.Expr and type(item.value) is gast.Name and item.value.id in self.replacements:
                value = self.replacements[item.value.id]
                if isinstance(value, list):
                    result.extend(value)
                    continue
            if isinstance(item, gast.AST):
                cloned = self.clone(item)
                if type(cloned) in (gast.Nonlocal, gast.Global) and not cloned.names:
                    continue
                result.append(cloned)
            else:
                result.append(item)  # e.g. the names of a nonlocal statement, handled by clone
        if not result and field in ("body", "orelse", "finalbody") and items:
            result.append(self._located(gast.Pass()))
        return result


def _clone_scope_names(cloner, node):
    """A ``nonlocal``/``global`` statement, its names renamed or replaced by lists of names."""
    kind = type(node)
    new = kind.__new__(kind)
    names = new.names = []
    for name in node.names:
        value = cloner.replacements.get(name, name)
        names.extend([value] if isinstance(value, str) else value)
    return cloner._located(new)


# node class -> the function copying such a node (made on first sight)
_CLONERS: dict = {gast.Nonlocal: _clone_scope_names, gast.Global: _clone_scope_names}

# A node copied field by field (``node_copiers``): lists through clone_list, nodes through clone,
# and the names a ``def``'s or a parameter's string field gives renamed (one _FIELD_TEMPLATE per field).
_FIELD_TEMPLATE = """    value = old[{field!r}]
    if type(value) is list:
        d[{field!r}] = cloner.clone_list(value, {field!r}) if value else []
    elif isinstance(value, _AST):
        d[{field!r}] = cloner.clone(value)
    else:
        d[{field!r}] = value
"""
_NAMED_FIELD_TEMPLATE = """    value = old[{field!r}]
    if type(value) is list:
        d[{field!r}] = cloner.clone_list(value, {field!r}) if value else []
    elif isinstance(value, _AST):
        d[{field!r}] = cloner.clone(value)
    elif type(value) is str:
        d[{field!r}] = cloner.replacements.get(value, value)
    else:
        d[{field!r}] = value
"""
_LOCATION_TEMPLATE = """    location = cloner.location
    if location is not None:
        d["lineno"], d["col_offset"], d["end_lineno"], d["end_col_offset"] = location
"""


def _cloner_of(kind):
    fields = "".join((_NAMED_FIELD_TEMPLATE if f in ("name", "arg") else _FIELD_TEMPLATE).format(field=f)
                     for f in kind._fields)
    if "lineno" in kind._attributes:
        fields += _LOCATION_TEMPLATE
    clone = _CLONERS[kind] = node_copiers.copier("cloner, node", fields, _new=kind.__new__, _target=kind,
                                                 _AST=gast.AST)
    return clone


def replace(template: str, origin=None, **replacements) -> list:
    """The statements of ``template`` with placeholders substituted."""
    cloner = _Cloner(replacements, origin)
    return cloner.clone_list(_parse(template), "module")


def replace_as_expression(template: str, origin=None, **replacements):
    """The single expression of ``template`` with placeholders substituted."""
    (statement,) = _parse(template)
    if type(statement) is not gast.Expr:
        raise ValueError(f"template is not an expression: {template!r}")
    return _Cloner(replacements, origin).clone(statement.value)


def mark_lambdas_in_place(node):
    """Annotates the lambdas of a template result as evaluated in place (``anno.IN_PLACE``)."""
    if type(node) is gast.Lambda:
        anno.set(node, anno.IN_PLACE, True)
    for field in ("args", "keywords"):
        for item in getattr(node, field, ()):
            item = getattr(item, "value", item)
            if type(item) is gast.Lambda:
                anno.set(item, anno.IN_PLACE, True)
    return node


def copy_tree(node):
    """A deep copy of an AST (annotations are not copied)."""
    if isinstance(node, list):
        return [copy_tree(item) for item in node]
    if not isinstance(node, gast.AST):
        return node
    kind = type(node)
    new = kind.__new__(kind)
    for field in node._fields:
        setattr(new, field, copy_tree(getattr(node, field)))
    for attr in kind._attributes:
        if hasattr(node, attr):
            setattr(new, attr, getattr(node, attr))
    return new


def set_store_ctx(node):
    """Turns an expression used as an assignment target into Store context."""
    kind = type(node)
    if kind in (gast.Name, gast.Attribute, gast.Subscript, gast.Starred, gast.Tuple, gast.List):
        node.ctx = gast.Store()
        if kind in (gast.Tuple, gast.List):
            for element in node.elts:
                set_store_ctx(element)
        elif kind is gast.Starred:
            set_store_ctx(node.value)


def name(identifier: str, store: bool = False):
    """A ``Name`` node (hand-built: names are one of the two allowed cases)."""
    return gast.Name(id=identifier, ctx=gast.Store() if store else gast.Load(), annotation=None, type_comment=None)


def constant(value):
    """A ``Constant`` node."""
    return gast.Constant(value=value, kind=None)


def str_tuple(strings):
    """A tuple of string constants: ``('x', 'y')``."""
    return gast.Tuple(elts=[constant(s) for s in strings], ctx=gast.Load())


def name_tuple(identifiers, store: bool = False):
    """A tuple of names: ``(x, y)``; also accepts prebuilt expression nodes."""
    elts = [name(i, store) if isinstance(i, str) else i for i in identifiers]
    return gast.Tuple(elts=elts, ctx=gast.Store() if store else gast.Load())
