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
import builtins

import gast

from autograph.converters import logical_expressions
from autograph.pyct import ast_util, templates
from autograph.pyct.context import AG_NAME


class _AsWritten(ast.NodeTransformer):
    """Undoes the call rewrites of earlier passes, for the message text: ``ag__.len(x)`` is
    ``len(x)`` and ``ag__.converted_call(f, a)`` is ``f(a)``, as the user wrote them."""

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id == AG_NAME:
            if func.attr == "converted_call" and node.args:
                return ast.Call(func=node.args[0], args=node.args[1:], keywords=node.keywords)
            if func.attr in vars(builtins):
                return ast.Call(func=ast.Name(id=func.attr, ctx=ast.Load()), args=node.args, keywords=node.keywords)
        return node


def _lower(node, has_walrus):
    if type(node) is not gast.IfExp:
        return node
    if has_walrus and any(ast_util.contains_type(branch, gast.NamedExpr) for branch in (node.body, node.orelse)):
        # A walrus in a branch would bind a name of the lambda: left as written, a tensor test refused.
        return logical_expressions.python_conditions(node, [node.test], "the conditional expression")
    text = ast.unparse(_AsWritten().visit(gast.gast_to_ast(node.test)))
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
