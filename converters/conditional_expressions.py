"""Lowers conditional expressions to ``ag__.if_exp`` with lazy branches.

Before::

    y = x if x > 0 else -x

After::

    y = ag__.if_exp(x > 0, lambda: x, lambda: -x, 'x > 0')

The last argument is the condition's source, for error messages.  An
expression containing an assignment expression (``:=``) is left as is (in
a lambda it would bind the wrong scope).
"""

from __future__ import annotations

import ast

import gast

from autograph import ast_util, templates


def _lower(node, has_walrus):
    if type(node) is not gast.IfExp or (has_walrus and ast_util.contains_type(node, gast.NamedExpr)):
        return node
    text = ast.unparse(gast.gast_to_ast(node.test))
    return templates.mark_lambdas_in_place(
        templates.replace_as_expression(
            "ag__.if_exp(test, lambda: body, lambda: orelse, text)",
            origin=node, test=node.test, body=node.body, orelse=node.orelse, text=templates.constant(text),
        )
    )


def transform(node, ctx):
    if ctx.lacks(gast.IfExp):
        return node

    def lower(inner):
        return _lower(inner, ctx.has_walrus)

    if type(node) is gast.Lambda:
        node.body = lower(ast_util.rewrite(gast.Expr(value=node.body), lower).value)
        return node
    ast_util.rewrite_body(node, lower)
    return node
