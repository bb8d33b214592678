"""Lowers walrus (``:=``) in loop tests and under ``and``/``or``/``... if ... else ...`` to statements.

A ``while`` test is evaluated before every iteration, in its own closure
once converted: a name it binds would never reach the loop body, nor the
code after a tensor loop.  The test is evaluated once before the loop and
again at the end of each iteration (not after a ``break`` or ``return``:
the flags of the lowered jumps guard it), into a variable the loop tests;
what the walrus binds is then ordinary loop state.

Before::

    while (j := i * 2) < n:
        i += 1

After::

    cond_ = (j := i * 2) < n
    while cond_:
        i += 1
        cond_ = (j := i * 2) < n

A walrus under a short-circuit operator (``x > 0 and (k := f(x)) > 3``,
``(k := v) if c else w``) binds only when Python evaluates it: the test of
an ``if`` (or the value of an assignment, ``return``, expression statement,
or ``for`` iterable) holding one becomes statements, so that the binding is
branch state of an ``if``::

    cond_ = x > 0
    if cond_:
        cond_ = (k := f(x)) > 3
    if cond_:
        ...

A chained comparison with a walrus after its first operand (``0 < (k :=
f(x)) < n``) becomes one statement per link, each middle operand evaluated
once (``operand_ := ...``) and each link only if the ones before held.  A
walrus nested deeper under ``and``/``or``/a conditional expression/a chained
comparison stays Python (``logical_expressions`` leaves it), with a tensor
operand refused there at run time.
"""

from __future__ import annotations

import gast

from autograph.converters import lowering
from autograph.pyct import anno, ast_util, templates

# Statements whose expression runs first (hoisting it before the statement keeps the order).
_VALUE_FIELDS = {gast.Assign: "value", gast.AugAssign: "value", gast.AnnAssign: "value", gast.Expr: "value",
                 gast.Return: "value", gast.For: "iter", gast.If: "test"}


def _has_walrus(node) -> bool:
    return node is not None and ast_util.contains_type(node, gast.NamedExpr)


def _short_circuited(node) -> bool:
    """True if ``node`` is an ``and``/``or``/conditional expression holding a walrus in an operand
    Python may skip (the first operand, or the test, is always evaluated: the expression lowerings
    evaluate it in place, where its walrus binds as written), or a chained comparison holding one
    after its first operand (the chain lowering evaluates those in closures)."""
    kind = type(node)
    if kind is gast.Compare:
        return len(node.ops) > 1 and any(_has_walrus(c) for c in node.comparators)
    if kind is gast.BoolOp:
        return any(_has_walrus(v) for v in node.values[1:]) or _short_circuited(node.values[0])
    if kind is gast.IfExp:
        return _has_walrus(node.body) or _has_walrus(node.orelse) or _short_circuited(node.test)
    return False


def _chain(target, left, ops, rights, origin, namer):
    """``target = left op0 r0 op1 r1 ...`` (a chained comparison) as one statement per link, each
    middle operand evaluated once, as Python's chain does (into a new name unless it is a name or
    a constant), and each link run only if the ones before were true::

        target = a < (operand_ := b)
        if target:
            target = operand_ < c
    """
    link_right = rights[0]
    if len(ops) == 1:
        return _assign(target, gast.Compare(left=left, ops=ops, comparators=[link_right]), origin, namer)
    if type(link_right) is gast.Name:
        saved = templates.name(link_right.id)
    elif type(link_right) is gast.Constant:
        saved = templates.copy_tree(link_right)
    else:
        name = namer.new("operand_")
        link_right = gast.NamedExpr(target=templates.name(name, store=True), value=link_right)
        saved = templates.name(name)
    link = gast.Compare(left=left, ops=ops[:1], comparators=[link_right])
    return templates.replace("target = link", origin=origin, target=target, link=link) + templates.replace(
        """
        if test:
            body
        """,
        origin=origin, test=templates.name(target), body=_chain(target, saved, ops[1:], rights[1:], origin, namer),
    )


def _assign(target, expr, origin, namer):
    """Statements assigning ``expr`` to ``target``, evaluating it as Python does (short-circuits as ``if``)."""
    kind = type(expr)
    if kind is gast.Compare and _short_circuited(expr):
        return _chain(target, expr.left, expr.ops, expr.comparators, origin, namer)
    if kind is gast.IfExp and _short_circuited(expr):
        test = _assign(target, expr.test, origin, namer) if _short_circuited(expr.test) else None
        return (test or []) + templates.replace(
            """
            if test:
                body
            else:
                orelse
            """,
            origin=origin, test=templates.name(target) if test else expr.test,
            body=_assign(target, expr.body, origin, namer), orelse=_assign(target, expr.orelse, origin, namer),
        )
    if kind is gast.BoolOp and _short_circuited(expr):
        first, rest = expr.values[0], expr.values[1:]
        remaining = rest[0] if len(rest) == 1 else gast.BoolOp(op=expr.op, values=rest)
        gast.copy_location(remaining, rest[0])
        test = templates.name(target)
        if type(expr.op) is gast.Or:
            test = ast_util.negate(test)
        return _assign(target, first, origin, namer) + templates.replace(
            """
            if test:
                body
            """,
            origin=origin, test=test, body=_assign(target, remaining, origin, namer),
        )
    return templates.replace("target = expr", origin=origin, target=target, expr=expr)


def _lower_while(loop, ctx):
    name = ctx.namer.new("cond_")
    before = _assign(name, loop.test, loop, ctx.namer)
    again = _assign(name, templates.copy_tree(loop.test), loop, ctx.namer)
    extra = anno.get(loop, anno.EXTRA_LOOP_TEST, None)
    if extra is not None:  # not after a lowered break (or, lowered later, a return)
        again = templates.replace(
            """
            if extra:
                again
            """,
            origin=loop, extra=templates.copy_tree(extra), again=again,
        )
    loop.test = templates.name(name)
    gast.copy_location(loop.test, before[0])
    loop.body = loop.body + again
    return before + [loop]


def _hoistable(expr):
    """``(owner, field, index)`` of the parts of ``expr`` that are short-circuits holding a walrus
    and that can be evaluated before the statement: ``expr`` itself, or items of a tuple or list
    whose earlier items are constants or names no walrus of it binds."""
    if _short_circuited(expr):
        return [(None, None, None)]
    if type(expr) not in (gast.Tuple, gast.List):
        return []
    bound = {n.target.id for n in gast.walk(expr) if type(n) is gast.NamedExpr}
    found = []
    for index, item in enumerate(expr.elts):
        if _short_circuited(item):
            found.append((expr, "elts", index))
        elif not (type(item) is gast.Constant or (type(item) is gast.Name and item.id not in bound)):
            break
    return found


def _lower_statement(statement, ctx):
    kind = type(statement)
    if kind is gast.While and _has_walrus(statement.test):
        return _lower_while(statement, ctx)
    field = _VALUE_FIELDS.get(kind)
    if field is None:
        return [statement]
    hoisted = []
    for owner, _, index in _hoistable(getattr(statement, field)):
        name = ctx.namer.new("cond_" if kind is gast.If else "value_")
        part = getattr(statement, field) if owner is None else owner.elts[index]
        hoisted += _assign(name, part, statement, ctx.namer)
        replacement = gast.copy_location(templates.name(name), part)
        if owner is None:
            setattr(statement, field, replacement)
        else:
            owner.elts[index] = replacement
    return hoisted + [statement]


def transform(node, ctx):
    if ctx.lacks(gast.NamedExpr):
        return node
    lowering.emitted(ctx)

    def lower(statements):
        if not any(type(s) in _VALUE_FIELDS or type(s) is gast.While for s in statements):
            return statements
        out = []
        for statement in statements:
            out.extend(_lower_statement(statement, ctx))
        return out

    for function in ast_util.functions(node):
        ast_util.transform_blocks(function, lower, into_functions=False)
    return node
