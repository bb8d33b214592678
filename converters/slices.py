"""Lowers augmented assignment to an item, ``x[i] += v``, to ``ag__.aug_setitem``.

Tensors are immutable, so the update must be functional: the container is
rebound with the result (for Python containers, the same object, updated
in place with Python's in-place operator).  Only items of plain local names
are rewritten, and only with an index that is an expression (not a slice).

Before::

    counts[k] += 1

After::

    counts = ag__.aug_setitem(counts, k, '+=', 1)
"""

from __future__ import annotations

import gast

from autograph import anno, ast_util, templates

_SYMBOLS = {
    gast.Add: "+=", gast.Sub: "-=", gast.Mult: "*=", gast.MatMult: "@=", gast.Div: "/=",
    gast.FloorDiv: "//=", gast.Mod: "%=", gast.Pow: "**=", gast.LShift: "<<=", gast.RShift: ">>=",
    gast.BitAnd: "&=", gast.BitOr: "|=", gast.BitXor: "^=",
}


def _lower(statement, local):
    if type(statement) is not gast.AugAssign:
        return statement
    target = statement.target
    if type(target) is not gast.Subscript or type(target.value) is not gast.Name or target.value.id not in local:
        return statement
    if ast_util.contains_type(target.slice, gast.Slice):
        return statement
    (lowered,) = templates.replace(
        "container = ag__.aug_setitem(container, index, op, value)",
        origin=statement, container=target.value.id, index=target.slice,
        op=templates.constant(_SYMBOLS[type(statement.op)]), value=statement.value,
    )
    return lowered


def transform(node, ctx):
    for function in ast_util.functions(node):
        local = anno.get(function, anno.SCOPE).locals
        ast_util.transform_blocks(
            function, lambda statements: [_lower(s, local) for s in statements], into_functions=False
        )
    return node
