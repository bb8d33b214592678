"""The list and subscript operators: Python paths beside the graph paths of staged lists.

They exist so that the runtime can later stage these mutations in a graph
(a list appended to in a tensor loop becomes a staged list): generated code
rebinds the receiver, which makes it a loop variable of the enclosing loop::

    l.append(x)        ->  l = ag__.list_append(l, x)
    v = l.pop()        ->  (l, v) = ag__.list_pop(l)
    x[i] += v          ->  x = ag__.aug_setitem(x, i, '+=', v)
    del x[i]           ->  x = ag__.del_item(x, i)

On Python values they mutate in place and return the same object.  For a
receiver that is not plain Python the overload registry
(``operators/dispatch.py``) gives the handler of each; the numpy runtime's
``Tensor`` registers ``staged_append``/``staged_extend``/``staged_pop`` (a
staged list: one tensor of stacked elements, a ``StagedList`` of
``ops/list_operators.py`` whose methods they call),
``staged_setitem`` (``ops.indexing.setitem``) and ``staged_del_item`` here.
"""

from __future__ import annotations

import operator

import numpy as np

from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import construct_at
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.core.undefined import Undefined
from autograph.runtime.errors import TracingError
from autograph.runtime.operators import aliases, dispatch
from autograph.runtime.operators.iterables import is_tensor
from autograph.runtime.ops import indexing, tensor_operators
from autograph.runtime.ops.list_operators import StagedList
from autograph.runtime.tracing import locked_arrays, staged_list

_INPLACE = {
    "+=": operator.iadd,
    "-=": operator.isub,
    "*=": operator.imul,
    "@=": operator.imatmul,
    "/=": operator.itruediv,
    "//=": operator.ifloordiv,
    "%=": operator.imod,
    "**=": operator.ipow,
    "<<=": operator.ilshift,
    ">>=": operator.irshift,
    "&=": operator.iand,
    "|=": operator.ior,
    "^=": operator.ixor,
}


def list_append(target, item):
    """``target.append(item)``; returns the (possibly new, if staged) list."""
    if type(target) is list:
        target.append(item)
        return target
    staged = dispatch.handler_for("list_append", target)
    if staged is not None:
        return staged(target, item)
    target.append(item)
    return target


def list_extend(target, items):
    """``target.extend(items)``; returns the (possibly new, if staged) list.

    A Python list extended by a tensor gets its rows, one item each, when
    their number is static; else it becomes a staged list (graph path).
    """
    if type(target) is list:
        if not isinstance(items, Tensor):
            target.extend(items)
            return target
        if items.shape and items.shape[0] is not None:
            target.extend(items[i] for i in range(items.shape[0]))
            return target
        return staged_extend(target, items)
    staged = dispatch.handler_for("list_extend", target)
    if staged is not None:
        return staged(target, items)
    target.extend(items)
    return target


def list_pop(target, index=None):
    """``target.pop(index)``; returns ``(list, popped_item)``."""
    if type(target) is not list:
        staged = dispatch.handler_for("list_pop", target)
        if staged is not None:
            return staged(target, index)
    if index is None:
        return target, target.pop()
    return target, target.pop(index)


def staged_append(target, item):
    """``l.append(x)`` on a staged list (a tensor of stacked elements)."""
    return StagedList.appended(target, item)  # on the class: a plain tensor receiver is the list of its rows


def staged_extend(target, items):
    """``l.extend(xs)`` on a staged list (or a Python list extended by rows of an unknown number,
    which is staged here): the items of ``xs`` (a list, or a tensor's rows) appended."""
    if type(target) is list:
        target = staged_list.stack(target, like=items, label="list", where=construct_at("the extend"))
    return StagedList.extended(target, items if isinstance(items, Tensor) else list(items))


def staged_pop(target, index=None):
    """``l.pop(i)`` on a staged list: ``(rest, item)``."""
    return StagedList.popped(target, index)


_PLAIN_CONTAINERS = (list, dict)
_PLAIN_KEYS = frozenset({int, str})  # never staged by any backend


def aug_setitem(target, index, op, value):
    """``target[index] op value`` (``op`` like ``'+='``, or ``'='``); returns the updated container.

    Python containers are updated in place, with Python's in-place operator; a staged receiver
    goes to its handler (a tensor: ``indexing.setitem``).  A tensor key of a dict is an
    ``ag.TracingError``.
    """
    if type(index) in _PLAIN_KEYS and type(target) in _PLAIN_CONTAINERS:  # (the common case, kept cheap)
        target[index] = value if op == "=" else _INPLACE[op](target[index], value)
        return target
    if type(target) not in _PLAIN_CONTAINERS:
        staged = dispatch.handler_for("aug_setitem", target)
        if staged is None and isinstance(target, np.ndarray):
            tensor = _tensor_in(index) if not is_tensor(value) else value
            if tensor is not None:
                # a numpy array is a value (README): a tensor stored in it gives a tensor, bound to the name
                _refuse_array_alias(target)
                staged = dispatch.handler_for("aug_setitem", tensor)
            elif locked_arrays.is_locked(target) and current_graph() is not None:
                # an array the traced code must not change in place (made before a tensor if or loop
                # whose body stores into it): the store goes through the graph, as a tensor's would
                _refuse_array_alias(target)
                staged = staged_setitem
        if staged is not None:
            return staged(target, index, op, value)
    if isinstance(target, dict) and (isinstance(index, Tensor) or dispatch.handler_for("aug_setitem", index)):
        raise TracingError(
            f"{indexing.user_statement()}: a symbolic tensor used as a key of a dict; the dict "
            "would be keyed by the tensor object (its identity), never by the value the graph computes. "
            "Key the dict by a Python value, or keep the values in a tensor indexed by the key."
        )
    if op == "=":
        target[index] = value
    else:
        target[index] = _INPLACE[op](target[index], value)
    return target


def _tensor_in(index):
    """A tensor some backend stages in ``index`` (itself, a bound of a slice, an item of a tuple), or None."""
    if is_tensor(index):
        return index
    if type(index) is slice:
        return next((b for b in (index.start, index.stop, index.step) if is_tensor(b)), None)
    if type(index) is tuple:
        return next((t for t in map(_tensor_in, index) if t is not None), None)
    return None


def _refuse_array_alias(array):
    """A tensor stored into a numpy array makes the name a tensor; another name for the array (or a
    view of it) would keep the array without the store, where Python's shows it."""
    alias = aliases.array_alias(array)
    if alias is not None:
        raise TracingError(
            f"{indexing.user_statement()}: storing a tensor into a numpy array makes the name a tensor (the "
            f"array gets no symbolic value), but '{alias}' also reaches the array, which Python would show "
            "changed. Store through one name only: make the other one after the stores, or use a tensor "
            "(rt.zeros(...)) from the start."
        )


def del_item(target, index):
    """``del target[index]``; returns the container (a staged list: a new one, without the item)."""
    if type(target) not in (list, dict):
        staged = dispatch.handler_for("del_item", target)
        if staged is not None:
            return staged(target, index)
    del target[index]
    return target


def staged_setitem(target, index, op, value):
    """``t[index] op value`` on a tensor: a new tensor, as tensors are immutable (``indexing.setitem``:
    numpy's semantics, bounds checked when the graph runs), bound to the name stored through; refused
    where another name would see the store in Python (``refuse_store_alias``)."""
    if isinstance(target, Tensor):  # (a numpy array given a tensor: its own check, _refuse_array_alias)
        refuse_store_alias(target)
    return indexing.setitem(target, index, op, value)


def unpacked(values, containers):
    """``values`` (a tuple written out: ``m[1], m[0]``) for targets storing, in order, into
    ``containers`` (a target's local container, or None): a tensor value that is a numpy view of an
    earlier target's container is refused, since Python reads it after that store changed it (swapping
    two rows of an array this way copies one row into both)."""
    for value in values:
        if isinstance(value, Tensor):
            break
    else:
        return values  # (Python values: the common case, kept cheap)
    for j, value in enumerate(values):
        if not isinstance(value, Tensor):
            continue
        for k, container in enumerate(containers[:j]):
            if isinstance(container, Tensor) and aliases.is_view_of(value, container):
                raise TracingError(
                    f"{indexing.user_statement()}: value "
                    f"{j + 1} is a numpy view of the array that target {k + 1} stores into first, so Python reads "
                    "it changed (swapping two rows this way copies one row into both), where the graph reads the "
                    "old values. Copy the values first (`m[0], m[1] = m[1].copy(), m[0].copy()` swaps the rows)."
                )
    return values


def refuse_store_alias(target):
    """A store into the array the tensor ``target`` stands for (``t[i] = v``, ``t += v``) changes it in
    place in numpy, which every other name for the array, or for the array it is a view of, shows; the
    tensor the store makes is bound to one name only."""
    alias = aliases.tensor_alias(target)
    if alias is not None:
        raise TracingError(
            f"{indexing.user_statement()}: this store changes "
            f"its target in place in Python, and {alias}, so Python shows the change through both names; the "
            "graph gives the new value to the name stored through only. Store through one name (assign the "
            "other from it afterwards), or copy first (`y = x.copy()`) where the other must keep the old values."
        )


def staged_del_item(target, index):
    """``del l[i]`` on a staged list: the list without the item; on another tensor, numpy's refusal."""
    if isinstance(target, StagedList):
        return target.without(index)
    raise ValueError(f"cannot delete array elements: {construct_at('`del x[i]`')} deletes from the "
                     f"tensor {target.name}, an array; build the new array with rt.concat of slices")


def getattr_(owner, attr):
    """``owner.attr`` for ``get_state``, or ``Undefined(attr)`` where it is not set (yet)."""
    try:
        return getattr(owner, attr)
    except AttributeError:
        return Undefined(attr)


def setattr_(owner, attr, value):
    """``owner.attr = value`` for ``set_state``; an ``Undefined`` value deletes the attribute again."""
    if type(value) is Undefined:
        try:
            delattr(owner, attr)
        except AttributeError:
            pass  # it was not set: nothing to undo
        return
    setattr(owner, attr, value)


dispatch.register("list_append", is_tensor, staged_append, backend="numpy")
dispatch.register("list_extend", is_tensor, staged_extend, backend="numpy")
dispatch.register("list_pop", is_tensor, staged_pop, backend="numpy")
dispatch.register("aug_setitem", is_tensor, staged_setitem, backend="numpy")
dispatch.register("del_item", is_tensor, staged_del_item, backend="numpy")
tensor_operators.register_store_check(refuse_store_alias)
