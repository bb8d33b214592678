"""Lowers list comprehensions and generator expressions to ``ag__.list_comp``/``generator_exp``.

Before::

    def f(x):
        return sum(v * v for v in x if v > 0)

After::

    def f(x):
        return sum(ag__.generator_exp(x, lambda v: v * v, lambda v: v > 0))

The lambdas are the comprehension's own scope (its target is their
parameter, and names it reads are read when it runs, as in Python); the
first iterable is evaluated where the comprehension stands, as in Python.
Over a tensor the operator stages a loop (``runtime/operators/comprehensions.py``).

Only one ``for``, without a walrus (which binds in the enclosing scope,
not a lambda's), ``await``, or a lambda or generator expression in it
(which could see the target's later values: Python's comprehension has one
variable for all items, the lowered one a variable per item), is lowered; an unpacking target (``for i, v
in enumerate(x)``) is unpacked by Python's own assignment, in a one-item
comprehension inside the lambdas (``lambda item_: [i * v for i, v in
(item_,)][0]``).  Other
comprehensions (set and dict comprehensions too) stay as written, their
first iterable wrapped in ``ag__.comprehension_iterable``, which refuses a
tensor with a clear error::

    {k: v for k, v in ag__.comprehension_iterable(items, 'the dict comprehension')}
"""

from __future__ import annotations

import gast

from autograph.pyct import anno, ast_util, templates

_OPERATORS = {gast.ListComp: "list_comp", gast.GeneratorExp: "generator_exp"}
_CONSTRUCTS = {gast.ListComp: "the list comprehension", gast.GeneratorExp: "the generator expression",
               gast.SetComp: "the set comprehension", gast.DictComp: "the dict comprehension"}


def _lowerable(node) -> bool:
    if type(node) not in _OPERATORS or len(node.generators) != 1:
        return False
    generator = node.generators[0]
    if generator.is_async:
        return False
    # A lambda or generator inside could outlive the item and see the target's later values
    # (one variable for the whole comprehension, in Python): not with one lambda call per item.
    unsafe = (gast.NamedExpr, gast.Await, gast.Lambda, gast.GeneratorExp)
    return not any(ast_util.contains_type(n, unsafe) for n in [node.elt, *generator.ifs])


def _lambda(param, body, origin, target=None):
    """``lambda param: body``; with an unpacking ``target``, ``body`` evaluated where Python's own
    assignment to it unpacked the item: ``lambda item_: [body for target in (item_,)][0]``."""
    if target is not None:
        body = templates.replace_as_expression(
            "[body for target in (param,)][0]", origin=origin, body=body, target=templates.copy_tree(target),
            param=param,
        )
    return templates.replace_as_expression("lambda param: body", origin=origin, param=param, body=body)


def _python_filter(test, kind):
    """A filter with a walrus, left as written: ``ag__.python_condition`` refuses a tensor there."""
    targets = sorted({n.target.id for n in gast.walk(test) if type(n) is gast.NamedExpr})
    if not targets:
        return test
    return templates.replace_as_expression(
        "ag__.python_condition(test, construct, targets)", origin=test, test=test,
        construct=templates.constant(f"the filter of {_CONSTRUCTS[kind]}"), targets=templates.str_tuple(targets),
    )


def _lower(node, namer, consumed):
    kind = type(node)
    if kind not in _CONSTRUCTS:
        return node
    generator = node.generators[0]
    if not _lowerable(node):
        if not generator.is_async:
            generator.iter = templates.replace_as_expression(
                "ag__.comprehension_iterable(iter_, construct)", origin=generator.iter, iter_=generator.iter,
                construct=templates.constant(_CONSTRUCTS[kind]),
            )
        for clause in node.generators:
            clause.ifs = [_python_filter(test, kind) for test in clause.ifs]
        return node
    target = generator.target
    param, unpacked = (target.id, None) if type(target) is gast.Name else (namer.new("item_"), target)
    if generator.ifs:
        test = generator.ifs[0] if len(generator.ifs) == 1 else gast.BoolOp(op=gast.And(), values=generator.ifs)
        cond = _lambda(param, test, generator.ifs[0], unpacked)
    else:
        cond = templates.constant(None)
    call = templates.replace_as_expression(
        f"ag__.{_OPERATORS[kind]}(iter_, elt, cond)", origin=node, iter_=generator.iter,
        elt=_lambda(param, node.elt, node.elt, unpacked), cond=cond,
    )
    # list_comp calls its lambdas at once (analyses read them where they stand, as the
    # comprehension's reads), and so does a builtin consuming a generator (sum(v * i for v in x));
    # another generator's may run later: they stay nested scopes.
    if kind is gast.ListComp or id(node) in consumed:
        for function in call.args[1:]:
            if type(function) is gast.Lambda:
                anno.set(function, anno.IN_PLACE, True)
    return call


# Builtins that exhaust an iterable argument before they return.
_CONSUMERS = frozenset({"sum", "any", "all", "max", "min", "list", "tuple", "sorted", "set", "frozenset", "dict"})


def _consumed_at_once(function):
    """The ids of the generator expressions passed to a consuming builtin (``sum(... for ...)``)
    whose name the function does not bind (so it is the builtin or a global of that name)."""
    bound = {n.id for n in gast.walk(function) if type(n) is gast.Name and type(n.ctx) is not gast.Load}
    return {
        id(arg) for call in gast.walk(function)
        if type(call) is gast.Call and type(call.func) is gast.Name and call.func.id in _CONSUMERS
        and call.func.id not in bound
        for arg in call.args if type(arg) is gast.GeneratorExp
    }


def transform(node, ctx):
    if ctx.lacks(gast.ListComp, gast.GeneratorExp, gast.SetComp, gast.DictComp):
        return node
    if ctx.kinds is not None:
        ctx.kinds |= {gast.Call, gast.Attribute, gast.Name, gast.Lambda, gast.Constant}

    consumed = _consumed_at_once(node)

    def lower(inner):
        return _lower(inner, ctx.namer, consumed)

    if type(node) is gast.Lambda:
        node.body = lower(ast_util.rewrite(gast.Expr(value=node.body), lower).value)
        return node
    ast_util.rewrite_body(node, lower)
    return node
