"""Comprehensions and the reductions of what they make: Python's, or staged over a tensor.

The ``comprehensions`` converter turns ``[elt for v in it if c]`` into
``ag__.list_comp(it, lambda v: elt, lambda v: c)`` and ``(elt for v in it
if c)`` into ``ag__.generator_exp(...)`` (``None`` without a filter; the
lambdas are the comprehension's own scope, as in Python).

* Over a Python iterable they are Python's: a list, or a lazy generator
  (``iter(it)`` called at once, as Python does).  A filter that gives a
  tensor for an item of a Python iterable makes a list comprehension's rest
  staged items appended under a tensor ``if`` (a staged list); a generator
  refuses it, since it must stay lazy.
* Over a staged iterable (a tensor: its rows; ``range`` with a tensor bound,
  ``enumerate``/``zip`` of them) both are a tensor ``for`` loop appending
  ``elt`` to a staged list (under a tensor ``if`` with a filter): one tensor
  of the stacked items, which Python's operators treat as a list.
* ``sum``/``any``/``all`` of a staged list or a tensor (``ag__.sum``, ...
  through ``py_builtins``) are a tensor loop over it adding (``sum``:
  left to right, as Python does, so the dtype and the rounding are
  Python's) or testing each item's truth (``any``/``all``: items must be
  scalars, as ``bool`` of a larger array is an error in Python).

An iterable is staged when a backend has a ``for_stmt`` overload for it
(``dispatch.handler_for``: for the numpy runtime, ``iterables.is_staged``).

``comprehension_iterable(it, construct)`` wraps the first iterable of the
comprehensions that are left as written (set and dict comprehensions, several
``for`` clauses, a walrus): ``it`` itself, or a
``TracingError`` naming the comprehension for a staged one.
"""

from __future__ import annotations

from autograph.runtime import ops
from autograph.runtime.core import dtypes
from autograph.runtime.core.location import construct_at, quoted_user_line, user_location_text
from autograph.runtime.core.tensor import Tensor, is_weak, weak_number
from autograph.runtime.errors import TracingError
from autograph.runtime.operators import dispatch
from autograph.runtime.operators.data_structures import list_append
from autograph.runtime.operators.if_statements import if_stmt, no_op
from autograph.runtime.operators.loop_statements import for_stmt
from autograph.runtime.ops.list_operators import StagedList, check_items_readable, describe

_LABEL = "comprehension"  # the staged list's name in messages


def _is_staged(iterable) -> bool:
    """Whether a backend stages a ``for`` loop over ``iterable``."""
    return dispatch.handler_for("for_stmt", iterable) is not None


def _iterate_name(fn) -> str:
    code = getattr(fn, "__code__", None)
    return code.co_varnames[0] if code is not None and code.co_argcount else "item"


def _staged_map(iterable, elt, cond, comprehension=None):
    """``comprehension`` + ``[elt(v) for v in iterable if cond(v)]`` with the conditions staged
    (tensor ``if``s) and, for a staged iterable, the loop too (a tensor ``for``).  (The list's
    variable is named as the messages call it: the state checks compare the two.)"""
    comprehension = [] if comprehension is None else comprehension

    def get_state():
        return (comprehension,)

    def set_state(values):
        nonlocal comprehension
        (comprehension,) = values

    def body(item):
        nonlocal comprehension

        def append():
            nonlocal comprehension
            comprehension = list_append(comprehension, elt(item))

        if cond is None:
            append()
        else:
            if_stmt(cond(item), append, no_op, get_state, set_state, (_LABEL,), 1)

    names = (_LABEL,)
    for_stmt(iterable, None, body, get_state, set_state, names, {"iterate_names": _iterate_name(elt)})
    if cond is None and isinstance(iterable, Tensor):
        return _with_length(comprehension, iterable.shape[0] if iterable.shape else None)
    return comprehension


def _with_length(staged, length):
    """``staged``, a list of one item per row of a tensor of static ``length``, with that static length
    (the loop that made it gives it none), so that ``sum()`` and ``len()`` know it."""
    shape = staged.shape if isinstance(staged, StagedList) else None
    if length is None or shape is None or shape[0] is not None or None in shape[1:]:
        return staged
    fixed = ops.reshape(staged, (length, *shape[1:]))
    if fixed.weak != staged.weak:
        return staged
    return StagedList.mark(fixed, staged.label, staged.numbers)


def list_comp(iterable, elt, cond):
    """``[elt(v) for v in iterable if cond(v)]``."""
    if _is_staged(iterable):
        return _staged_map(iterable, elt, cond)
    if cond is None:
        return [elt(v) for v in iterable]
    out = []
    iterator = iter(iterable)
    for v in iterator:
        keep = cond(v)
        if isinstance(keep, Tensor):  # a tensor filter: this and the remaining items staged
            remaining = [v, *iterator]
            return _staged_map(remaining, elt, cond, out)
        if keep:
            out.append(elt(v))
    return out


def generator_exp(iterable, elt, cond):
    """``(elt(v) for v in iterable if cond(v))``: lazy over a Python iterable, staged over a tensor."""
    if _is_staged(iterable):
        return _staged_map(iterable, elt, cond)
    iterator = iter(iterable)
    if cond is None:
        return (elt(v) for v in iterator)
    where = construct_at("the generator expression")
    return _filtered(iterator, elt, cond, where)


def _filtered(iterator, elt, cond, where):
    for v in iterator:
        keep = cond(v)
        if isinstance(keep, Tensor):
            raise TracingError(
                f"the filter (`if ...`) of {where} is a tensor: a generator cannot stage which items it "
                "yields. Make it a list comprehension ([...]), whose items a tensor if can stage, or "
                "compute with rt.where."
            )
        if keep:
            yield elt(v)


def comprehension_iterable(iterable, construct):
    """The first iterable of a comprehension left as written: itself, or an error if it is staged."""
    if not _is_staged(iterable):
        return iterable
    what = f"the tensor {iterable.name}" if isinstance(iterable, Tensor) else f"a staged {type(iterable).__name__}"
    raise TracingError(
        f"{construct_at(construct)} iterates over {what}, which only a list comprehension or a generator "
        "expression with one `for` (`[f(v) for v in x if c]`) can stage. Write it as a "
        "for loop appending to a list, or use a vectorized op (rt.* on the whole tensor)."
    )


def _fold(iterable, step, start):
    """``total = start; for v in iterable: total = step(total, v)`` as a tensor loop."""
    total = start

    def get_state():
        return (total,)

    def set_state(values):
        nonlocal total
        (total,) = values

    def body(item):
        nonlocal total
        total = step(total, item)

    for_stmt(iterable, None, body, get_state, set_state, ("total",), {"iterate_names": "item"})
    return total


def sum_(iterable, start):
    """``sum(iterable, start)`` of a staged iterable: ``start + v0 + v1 + ...``, left to right.

    With a Python number ``start`` (``0`` by default) Python's answer is that
    number for an empty iterable and a numpy value otherwise; the graph's one
    dtype is the items'.  That is Python's value, as NEP 50 joins the two,
    unless the items' dtype wraps where a Python int does not (bool, unsigned,
    8/16-bit: ``dtypes.wraps``): ``sum(v) - 1`` of an empty uint32
    ``v`` is -1 in Python.  Then the sum is refused when tracing, unless its
    length is known.  (A staged list holding Python ints beside such values:
    ``list_operators.check_items_readable``.)  The sum of a tensor of static
    length 0 is ``start`` itself, whatever the dtypes.
    """
    check_items_readable(iterable)
    length = iterable.shape[0] if isinstance(iterable, Tensor) and iterable.shape else None
    if length == 0:
        return start
    if is_weak(start) and isinstance(iterable, Tensor) and not iterable.weak and iterable.shape:
        total = dtypes.result_type(iterable.dtype, weak_number(start))
        if dtypes.wraps(total) and length is None:
            _refuse_sum(iterable, total)
    return _fold(iterable, lambda acc, v: acc + v, start)


def _refuse_sum(iterable, total):
    what = describe(iterable) if isinstance(iterable, StagedList) else f"the tensor {iterable.name}"
    raise TracingError(
        f"sum() at {user_location_text()} ({quoted_user_line() or 'this call'}) of {what}: its dtype would "
        f"depend on its length: Python's sum of no items is the start, a Python int, and of {total.name} "
        f"items a {total.name}, whose arithmetic wraps where a Python int's does not. Cast the items (or the start: sum(xs, np.{total.name}(0))) to one dtype, or to a "
        f"wide one (int64), first."
    )


def truth(iterable, which):
    """``any``/``all`` of a staged iterable (of scalars)."""
    shape = getattr(iterable, "shape", None)
    if shape is not None and (len(shape) != 1):
        raise TracingError(
            f"{construct_at(which + '()')} of a tensor whose items are arrays (shape {shape}): the truth of "
            "an array of more than one element is ambiguous (Python raises ValueError). Use "
            f"rt.reduce_{which}(x) on the whole tensor."
        )
    if not isinstance(iterable, Tensor):  # range() with a tensor bound, ...: its items first
        return truth(_staged_map(iterable, lambda v: v, None), which)
    values = iterable if iterable.dtype == dtypes.bool_ else ops.not_equal(iterable, 0)
    return ops.reduce_any(values) if which == "any" else ops.reduce_all(values)


def any_(iterable):
    """``any(iterable)`` of a staged iterable (of scalars)."""
    return truth(iterable, "any")


def all_(iterable):
    """``all(iterable)`` of a staged iterable (of scalars)."""
    return truth(iterable, "all")
