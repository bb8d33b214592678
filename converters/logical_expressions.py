"""Lowers ``and``, ``or`` and ``not`` to ``ag__.and_``, ``ag__.or_`` and ``ag__.not_``.

The second operand of ``and``/``or`` becomes a closure, so short-circuit
evaluation (and the value Python returns) is preserved; the first one is
always evaluated, so it stays a plain expression.

Before::

    if not done and (i < n or force):
        ...

After::

    if ag__.and_(ag__.not_(done), lambda: ag__.or_(i < n, lambda: force)):
        ...

A chained comparison evaluates each middle operand once and stops at the
first false link, as Python does; the operands after the first become
closures::

    lo <= x < hi   ->   ag__.compare_chain(lo, ('<=', '<'), (lambda: x, lambda: hi))

So does ``x is True`` (``is``/``is not`` a bool constant): a tensor standing
for a Python bool answers it by its value.

An expression containing an assignment expression (``:=``) is left as is.
The extra loop test the jump converters attach to a ``for`` loop
(``EXTRA_LOOP_TEST``) is lowered too.
"""

from __future__ import annotations

import gast

from autograph.pyct import anno, ast_util, templates


# comparison node -> the operator as written, the key of ``ag__.compare_chain``'s table
_COMPARISONS = {
    gast.Lt: "<", gast.LtE: "<=", gast.Gt: ">", gast.GtE: ">=", gast.Eq: "==", gast.NotEq: "!=",
    gast.Is: "is", gast.IsNot: "is not", gast.In: "in", gast.NotIn: "not in",
}


def _chain(node):
    """``a < b < c`` as ``ag__.compare_chain(a, ('<', '<'), (lambda: b, lambda: c))``."""
    operators = templates.str_tuple([_COMPARISONS[type(op)] for op in node.ops])
    thunks = gast.Tuple(elts=[
        templates.replace_as_expression("lambda: operand", operand=operand) for operand in node.comparators
    ], ctx=gast.Load())
    call = templates.replace_as_expression(
        "ag__.compare_chain(first, operators, thunks)", origin=node, first=node.left,
        operators=operators, thunks=thunks,
    )
    for thunk in call.args[2].elts:
        anno.set(thunk, anno.IN_PLACE, True)
    return call


def _lazy_walrus(operands) -> bool:
    """True if a walrus is in an operand the lowered form evaluates in a closure (where it would
    bind a name of the closure): the operands after the first."""
    return any(ast_util.contains_type(operand, gast.NamedExpr) for operand in operands[1:])


def is_bool_identity(node) -> bool:
    """``x is True`` / ``x is not False`` (either side a bool constant): Python's identity of a bool,
    which a tensor standing for a Python bool answers by its value (``ag__.compare_chain``)."""
    return (type(node) is gast.Compare and len(node.ops) == 1 and type(node.ops[0]) in (gast.Is, gast.IsNot)
            and any(type(v) is gast.Constant and type(v.value) is bool for v in (node.left, node.comparators[0])))


def _lower(node, has_walrus):
    kind = type(node)
    if kind is gast.UnaryOp and type(node.op) is gast.Not:
        return templates.replace_as_expression("ag__.not_(operand)", origin=node, operand=node.operand)
    if is_bool_identity(node) and not (has_walrus and _lazy_walrus([node.left, *node.comparators])):
        return _chain(node)
    if kind is gast.Compare and len(node.ops) > 1:
        if has_walrus and _lazy_walrus([node.left, *node.comparators]):
            # Left as written: the operands before the last must be Python values (each link
            # but the last is a Python truth test), a tensor there refused.
            return python_conditions(node, [node.left, *node.comparators[:-1]], "the chained comparison")
        return _chain(node)
    if kind is not gast.BoolOp:
        return node
    if has_walrus and _lazy_walrus(node.values):
        return python_conditions(node, node.values[:-1], "the `and`" if type(node.op) is gast.And else "the `or`")
    template = "ag__.and_(a, lambda: b)" if type(node.op) is gast.And else "ag__.or_(a, lambda: b)"
    result = node.values[-1]
    for value in reversed(node.values[:-1]):
        result = templates.mark_lambdas_in_place(
            templates.replace_as_expression(template, origin=node, a=value, b=result)
        )
    return result


def python_conditions(node, deciding, construct):
    """``node`` as written (a walrus in a lazy operand binds the enclosing scope's name only so),
    with its ``deciding`` operands wrapped in ``ag__.python_condition``: a tensor there is refused
    (naming the walrus targets), since the operand skipped on one path cannot be staged."""
    targets = templates.str_tuple(sorted({n.target.id for n in gast.walk(node) if type(n) is gast.NamedExpr}))
    wrapped = {id(d): templates.replace_as_expression(
        "ag__.python_condition(value, construct, targets)", origin=d, value=d,
        construct=templates.constant(construct), targets=templates.copy_tree(targets),
    ) for d in deciding}
    if type(node) is gast.BoolOp:
        node.values = [wrapped.get(id(v), v) for v in node.values]
    elif type(node) is gast.Compare:
        node.left = wrapped.get(id(node.left), node.left)
        node.comparators = [wrapped.get(id(c), c) for c in node.comparators]
    else:
        node.test = wrapped.get(id(node.test), node.test)
    return node


def transform(node, ctx):
    if ctx.lacks(gast.BoolOp, "not", "chain", "is_bool"):
        return node

    def lower(inner):
        if type(inner) in (gast.For, gast.While) and anno.has(inner, anno.EXTRA_LOOP_TEST):
            # The test the jump converters attached to the loop (`not break_`).
            holder = gast.Expr(value=anno.get(inner, anno.EXTRA_LOOP_TEST))
            ast_util.rewrite(holder, lower)
            anno.set(inner, anno.EXTRA_LOOP_TEST, lower(holder.value))
            return inner
        return _lower(inner, ctx.has_walrus)

    if type(node) is gast.Lambda:
        node.body = lower(ast_util.rewrite(gast.Expr(value=node.body), lower).value)
        return node
    ast_util.rewrite_body(node, lower)
    return node
