"""Lowers list mutation to ``ag__.list_append`` / ``ag__.list_extend`` / ``ag__.list_pop``.

The receiver is rebound with the result, which makes it a loop variable, so
the runtime can stage the list when the loop becomes a graph loop.  Only
plain local names are rewritten (rebinding a global or a closure variable,
or an attribute, would change the program), and only names appended to or
popped from inside a loop or an ``if`` somewhere in the function: those may
be staged lists (one tensor of their elements) after it, so every append
and pop of them, before or after, goes through the operators.  Lists only
changed in straight-line code keep their method calls.

Before::

    for x in xs:
        out.append(x * 2)
        out.extend(pair)
        last = stack.pop()

After::

    for x in xs:
        out = ag__.list_append(out, x * 2)
        out = ag__.list_extend(out, pair)
        (stack, last) = ag__.list_pop(stack)

(a ``stack.pop()`` whose value is unused becomes
``stack = ag__.list_pop(stack)[0]``).  A pop nested in an expression is
taken out first when nothing with effects runs before it in that statement::

    out.append(stack.pop())   ->   (stack, popped) = ag__.list_pop(stack)
                                   out = ag__.list_append(out, popped)
"""

from __future__ import annotations

import gast

from autograph.pyct import anno, ast_util, templates


METHODS = ("append", "extend", "pop")
"""The list methods lowered here (the unsupported pass marks functions that call one: "list_method")."""


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


def _pure(node) -> bool:
    """True for expressions whose evaluation has no effects: names, constants, ``a.b``."""
    kind = type(node)
    while kind is gast.Attribute:
        node = node.value
        kind = type(node)
    return kind in (gast.Name, gast.Constant)


def _first_effect_path(node):
    """The chain of nodes from ``node`` down to its first evaluated call, if all that
    Python evaluates before that call is pure; None otherwise (or if there is no call)."""
    kind = type(node)
    if kind is gast.Call:
        if not _pure(node.func):
            return None
        for arg in node.args:
            if not _pure(arg):
                inner = _first_effect_path(arg)
                return None if inner is None else [node] + inner
        return [node]
    if kind is gast.Expr:
        ordered = [node.value]
    elif kind is gast.Assign:
        ordered = [node.value]
    elif kind is gast.AugAssign and type(node.target) is gast.Name:
        ordered = [node.value]  # `x += v`: loads x (pure), then evaluates v
    elif kind is gast.BinOp:
        ordered = [node.left, node.right]
    elif kind is gast.Subscript:
        ordered = [node.value, node.slice]
    elif kind is gast.Tuple or kind is gast.List:
        ordered = node.elts
    else:
        return None
    for child in ordered:
        if not _pure(child):
            inner = _first_effect_path(child)
            return None if inner is None else [node] + inner
    return None


def _hoist_pop(statement, local, namer):
    """``[(stack, popped) = ag__.list_pop(stack), statement']`` if the first call ``statement``
    evaluates is ``stack.pop()`` (pure before it) nested in a larger expression; else None."""
    if type(statement) not in (gast.Expr, gast.Assign, gast.AugAssign):
        return None
    path = _first_effect_path(statement)
    if path is None:
        return None
    whole = len(path) < 3 and (
        type(statement) is gast.Expr
        or (type(statement) is gast.Assign and len(statement.targets) == 1 and type(statement.targets[0]) is gast.Name)
    )
    if whole:
        return None  # the pop is the whole statement, or the whole value assigned to a name: _lower does it
    call, parent = path[-1], path[-2]
    receiver = _method_call(call, "pop")
    if receiver not in local or len(call.args) > 1:
        return None
    targets = statement.targets if type(statement) is gast.Assign else [getattr(statement, "target", None)]
    if any(type(n) is gast.Name and n.id == receiver for t in targets if t is not None for n in gast.walk(t)):
        return None
    popped = namer.new("popped")
    if call.args:
        hoisted = templates.replace(
            "(target, value) = ag__.list_pop(target, index)", origin=statement, target=receiver, value=popped,
            index=call.args[0],
        )
    else:
        hoisted = templates.replace(
            "(target, value) = ag__.list_pop(target)", origin=statement, target=receiver, value=popped
        )
    replacement = gast.copy_location(templates.name(popped), call)
    for field in parent._fields:
        value = getattr(parent, field)
        if value is call:
            setattr(parent, field, replacement)
        elif type(value) is list:
            value[:] = [replacement if item is call else item for item in value]
    return hoisted + [statement]


def _lower(statement, local, namer=None):
    if namer is not None:
        hoisted = _hoist_pop(statement, local, namer)
        if hoisted is not None:
            return hoisted[:-1] + _lower(hoisted[-1], local)
    kind = type(statement)
    if kind is gast.Expr:
        call = statement.value
        for method in ("append", "extend"):
            receiver = _method_call(call, method)
            if receiver in local and len(call.args) == 1:
                return templates.replace(
                    f"target = ag__.list_{method}(target, item)", origin=statement, target=receiver,
                    item=call.args[0],
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


def _receivers_in_control_flow(statements, local, inside=False) -> set:
    """Local names appended to or popped from inside a loop or an ``if`` of ``statements``."""
    found = set()
    for statement in statements:
        kind = type(statement)
        if kind in ast_util.SCOPES:
            continue
        if inside:  # the walk covers the nested blocks too
            for node in ast_util.walk(statement):
                for method in METHODS:
                    receiver = _method_call(node, method)
                    if receiver in local:
                        found.add(receiver)
            continue
        nested = kind in ast_util.LOOPS or kind is gast.If
        for owner, field in ast_util.child_blocks(statement):
            found |= _receivers_in_control_flow(getattr(owner, field), local, nested)
    return found


def _lower_block(statements, lists, namer):
    out = []
    for statement in statements:
        if type(statement) in ast_util.SCOPES:
            out.append(statement)
            continue
        for owner, field in ast_util.child_blocks(statement):
            setattr(owner, field, _lower_block(getattr(owner, field), lists, namer))
        out.extend(_lower(statement, lists, namer))
    return out


def transform(node, ctx):
    if ctx.lacks("list_method"):
        return node
    for function in ast_util.functions(node):
        local = anno.get(function, anno.SCOPE).locals
        lists = _receivers_in_control_flow(function.body, local)
        if lists:
            function.body = _lower_block(function.body, lists, ctx.namer)
    return node
