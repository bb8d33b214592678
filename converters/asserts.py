"""Lowers ``assert`` statements to ``ag__.assert_`` calls with a lazy message.

Before::

    assert x > 0, f"bad x: {x}"

After::

    ag__.assert_(x > 0, lambda: f"bad x: {x}")
"""

from __future__ import annotations

import gast

from autograph.pyct import ast_util, templates


def _lower(node):
    if type(node) is not gast.Assert:
        return node
    if node.msg is None:
        return templates.replace("ag__.assert_(test)", origin=node, test=node.test)[0]
    if ast_util.contains_type(node.msg, gast.NamedExpr):
        return node
    (statement,) = templates.replace("ag__.assert_(test, lambda: msg)", origin=node, test=node.test, msg=node.msg)
    templates.mark_lambdas_in_place(statement.value)
    return statement


def transform(node, ctx):
    if ctx.lacks(gast.Assert):
        return node
    for function in ast_util.functions(node):
        ast_util.transform_blocks(function, lambda statements: [_lower(s) for s in statements], into_functions=False)
    return node
