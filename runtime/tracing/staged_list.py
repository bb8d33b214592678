"""Staged lists: Python lists appended to in a tensor loop, kept as one stacked tensor.

A tensor loop runs an unknown number of times, so a list it appends to
cannot stay a Python list of tensors.  Instead the list is *staged*: it is
carried through the ``While`` as a single tensor of shape
``(length, *element_shape)`` (the elements stacked along a new first
axis, TensorArray-like, with an unknown length), and comes out of the loop
as that stacked tensor.

Staged, the list is a ``StagedList`` (``ops/list_operators.py``), whose
methods are its mutations: converted code rebinds the list on every one
(``l.append(x)`` becomes ``l = ag__.list_append(l, x)``), and the operators
call ``l.appended(x)`` (a ``ListAppend`` op, ``ops/array.py``),
``l.popped(i)`` (``(l without item i, item i)``), ``l.extended(xs)`` and
``l.without(i)`` (``del l[i]``).

Reading a staged list needs nothing special: ``len(l)``, ``l[i]`` and
``for x in l`` are the tensor operations on its first dimension.  All
elements must share one dtype (Python numbers and weakly typed tensors take
it, NEP 50) and one shape.  A list of Python numbers only (``acc = [0]``,
``acc.append(1)``) is weakly typed, as each of its elements is: its items
(``acc[-1]``) are weak, and it takes the dtype of the first strongly typed
element appended to it or of the strongly typed list it meets at the end of
a branch (``acc.append(x)`` with a float32 ``x`` makes it a float32 list),
as NEP 50 makes a Python number next to it; where that dtype cannot hold
every number the list may hold, the graph checks them when it runs
(``list_operators.cast_numbers``).  A Python constant the dtype cannot hold
exactly (``0.1`` next to a float32) widens it, unless the dtype's arithmetic
wraps where a Python int's does not (``1000`` next to int8 values: the
items would lose that dtype, ``dtypes.wraps``): an ``ag.TracingError``
naming the list.

Element shapes, as a TensorArray's: the static element shape is what the
trace knows of all elements, and dimensions that differ between them (or
between iterations, when the loop relaxes the shapes of its variables)
become unknown.  An empty list whose element shape is not fully known
(rows of an unknown length, or an element shape relaxed by the loop) starts
as an array with 0 for each unknown dimension: ``ListAppend`` gives an empty
list the shape of its first element, so those dimensions mean nothing.  The
elements must still have one shape when the graph runs: an element of
another shape is an ``ExecutionError`` naming the list and its loop.

``build_while`` decides which lists to stage (the ones the body changes)
through ``element_spec`` and builds initial values with ``stack``.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import dtypes, shapes
from autograph.runtime.ops import apply
from autograph.runtime.ops import array as array_ops
from autograph.runtime.ops import list_operators
from autograph.runtime.ops.list_operators import StagedList, check_element, fits
from autograph.runtime.errors import TracingError
from autograph.runtime.core.tensor import Tensor, is_weak, weak_number

__all__ = ["element_spec", "empty", "stack"]


def element_spec(elements, like=None, label="list", where="the loop"):
    """``(dtype, element_shape, weak)`` of a staged list holding ``elements``.

    ``like`` is an already staged tensor whose elements join them.  Python
    numbers are weakly typed (so is a list of them only: ``weak``); shapes
    that differ relax to unknown dimensions.
    """
    strong, weak, elem_shapes = [], [], []
    for value in elements:
        check_element(value, label, where)
        if is_weak(value):  # a Python number, a weak scalar, or a staged list of Python numbers
            weak.append(value)
            elem_shapes.append(shapes.as_shape(value.shape) if isinstance(value, Tensor) else ())
        else:
            strong.append(value.dtype)
            elem_shapes.append(shapes.as_shape(value.shape))
    if isinstance(like, Tensor):
        if like.weak:
            weak.append(like)
        else:
            strong.append(like.dtype)
        elem_shapes.append(None if like.shape is None else like.shape[1:])
    if not strong and not weak:
        raise TracingError(
            f"the list '{label}' of {where} is empty and nothing is appended to it while tracing, so its "
            "element dtype is unknown. Append to it in the loop, or start from a tensor."
        )
    if strong:
        # NEP 50 for Python numbers and weak scalars, unless a Python number is not exactly a value
        # of that dtype (Python keeps it as it is): then numpy's promotion, as for arrays
        lists = [v.dtype for v in weak if isinstance(v, Tensor) and v.shape != ()]
        scalars = [v for v in weak if not (isinstance(v, Tensor) and v.shape != ())]
        dtype = dtypes.result_type(*strong, *[weak_number(v) for v in scalars])
        numbers = [v for v in scalars if not isinstance(v, Tensor)]
        if not all(fits(v, dtype) for v in numbers):
            if dtypes.wraps(dtype):
                _refuse_widening(label, where, dtype, next(v for v in numbers if not fits(v, dtype)))
            dtype = dtypes.result_type(dtypes.result_type(*numbers), dtype)
        if lists:  # checked where they are cast (list_operators.cast_numbers)
            dtype = dtypes.staged_list_result_type(dtypes.result_type(*lists), dtype)
    else:  # weakly typed values only: numpy's dtype for them (a weak tensor's own)
        dtype = dtypes.result_type(*[v.dtype if isinstance(v, Tensor) else v for v in weak])
    elem_shape = elem_shapes[0]
    for other in elem_shapes[1:]:
        elem_shape = shapes.relax(elem_shape, other)
    return dtype, elem_shape, not strong


def _refuse_widening(label, where, dtype, number):
    """A list holding a Python int that its values' wrapping dtype cannot hold (``[200]`` appended int8
    values): widened, its items would lose that dtype, and their arithmetic its wrapping."""
    wide = dtypes.result_type(dtypes.result_type(number), dtype).name
    raise TracingError(
        f"the list '{label}' of {where} holds the Python int {number!r:.40} beside {dtype.name} values, which "
        f"{dtype.name} cannot hold. In Python each item keeps its own type (the int stays an int, the "
        f"{dtype.name} values wrap as {dtype.name} does); a staged list has one dtype, and widening it to "
        f"{wide} would change what its {dtype.name} items compute. Start the list from values of one dtype "
        f"(np.{wide}({number!r:.40})) and cast what is appended (rt.cast(..., '{wide}')), or keep the int "
        "out of the list."
    )


def empty(dtype, elem_shape, weak=False):
    """An empty staged list: 0 for the element dimensions not known yet (the first ``ListAppend`` sets them)."""
    shape = (0,) if elem_shape is None else (0, *[0 if d is None else d for d in elem_shape])
    return apply.constant(np.zeros(shape, dtype=dtype), dtype, weak=weak)


def stack(values, *, dtype=None, like=None, elem_shape=None, weak=None, label="list", where="the loop"):
    """The Python list ``values`` as one tensor of the current graph, stacked on a new first axis.

    ``like`` (a list or tensor of the same kind of elements) supplies the
    dtype and element shape when ``values`` is empty; ``dtype`` and
    ``weak`` force them (by default the list is weak if its elements are).
    """
    values = list(values)
    return StagedList.mark(_stacked(values, dtype, like, elem_shape, weak, label, where),
                           f"the staged list '{label}' of {where}", list_operators.python_numbers(values))


def _stacked(values, dtype, like, elem_shape, weak, label, where):
    if dtype is None or (not values and elem_shape is None):
        pool = values + (like if type(like) is list else [])
        spec_dtype, spec_shape, spec_weak = element_spec(pool, like if isinstance(like, Tensor) else None, label,
                                                         where)
        dtype = dtype or spec_dtype
        elem_shape = spec_shape if elem_shape is None else elem_shape
        weak = spec_weak if weak is None else weak
    elif weak is None:
        weak = bool(values) and all(is_weak(v) for v in values)
    if not values:
        return empty(dtype, elem_shape, weak)
    for value in values:
        check_element(value, label, where)
    known = [shapes.as_shape(v.shape) if isinstance(v, Tensor) else np.shape(v) for v in values]
    if any(not shapes.is_compatible(known[0], other) for other in known[1:]):
        raise TracingError(
            f"the list '{label}' of {where} holds elements of the shapes "
            f"{', '.join(dict.fromkeys(shapes.format_shape(k) for k in known))}; a list changed in a tensor loop "
            "or branch is staged as one tensor of stacked elements, so its elements must have one shape. Pad "
            "them to one shape, or keep one list per shape."
        )
    if not any(isinstance(v, Tensor) for v in values):
        try:
            array = np.asarray([np.asarray(v, dtype=dtype) for v in values], dtype=dtype)
        except ValueError:
            raise TracingError(
                f"the elements of the list '{label}' of {where} have different shapes; a staged list "
                "stacks its elements, so they must have one shape."
            ) from None
        return apply.constant(array, dtype, weak=weak)
    tensors = []
    for value in values:
        if isinstance(value, Tensor):
            if value.dtype != dtype:
                value = list_operators.cast_numbers(value, dtype, weak=value.weak)
            tensors.append(value)
        else:
            tensors.append(apply.constant(value, dtype, weak=is_weak(value)))
    return array_ops.stack(tensors, axis=0, weak=weak)
