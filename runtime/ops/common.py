"""Helpers shared by the op families: weak scalars, dtype rules, static values.

* ``promote(values)`` applies weak typing (NEP 50) to an op's operands:
  Python numbers and weakly typed tensors (``Tensor.weak``) take the dtype
  numpy gives them next to the strongly typed operands, so ``t + 1`` keeps
  an int32 ``t`` int32 and ``y * x`` with a weak float64 ``y`` (a Python
  float merged by an ``if``) and a float32 ``x`` is float32, both eagerly
  and in a graph.
* ``watch_promotions(tensor)`` records the dtypes ``promote`` gives a weak
  tensor next to strongly typed operands: the evidence a weakly typed loop
  variable's dtype is settled from (``tracing/weak_loop_vars.py``), the same whatever
  dtype the variable is traced with.
* ``ufunc_dtype(ufunc, dtypes)`` is the result dtype numpy's type tables
  give an elementwise op (``ufunc.resolve_dtypes``): no kernel runs, and
  the numpy kernels follow the same tables, so eager and graph results agree.
(What is known of a tensor's value at trace time: ``static_values.py``.)
"""

from __future__ import annotations

import functools

import numpy as np

from autograph.runtime.core import dtypes

from autograph.runtime.ops import apply
from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import user_location_text
from autograph.runtime.core.tensor import Tensor, is_weak, weak_number
from autograph.runtime.errors import TracingError


def dtype_of(value) -> np.dtype:
    """The dtype of a tensor, numpy value, variable or (strongly converted) Python value."""
    dtype = getattr(value, "dtype", None)
    if not isinstance(dtype, np.dtype):  # tensors, numpy values, rt.Variable (not read while tracing)
        dtype = np.asarray(value).dtype
    if dtype not in dtypes.SUPPORTED:
        names = ", ".join(d.name for d in dtypes.SUPPORTED)
        raise TypeError(
            f"operand {value!r:.60} at {user_location_text()} has dtype {dtype}, "
            f"which the runtime does not support; use one of {names}"
        )
    return dtype


def promote(values, compared=False, lists=True, ufunc=None) -> list:
    """``values`` with the weakly typed ones converted to the dtype NEP 50 gives them.

    With a strongly typed operand (a strong tensor, a numpy value), the weak
    ones -- Python numbers and weak tensors alike -- take
    ``np.result_type(*strong dtypes, *weak as Python numbers)``: Python
    numbers become numpy values of that dtype, weak tensors are cast to it
    (``promote([t_int32, 1, 2.5])`` gives the scalars float64).  Among weak
    operands only, Python numbers take the weak tensors' dtype and stay weak
    (a weak int32 loop counter plus ``1`` stays a weak int32).  All Python
    numbers: unchanged.

    A Python number the strong dtype cannot hold is NEP 50's
    ``OverflowError`` (``np.uint8(5) + 300``), raised when the graph computes
    it, so on the paths that do (``_out_of_bounds``).  Among weak operands
    only, a Python int the weak tensors' integer dtype cannot hold widens
    them to int64, as Python's ints are unbounded (``widened``: a weak
    int32 counter plus ``2**31``).

    ``compared``: the operands of a comparison.  NumPy 2 compares a Python
    int with an integer array exactly, whatever its size (``np.uint8(3) <
    300`` is True; ``math.binary`` decides those by the int's sign), where
    arithmetic raises ``OverflowError``; so a weak integer tensor that the
    strong integer dtype cannot hold widens every operand to a dtype holding
    both (``_holding_both``) instead of being narrowed.

    ``lists``: a weakly typed non-scalar tensor (a staged list of Python
    numbers, or an item of a staged list of lists) is a Python list, which
    numpy converts to a *strong* array of its default dtype for the kind
    (``np.asarray([1, 2])`` is int64, ``[1.5]`` float64, ``[True]`` bool),
    never NEP 50's weak scalar: ``np.uint8(0) + [-2]`` is int64 ``[-2]``
    (``_as_array``).  ``ufunc``, the op's, tells whether an empty list
    (``np.asarray([])`` is float64) would change the result
    (``_checked_not_empty``).  False for the joins of staged lists
    (``stack``/``concat``), which keep their elements' weak typing.
    """
    if lists:
        values = _lists_as_arrays(values, ufunc)
    if True not in [is_weak(v) for v in values]:  # (a list, not any() of a generator: every op asks)
        return list(values)
    if current_graph() is None:
        apply.check_not_escaped(values, "an operation")
    strong = [dtype_of(v) for v in values if not is_weak(v)]
    if strong:
        target = dtypes.result_type(*strong, *[weak_number(v) for v in values if is_weak(v)])
        if _WATCHED and not (compared and dtypes.wraps(target)):  # (see weak_loop_vars.settle, rule 1)
            for v in values:
                met = _WATCHED.get(id(v))
                if met is not None and v is met[0]:
                    met[1].add(target)
        wide = _holding_both(values, target) if compared and target.kind in "iu" else None
        if wide is not None:
            return [_as_dtype(v, wide) for v in values]
        partner = next(v for v in values if not is_weak(v))
        return [_weak_as(v, target, compared, partner) if is_weak(v) else v for v in values]
    return _among_weak(values, compared)


def _among_weak(values, compared):
    """Weak ``values`` only: the Python numbers take the weak tensors' dtype (``widened``)."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    if not tensors or len(tensors) == len(values):
        return list(values)
    numbers = [v for v in values if not isinstance(v, Tensor)]
    joined = dtypes.result_type(*[t.dtype for t in tensors], *numbers)
    target = widened(joined, numbers)
    if target != joined:  # (exact: int64 holds every value of the narrower integer dtype)
        values = [_weak_cast(v, target) if isinstance(v, Tensor) else v for v in values]
    return [v if isinstance(v, Tensor) else _weak_constant(v, target, tensors, compared) for v in values]


def widened(dtype, numbers):
    """int64 when the integer ``dtype`` of weak tensors cannot hold one of the Python ints
    ``numbers`` they meet and int64 can (a weak int32 counter ``s``: ``s + 2**31``,
    ``s * 3_000_000_000`` are Python ints, so weak int64s); else ``dtype``."""
    if dtype.kind not in "iu" or all(int_fits(v, dtype) for v in numbers):
        return dtype
    wide = dtypes.result_type(dtype, np.int64)  # (uint64: float64, which is no integer)
    return wide if wide.kind in "iu" and all(int_fits(v, wide) for v in numbers) else dtype


def int_fits(number, dtype) -> bool:
    """False for a Python int out of the integer ``dtype``'s bounds (NEP 50 gives it that dtype); True for
    anything else.  (``list_operators.fits`` asks another question: is a number exactly a value of a dtype.)"""
    if type(number) is not int:
        return True
    bounds = _INT_BOUNDS.get(dtype, _UNSEEN)
    if bounds is _UNSEEN:
        bounds = _INT_BOUNDS[dtype] = _int_bounds(np.dtype(dtype))
    return bounds is None or bounds[0] <= number <= bounds[1]


_INT_BOUNDS: dict = {}  # dtype (as given) -> _int_bounds of it
_UNSEEN = object()


def _int_bounds(dtype):
    """``(min, max)`` of an integer ``dtype`` as Python ints; None for any other dtype."""
    if dtype.kind not in "iu":
        return None
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _weak_cast(value, dtype):
    return value if value.dtype == dtype else apply.apply_op("Cast", [value], {"dtype": dtype, "weak": True})


def _weak_constant(number, dtype, tensors, compared):
    """The Python ``number`` as a weak constant of ``dtype``, the dtype of the weak ``tensors`` it meets.

    One that ``dtype`` cannot hold even so (an int beyond int64, a negative int next to a weak
    uint64) is a ``TracingError``: Python computes with it exactly, which no dtype of a graph can;
    an int too large for a float is Python's ``OverflowError`` where it is computed
    (``_out_of_bounds``), except in a comparison, which Python makes exactly."""
    try:
        return apply.constant(np.asarray(number, dtype=dtype), dtype, weak=True)
    except OverflowError as e:
        if dtype.kind == "f" and not compared:
            return _out_of_bounds(number, dtype, e, tensors[0], weak=True)
    made = ", ".join(f"{t.name}, made at {t.op.location or '<unknown>'}" for t in tensors)
    raise TracingError(
        f"the Python int {number!r:.40} meets a Python number a loop or branch made (the weakly typed "
        f"{dtype.name} {made}) at {user_location_text()}: Python computes with both exactly, but no dtype of "
        f"a graph holds {number!r:.40}. Keep the numbers within int64's bounds, or compute this outside the function"
    ) from None


def is_weak_list(value) -> bool:
    """A weakly typed non-scalar tensor: a Python list of Python numbers (a staged list of them)."""
    return isinstance(value, Tensor) and value.weak and value.shape != ()


def _lists_as_arrays(values, ufunc):
    lists = False
    for v in values:  # (every op asks: one pass, is_weak_list and _refuse_mixed_list inlined)
        if isinstance(v, Tensor):
            if type(v) is not Tensor:  # a StagedList (the only subclass with numbers)
                _refuse_mixed_list(v)
            if v.weak and v.shape != ():
                lists = True
    if not lists:
        return values
    arrays = [_as_array(v) if is_weak_list(v) else v for v in values]
    return [_checked_not_empty(v, arrays, i, ufunc) if is_weak_list(v) else a
            for i, (v, a) in enumerate(zip(values, arrays))]


def _refuse_mixed_list(value):
    """A ``TracingError`` for a strongly typed staged list that may hold Python numbers beside its numpy
    values (``StagedList.numbers``) where numpy's array of it has another dtype: ``np.asarray`` joins
    both kinds (``[np.int32(1), 2]`` is int64, ``[np.float32(1), 2.0]`` float64), and gives the numpy
    values' dtype when no Python number is in it, so its dtype depends on what the program appended;
    the graph's list has one dtype."""
    # (a plain Tensor has no ``numbers``: only a StagedList, a subclass, sets it)
    staged = isinstance(value, Tensor) and type(value) is not Tensor and not value.weak
    numbers = getattr(value, "numbers", None) if staged else None
    if numbers is None:
        return
    joined = dtypes.result_type(value.dtype, numbers)
    if joined == value.dtype:
        return
    raise TracingError(
        f"{_list_label(value)} holds {value.dtype.name} values and Python numbers, used as an array at "
        f"{user_location_text()}: numpy makes such a list an array of both kinds, {joined.name} (as "
        f"np.asarray([np.int32(1), 2]) is int64), or of {value.dtype.name} when no Python number is in it, "
        f"where the graph keeps one dtype, {value.dtype.name}. Make its elements one kind (append {value.dtype.name} values only: "
        f"np.{value.dtype.name}(i), rt.cast(i, '{value.dtype.name}')), or cast the list first "
        f"(rt.cast(..., '{joined.name}'))."
    )


def _as_array(value):
    """The weak list ``value`` as the strongly typed array ``np.asarray`` makes of its Python numbers:
    int64, float64 or bool (a list of weak uint64 counters: int64, checked when the graph runs)."""
    dtype = dtypes.LIST_DTYPES[value.dtype.kind]
    array = apply.apply_op("Cast", [value], {"dtype": dtype})
    if dtypes.narrows(value.dtype, dtype):  # uint64 -> int64
        from autograph.runtime.ops import reduction  # it reaches this module

        strong = apply.apply_op("Cast", [value], {"dtype": value.dtype})
        back = apply.apply_op("Cast", [array], {"dtype": value.dtype})
        unchanged = reduction.reduce_all(apply.apply_op("Equal", [back, strong]))
        array = apply.apply_op("Ensure", [array, unchanged], {"error": "OverflowError", "message": (
            f"{_list_label(value)} holds a Python number that {dtype.name} cannot hold, at "
            f"{user_location_text()}: numpy makes such a list a uint64 array, the graph one of {dtype.name}. "
            f"Cast the list first (rt.cast(..., '{value.dtype.name}'))")})
    return array


def _list_label(value):
    return getattr(value, "label", None) or f"the staged list {value.name}"


def _checked_not_empty(value, arrays, index, ufunc):
    """``arrays[index]`` (the weak list ``value`` as numpy's array), checked when the graph runs not to
    be empty where that matters: ``np.asarray([])`` is float64 and 1-D whatever the list would hold,
    so an empty list of ints or bools gives another dtype (``np.int32(1) + []`` is float64) or Python's
    TypeError (``np.int32(1) & []``), and an empty list of lists another shape; the graph, traced for
    the elements' dtype and shape, refuses it (ValueError; Python's TypeError where numpy has no such
    op on float64) rather than give another value."""
    array = arrays[index]
    length = None if value.shape is None else value.shape[0]
    if length is not None and length > 0:
        return array
    flat = value.shape is not None and len(value.shape) == 1
    if flat and array.dtype.kind == "f":
        return array
    error = "ValueError"
    if flat:
        with_float = _result_dtype(ufunc, arrays, index, dtypes.float64)
        if with_float is not None and with_float == _result_dtype(ufunc, arrays, index, array.dtype):
            return array
        if with_float is None:  # no such op on float64: Python's error (np.int32(1) & [])
            error = "TypeError"
    from autograph.runtime.ops import array as array_ops  # it reaches this module

    size = array_ops.shape(array, out_type="int64")[0]
    nonempty = apply.apply_op("NotEqual", [size, apply.constant(np.zeros((), np.int64), dtypes.int64)])
    elements = "" if value.shape is None else f" of shape {tuple(value.shape[1:])}"
    return apply.apply_op("Ensure", [array, nonempty], {"error": error, "message": (
        f"{_list_label(value)} is empty when the graph runs, at {user_location_text()}: numpy makes an "
        f"empty Python list a float64 array of shape (0,) (np.asarray([])), which gives another result "
        f"than the graph was traced for, with {array.dtype.name} elements{elements}. Start the list from a "
        f"float64 tensor, or check that it is not empty first")})


def _result_dtype(ufunc, operands, index, dtype):
    """The dtype of the op (``ufunc``; else numpy's promotion) with ``operands[index]`` an array of
    ``dtype``; None if numpy has no such op."""
    strong = [dtype if i == index else dtype_of(o) for i, o in enumerate(operands) if i == index or not is_weak(o)]
    weak = [weak_number(o) for i, o in enumerate(operands) if i != index and is_weak(o)]
    try:
        joined = dtypes.result_type(*strong, *weak)
        in_dtypes = [dtype if i == index else joined if is_weak(o) else dtype_of(o) for i, o in enumerate(operands)]
        return joined if ufunc is None else ufunc_dtype(ufunc, in_dtypes)
    except TypeError:
        return None


def _holding_both(values, target):
    """The integer dtype that holds ``target`` and every weakly typed integer tensor among ``values``
    that ``target`` cannot hold, or None: when they all fit (the usual case); when no integer dtype
    holds them all (uint64 next to a weak int64); and when a weak scalar would have to be cast itself
    (a weak int32 next to a uint32), since casts of a weakly typed loop variable are evidence of its
    dtype (``tracing/weak_loop_vars.py``).  In those cases promote's ``OverflowError`` check stays (a
    refusal naming the line, not Python's answer).  (A Python int out of ``target``'s bounds was
    decided by its sign before: ``math.binary``.  A weak array, a staged list of Python ints, is
    numpy's int64 array by then: ``_as_array``.)"""
    wide = target
    for v in values:
        if isinstance(v, Tensor):
            if not v.weak or v.dtype.kind not in "iu" or not dtypes.narrows(v.dtype, target):
                continue
            if dtypes.result_type(target, v.dtype) != v.dtype and v.shape == ():
                return None  # a scalar, maybe a loop counter: promote's check stays
            wide = dtypes.result_type(wide, v.dtype)
    return wide if wide != target and wide.kind in "iu" else None


def _as_dtype(value, dtype):
    if isinstance(value, Tensor):
        return value if value.dtype == dtype else apply.apply_op("Cast", [value], {"dtype": dtype})
    return np.asarray(value, dtype=dtype)


def _narrows_integers(from_dtype, to_dtype) -> bool:
    return np.dtype(from_dtype).kind in "iu" and np.dtype(to_dtype).kind in "iu" and dtypes.narrows(from_dtype, to_dtype)


def _check_fits(value, cast, dtype, compared=False):
    """``cast`` through an ``Ensure``, checked when the graph runs, that the Python integer the weak
    scalar ``value`` stands for (a counter or sum a loop or branch made) fits ``dtype``, which it was
    ``cast`` to: NEP 50 raises ``OverflowError`` for a Python integer out of a dtype's bounds, never wraps it."""
    back = apply.apply_op("Cast", [cast], {"dtype": value.dtype})
    fits = apply.apply_op("Equal", [back, value])
    dtype = np.dtype(dtype)
    if dtype.kind == "u" and value.dtype.kind == "i":  # -2 -> uint64 -> int64 is -2 again: the sign too
        zero = apply.constant(np.zeros((), value.dtype), value.dtype)
        fits = apply.apply_op("LogicalAnd", [fits, apply.apply_op("GreaterEqual", [value, zero])])
    made = f"the weakly typed {value.dtype.name} {value.name}, made at {value.op.location or '<unknown>'}"
    if compared:  # (``_holding_both``: the counter's own dtype cannot hold the tensor's values either)
        message = (
            f"a Python integer ({made}) is compared with a {dtype.name} tensor at {user_location_text()}, but is "
            f"out of {dtype.name}'s bounds: Python compares them exactly, the graph can only compare them in "
            f"{dtype.name}. Cast the tensor to a wider dtype first "
            f"(rt.cast(..., '{dtypes.result_type(value.dtype, dtype).name}'))"
        )
    else:
        message = (
            f"a Python integer ({made}) is combined with a {dtype.name} tensor at {user_location_text()}, but is "
            f"out of {dtype.name}'s bounds: Python (NEP 50) raises OverflowError there, it never wraps. "
            f"Cast the tensor to a wider dtype first (rt.cast(..., '{value.dtype.name}'))"
        )
    return apply.apply_op("Ensure", [cast, fits], {"error": "OverflowError", "message": message})


# id of a watched weak tensor -> (the tensor, the dtypes promote gave it); tracing/weak_loop_vars.py
# watches the placeholders of a loop's weakly typed variables while it traces the loop.
_WATCHED: dict = {}


def watch_promotions(tensor, into: set) -> None:
    """From now on until ``unwatch_promotions(tensor)``, ``promote`` adds to ``into`` each dtype it
    gives weak ``tensor`` next to strongly typed operands."""
    _WATCHED[id(tensor)] = (tensor, into)


def unwatch_promotions(tensor) -> None:
    _WATCHED.pop(id(tensor), None)


def _weak_as(value, dtype, compared=False, partner=None):
    if isinstance(value, Tensor):
        if value.dtype == dtype:
            return value
        result = apply.apply_op("Cast", [value], {"dtype": dtype})
        if value.shape == () and current_graph() is not None and _narrows_integers(value.dtype, dtype):
            return _check_fits(value, result, dtype, compared)
        return result
    try:
        return np.asarray(value, dtype=dtype)
    except OverflowError as e:
        return _out_of_bounds(value, dtype, e, partner)


def _out_of_bounds(number, dtype, error, partner, weak=False):
    """What stands for the Python ``number`` that ``dtype`` cannot hold, given it by NEP 50: numpy's
    ``error`` (``OverflowError: Python integer 300 out of bounds for uint8``), raised now outside a
    graph; in a graph, an ``Ensure`` that never holds, so the error is raised where the graph computes
    it and only there: ``x = a; if n > 0: x = a + 300`` with a uint8 ``a`` is ``a`` for n == 0, as in
    Python.  (``Ensure`` is stateful: the optimizer neither folds it nor moves it out of a branch.)"""
    name = f" {partner.name}" if isinstance(partner, Tensor) else ""
    message = f"{error}: the Python number {number!r:.40} meets the {dtype.name} value{name} at {user_location_text()}"
    if dtype.kind in "iu":
        wider = "int64" if int_fits(number, np.dtype(np.int64)) else "float64"
        message += (f" and takes its dtype (NEP 50), which cannot hold it. Cast that value to a wider dtype "
                    f"first (rt.cast(..., '{wider}'))")
    if current_graph() is None:
        raise OverflowError(message) from None
    placeholder = apply.constant(np.zeros((), dtype), dtype, weak=weak)
    never = apply.constant(np.False_, np.dtype(np.bool_))
    return apply.apply_op("Ensure", [placeholder, never], {"error": "OverflowError", "message": message})


def ufunc_dtype(ufunc, in_dtypes) -> np.dtype:
    """The dtype ``ufunc`` gives arrays of ``in_dtypes``: numpy's type resolution, no kernel runs.

    ``ufunc.resolve_dtypes`` picks the loop numpy would use (TypeError, with
    numpy's own message, if there is none).
    """
    return dtypes.as_dtype(_resolve(ufunc, tuple(in_dtypes)))


@functools.lru_cache(maxsize=None)
def _resolve(ufunc, in_dtypes):
    return ufunc.resolve_dtypes(in_dtypes + (None,) * ufunc.nout)[-1]


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """``axis`` in ``[0, rank)``; ValueError naming it when out of range."""
    if isinstance(axis, Tensor):
        raise TypeError(f"{what} must be a Python int, not the tensor {axis.name}")
    axis = int(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"{what} {axis} is out of range for a tensor of rank {rank}")
    return axis + rank if axis < 0 else axis


def check_int_attr(value, what: str):
    """``value`` as a Python int (or None); TypeError for tensors and other objects."""
    if value is None:
        return None
    if isinstance(value, Tensor):
        raise TypeError(f"{what} must be a Python int, not the tensor {value.name}; dynamic {what} is not supported")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be a Python int, got {value!r}")
    return int(value)
