"""Lowers list mutation inside loops to ``ag__.list_append`` / ``ag__.list_pop``.

The receiver is rebound with the result, which makes it a loop variable, so
the runtime can stage the list when the loop becomes a graph loop.  Only
plain local names are rewritten (rebinding a global or a closure variable,
or an attribute, would change the program).

Before::

    for x in xs:
        out.append(x * 2)
        last = stack.pop()

After::

    for x in xs:
        out = ag__.list_append(out, x * 2)
        (stack, last) = ag__.list_pop(stack)

(a ``stack.pop()`` whose value is unused becomes
``stack = ag__.list_pop(stack)[0]``).
"""

from __future__ import annotations

import gast

from autograph import anno, ast_util, templates


def _method_call(node, method):
    """``(receiver_name, call)`` if ``node`` is ``name.method(...)`` without keywords/stars."""
    if type(node) is not gast.Call or node.keywords:
        return None
    func = node.func
    if type(func) is not gast.Attribute or func.attr != method or type(func.value) is not gast.Name:
        return None
    if any(type(a) is gast.Starred for a in node.args):
        return None
    return func.value.id


def _lower(statement, local):
    kind = type(statement)
    if kind is gast.Expr:
        call = statement.value
        receiver = _method_call(call, "append")
        if receiver in local and len(call.args) == 1:
            return templates.replace(
                "target = ag__.list_append(target, item)", origin=statement, target=receiver, item=call.args[0]
            )
        receiver = _method_call(call, "pop")
        if receiver in local and len(call.args) <= 1:
            if call.args:
                return templates.replace(
                    "target = ag__.list_pop(target, index)[0]", origin=statement, target=receiver, index=call.args[0]
                )
            return templates.replace("target = ag__.list_pop(target)[0]", origin=statement, target=receiver)
    elif kind is gast.Assign and len(statement.targets) == 1 and type(statement.targets[0]) is gast.Name:
        receiver = _method_call(statement.value, "pop")
        if receiver in local and len(statement.value.args) <= 1 and statement.targets[0].id != receiver:
            args = statement.value.args
            if args:
                return templates.replace(
                    "(target, value) = ag__.list_pop(target, index)", origin=statement, target=receiver,
                    value=statement.targets[0].id, index=args[0],
                )
            return templates.replace(
                "(target, value) = ag__.list_pop(target)", origin=statement, target=receiver,
                value=statement.targets[0].id,
            )
    return [statement]


def _lower_block(statements, local, in_loop):
    out = []
    for statement in statements:
        kind = type(statement)
        if kind in ast_util.SCOPES:
            out.append(statement)
            continue
        inner_loop = in_loop or kind in ast_util.LOOPS
        for owner, field in ast_util.child_blocks(statement):
            setattr(owner, field, _lower_block(getattr(owner, field), local, inner_loop))
        out.extend(_lower(statement, local) if in_loop else [statement])
    return out


def transform(node, ctx):
    for function in ast_util.functions(node):
        scope = anno.get(function, anno.SCOPE)
        local = scope.locals
        function.body = _lower_block(function.body, local, False)
    return node
