"""Lowers assignment to an item, ``x[i] = v`` and ``x[i] += v``, to ``ag__.aug_setitem``.

Tensors are immutable, so the update must be functional: the container is
rebound with the result (for Python containers, the same object, updated
in place with Python's in-place operator).  Only items of plain local names
are rewritten; a slice in the index becomes ``ag__.slice(start, stop, step)``
(``x[a:] += 5`` -> ``x = ag__.aug_setitem(x, ag__.slice(a, None, None), '+=', 5)``);
``del x[i]`` becomes ``x = ag__.del_item(x, i)`` (a staged list loses the item); several
targets (``x[0], x[1] = v, w``) and a ``for`` target (``for x[0] in xs``) go through fresh names.

Before::

    counts[k] += 1
    m[i][j] *= 2
    v[j] = 0.0

After::

    counts = ag__.aug_setitem(counts, k, '+=', 1)
    m = ag__.aug_setitem(m, i, '=', ag__.aug_setitem(m[i], j, '*=', 2))
    v = ag__.aug_setitem(v, j, '=', 0.0)

(the inner update returns the updated row, which the outer one stores:
for Python containers the same object, for tensors a new one).  Nested
items are lowered only when their indices have no effects (no calls),
since the row ``m[i]`` is read again.
"""

from __future__ import annotations

import gast

from autograph.pyct import anno, ast_util, templates

_SYMBOLS = {
    gast.Add: "+=", gast.Sub: "-=", gast.Mult: "*=", gast.MatMult: "@=", gast.Div: "/=",
    gast.FloorDiv: "//=", gast.Mod: "%=", gast.Pow: "**=", gast.LShift: "<<=", gast.RShift: ">>=",
    gast.BitAnd: "&=", gast.BitOr: "|=", gast.BitXor: "^=",
}


_EFFECTS = (gast.Call, gast.NamedExpr, gast.Await, gast.Yield, gast.YieldFrom, gast.Lambda)


def _item_chain(target):
    """``('m', [i, j])`` for ``m[i][j]``; None unless the root is a plain name."""
    indices = []
    while type(target) is gast.Subscript:
        indices.append(target.slice)
        target = target.value
    if type(target) is not gast.Name:
        return None
    indices.reverse()
    return target.id, indices


def _as_expression(index):
    """The index as an expression: a slice ``a:b`` (which only brackets can hold) becomes
    ``ag__.slice(a, b, None)``, inside a tuple too (``x[i, a:]``)."""
    if type(index) is gast.Slice:
        parts = [p if p is not None else templates.constant(None) for p in (index.lower, index.upper, index.step)]
        return templates.replace_as_expression(
            "ag__.slice(lower, upper, step)", origin=index, lower=parts[0], upper=parts[1], step=parts[2]
        )
    if type(index) is gast.Tuple:
        index.elts = [_as_expression(e) for e in index.elts]
    return index


def _update(container, indices, op, value, origin):
    """``ag__.aug_setitem(container, i, op, value)``, nested for ``m[i][j]``: the inner
    update gives the new row, which the outer one stores with ``'='``."""
    if len(indices) > 1:
        row = templates.replace_as_expression(
            "container[index]", origin=origin, container=templates.copy_tree(container),
            index=templates.copy_tree(indices[0]),
        )
        value = _update(row, indices[1:], op, value, origin)
        op = "="
    return templates.replace_as_expression(
        "ag__.aug_setitem(container, index, op, value)", origin=origin, container=container,
        index=indices[0], op=templates.constant(op), value=value,
    )


def _lower_delete(statement, local):
    """``del x[i]`` -> ``x = ag__.del_item(x, i)`` (one item of a plain local name)."""
    (target,) = statement.targets
    chain = _item_chain(target)
    if chain is None or chain[0] not in local or len(chain[1]) != 1:
        return statement
    name, (index,) = chain
    value = templates.replace_as_expression(
        "ag__.del_item(container, index)", origin=statement, container=templates.name(name),
        index=_as_expression(index),
    )
    (lowered,) = templates.replace("container = value", origin=statement, container=name, value=value)
    return lowered


def _has_item_target(target, local) -> bool:
    """``target`` (of an assignment) is or holds (unpacking) an item of a plain local name."""
    kind = type(target)
    if kind is gast.Subscript:
        chain = _item_chain(target)
        return chain is not None and chain[0] in local
    if kind in (gast.Tuple, gast.List):
        return any(_has_item_target(e, local) for e in target.elts)
    if kind is gast.Starred:
        return _has_item_target(target.value, local)
    return False


def _temporaries(target, namer, pairs):
    """``target`` with each name or item it assigns replaced by a fresh name (in place); ``pairs``
    gets ``(original target, fresh name)`` in Python's order of assignment."""
    kind = type(target)
    if kind in (gast.Tuple, gast.List):
        target.elts = [_temporaries(e, namer, pairs) for e in target.elts]
        return target
    if kind is gast.Starred:
        target.value = _temporaries(target.value, namer, pairs)
        return target
    name = namer.new("item_")
    pairs.append((target, name))
    return templates.name(name, store=True)


def _lower_unpacking(statement, local, namer):
    """``x[0], x[1] = v, w`` and ``x[0] = y[0] = v``: the value unpacked (or evaluated once) into
    fresh names, then each target assigned from its name in Python's order, the items lowered::

        item_, item__1 = ag__.unpacked((v, w), (x, x))
        x = ag__.aug_setitem(x, 0, '=', item_)
        x = ag__.aug_setitem(x, 1, '=', item__1)

    (``ag__.unpacked`` when values are written out and a store precedes one of them.)
    """
    pairs = []
    if len(statement.targets) > 1:
        first = namer.new("item_")
        pairs = [(target, first) for target in statement.targets]
        unpack = templates.replace("name = value", origin=statement, name=first, value=statement.value)
    else:
        (target,) = statement.targets
        value = statement.value
        stored = _stored_containers(target, value, local)
        if stored is not None:  # each value read before the stores: one a store changes is refused
            value = templates.replace_as_expression("ag__.unpacked(value, containers)", origin=statement,
                                                    value=value, containers=stored)
        temporaries = _temporaries(target, namer, pairs)
        unpack = templates.replace("target = value", origin=statement, target=temporaries, value=value)
    lowered = list(unpack)
    for target, name in pairs:
        (assign,) = templates.replace("target = name", origin=statement, target=target, name=templates.name(name))
        lowered.append(_lower(assign, local, namer))
    return lowered


def _stored_containers(target, value, local):
    """For ``m[0], m[1] = m[1], m[0]`` (as many values as targets, written out): the tuple of the
    local name each target stores into (``None`` for another target), when a store precedes a value's
    own; else None.  ``ag__.unpacked`` checks that no value is a numpy view of an array an earlier
    store changes (Python would read the changed items)."""
    if type(target) not in (gast.Tuple, gast.List) or type(value) not in (gast.Tuple, gast.List) or (
            len(target.elts) != len(value.elts)) or any(type(e) is gast.Starred for e in target.elts + value.elts):
        return None
    roots = []
    for element in target.elts:
        chain = _item_chain(element) if type(element) is gast.Subscript else None
        roots.append(chain[0] if chain is not None and chain[0] in local else None)
    if all(root is None for root in roots[:-1]):
        return None
    return templates.name_tuple([r if r is not None else templates.constant(None) for r in roots])


def _lower_for_target(statement, local, namer):
    """``for x[0] in xs:`` -> ``for item_ in xs:`` storing ``x[0] = item_`` first in the body."""
    name = namer.new("item_")
    (assign,) = templates.replace("target = name", origin=statement, target=statement.target,
                                  name=templates.name(name))
    statement.target = templates.name(name, store=True)
    lowered = _lower(assign, local, namer)
    statement.body = (lowered if isinstance(lowered, list) else [lowered]) + statement.body
    return statement


def _lower(statement, local, namer):
    kind = type(statement)
    if kind is gast.For and _has_item_target(statement.target, local):
        return _lower_for_target(statement, local, namer)
    if kind is gast.Delete and len(statement.targets) == 1 and type(statement.targets[0]) is gast.Subscript:
        return _lower_delete(statement, local)
    if kind is gast.Assign and (len(statement.targets) > 1 or type(statement.targets[0]) in (gast.Tuple, gast.List)) \
            and any(_has_item_target(t, local) for t in statement.targets):
        return _lower_unpacking(statement, local, namer)
    if kind is gast.Assign and len(statement.targets) == 1 and type(statement.targets[0]) is gast.Subscript:
        target, op = statement.targets[0], "="
    elif kind is gast.AugAssign:
        target, op = statement.target, _SYMBOLS[type(statement.op)]
    else:
        return statement
    chain = _item_chain(target)
    if chain is None or chain[0] not in local or not chain[1]:
        return statement
    name, indices = chain
    if len(indices) > 1 and any(ast_util.contains_type(index, _EFFECTS) for index in indices):
        return statement  # the nested form evaluates the outer indices twice
    indices = [_as_expression(index) for index in indices]
    value = _update(templates.name(name), indices, op, statement.value, statement)
    (lowered,) = templates.replace("container = value", origin=statement, container=name, value=value)
    return lowered


def _flat(lowered):
    out = []
    for item in lowered:
        out.extend(item if isinstance(item, list) else [item])
    return out


def transform(node, ctx):
    if ctx.lacks(gast.Subscript):
        return node
    for function in ast_util.functions(node):
        local = anno.get(function, anno.SCOPE).locals
        ast_util.transform_blocks(
            function, lambda statements: _flat([_lower(s, local, ctx.namer) for s in statements]),
            into_functions=False,
        )
    return node
