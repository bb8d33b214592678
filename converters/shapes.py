"""Lowers reads of ``x.shape`` to ``ag__.shape_of(x)``.

A symbolic tensor's static shape has ``None`` where a dimension is unknown
while tracing (a tensor loop relaxed it), so ``y.shape[0] == 4`` would be a
silent ``None == 4``; ``ag__.shape_of`` gives such a dimension as a tensor of
its size when the graph runs, and anything else (a known dimension, a numpy
array's shape, a user object's attribute) exactly as Python reads it
(``runtime/operators/shapes.py``).  Only loads are rewritten, and not where
the read is part of something else Python does with the attribute: a call
of it (``np.shape(x)``, ``rt.shape(x)``), an attribute of it
(``obj.shape.append(v)``), or the chain of an assignment or ``del`` target
(``obj.shape[0] = v``), which the analyses see as written.  It runs in the
``call_trees`` pass of ``autograph/pipeline.py``, only for a function that
mentions ``.shape`` or stores a ``.dtype`` (the ``unsupported`` pass records it).

An assignment to either attribute changes a numpy array in place
(``y.shape = (2, 2)`` reshapes it); its value goes through
``ag__.array_attribute_store``, which refuses it when the owner is a symbolic
tensor (whose ``shape`` and ``dtype`` describe a value and must not change)
and is the value itself for anything else, which the assignment then sets as
Python does.  Only owners without effects (a name, a chain of attributes) are
checked, since the owner is read twice.

Before::

    if y.shape[0] == 4:
        n, m = x.shape
    y.shape = (2, 2)

After::

    if ag__.shape_of(y)[0] == 4:
        n, m = ag__.shape_of(x)
    y.shape = ag__.array_attribute_store((2, 2), y, 'shape')
"""

from __future__ import annotations

import gast

from autograph.pyct import anno, ast_util, templates

_WRITES = (gast.Store, gast.Del)
_LINKS = (gast.Attribute, gast.Subscript)


_STORE = "ag__.array_attribute_store(value, owner, name)"


def _plain_owner(node) -> bool:
    while type(node) is gast.Attribute:
        node = node.value
    return type(node) is gast.Name


def _check_stores(assign) -> None:
    """``x.shape = v`` (or ``.dtype``, one target of an assignment): ``v`` goes through the check."""
    for target in assign.targets:
        if type(target) is gast.Attribute and target.attr in ("shape", "dtype") and _plain_owner(target.value):
            assign.value = templates.replace_as_expression(
                _STORE, origin=assign.value, value=assign.value, owner=templates.copy_tree(target.value),
                name=templates.constant(target.attr),
            )


def _lowered(child, kept, targets):
    """``ag__.shape_of(x)`` for a read ``x.shape`` that is not ``kept`` nor a target's link, else ``child``."""
    if type(child) is gast.Assign:
        _check_stores(child)
    if (
        type(child) is gast.Attribute and child.attr == "shape" and type(child.ctx) is gast.Load
        and child is not kept and id(child) not in targets
    ):
        return templates.replace_as_expression("ag__.shape_of(value)", origin=child, value=child.value)
    return child


def _lower_children(node, fields, stack, targets):
    """Lowers the reads among the children of ``node`` in ``fields``, and puts the children on ``stack``."""
    kind = type(node)
    kept = node.func if kind is gast.Call else node.value if kind is gast.Attribute else None
    if kind in _LINKS and (type(node.ctx) in _WRITES or id(node) in targets):
        targets.add(id(node.value))  # `obj.shape[0] = v`: the chain up to the target is read as written
    values = node.__dict__
    for field in fields:
        value = values.get(field)
        if type(value) is list:
            for index, item in enumerate(value):
                if isinstance(item, gast.AST):
                    value[index] = item = _lowered(item, kept, targets)
                    stack.append(item)
        elif isinstance(value, gast.AST):
            values[field] = value = _lowered(value, kept, targets)
            stack.append(value)


def transform(node, ctx):
    if ctx.lacks("shape", "dtype_store"):
        return node
    stack, targets = [], set()
    _lower_children(node, ("body",), stack, targets)  # the function's body only, as it runs in a trace
    while stack:
        current = stack.pop()
        kind = type(current)
        if kind is gast.ClassDef:  # a class body runs as written; its bases and decorators here
            _lower_children(current, ("bases", "keywords", "decorator_list"), stack, targets)
        elif kind not in ast_util.FUNCTIONS or not anno.get(current, ast_util.SKIP, False):
            _lower_children(current, current._fields, stack, targets)
    if ctx.kinds is not None:
        ctx.kinds |= {gast.Call, gast.Attribute, gast.Name, gast.Expr, gast.Constant}
    return node
