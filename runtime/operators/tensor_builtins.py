"""Graph paths of Python's builtins on tensors: Python's answers, or Python's errors when the graph runs.

``ag__.max(a, b)`` (``py_builtins``) comes here when an argument is a
``Tensor``: ``py_builtins`` registers these functions as the numpy backend's
overloads of the builtins (``operators/dispatch.py``).  Each builtin gives
what Python gives on the numpy values the tensors stand for:

* ``max(a, b)`` / ``min(a, b)`` return one of their operands, chosen by
  Python's comparison (``max`` keeps ``a`` unless ``b > a``: a NaN first
  operand wins, a NaN later one never does), so the result has the chosen
  operand's dtype (a choice the dtypes' bounds decide when tracing returns
  that operand itself: ``min(237, a)`` of an int8 ``a`` is ``a``).  Operands
  of two different strong dtypes, or a Python int beside a narrow integer
  tensor, would give a type chosen by the values: an ``ag.TracingError``
  asking for a cast (``extremum`` states the rule).
  ``max(t)`` of a vector is its largest element by the same rule;
* ``int(x)`` of a float tensor truncates, and at run time an infinity is
  Python's ``OverflowError``, a NaN its ``ValueError`` (``math.PyInt``);
  ``bool(x)`` is numpy's truth value (``ValueError`` for an array of more
  than one element, when the graph runs: ``math.PyBool``);
* ``range(a, b, s)`` with a tensor step ``s == 0`` is Python's ``ValueError``
  when the graph runs (``math.Ensure``); ``reversed()`` of a range with tensor
  bounds is the range counting down, of a tensor its rows backwards;
* ``range_`` with a tensor bound is an ``iterables.TensorRange`` that
  ``for_stmt`` counts over (not materialized); ``enumerate_``/``zip_`` of
  staged iterables are ``iterables.Enumerate``/``Zip``; ``len_`` is the static
  first dimension when known (``len_``, from ``iterables``); ``print_`` is ``rt.print``,
  which prints at every execution; ``abs_`` is ``rt.abs``;
* ``isinstance(t, cls)`` and ``type(t)`` answer for the value the tensor
  stands for (``numpy_type``): a weakly typed scalar is a Python number
  (``int``, ``float``, ``bool``), another scalar a numpy scalar
  (``np.float32``), a tensor of rank >= 1 an ``np.ndarray``, a staged list
  a ``list``.  A 0-d array argument is traced like a numpy scalar, so it
  answers as one (README).

What Python gives as a Python number (``int()``, ``round(x)``, ``bool()``)
is a weakly typed tensor (NEP 50), so ``int(n) * x`` keeps ``x``'s dtype.
"""

from __future__ import annotations

import builtins

import numpy as np

from autograph.runtime import ops
from autograph.runtime.core import dtypes, shapes
from autograph.runtime.core.location import construct_at, quoted_user_line
from autograph.runtime.core.tensor import Tensor, is_weak
from autograph.runtime.errors import TracingError
from autograph.runtime.operators import iterables
from autograph.runtime.operators.iterables import len_
from autograph.runtime.ops import conversions, effects, math, reduction
from autograph.runtime.ops import list_operators
from autograph.runtime.ops.list_operators import StagedList
from autograph.runtime.tracing.values import refuse_float_beyond

# dtype kind of a weakly typed scalar -> the Python type of the number it stands for
_PYTHON_TYPES = {"b": builtins.bool, "i": builtins.int, "u": builtins.int, "f": builtins.float}


def numpy_type(tensor) -> type:
    """The type of the value ``tensor`` stands for: a Python number's, a numpy scalar's, ndarray or list."""
    if isinstance(tensor, StagedList):
        return builtins.list
    if tensor.shape == ():
        if tensor.weak and tensor.dtype.kind in _PYTHON_TYPES:
            return _PYTHON_TYPES[tensor.dtype.kind]
        return tensor.dtype.type
    return np.ndarray


def isinstance_(value, classinfo) -> builtins.bool:
    """``isinstance(t, cls)``: as for the value ``t`` stands for (``rt.Tensor`` itself also matches)."""
    if builtins.isinstance(value, classinfo):
        return True
    stand_in = numpy_type(value)
    if builtins.isinstance(classinfo, tuple):
        return any(_is_subclass(stand_in, c) for c in classinfo)
    return _is_subclass(stand_in, classinfo)


def _is_subclass(stand_in, cls) -> builtins.bool:
    if builtins.isinstance(cls, tuple):
        return any(_is_subclass(stand_in, c) for c in cls)
    return builtins.issubclass(stand_in, cls)


def extremum(args, which):
    """``max(...)`` / ``min(...)`` with tensors, keeping Python's choice of operand and its type.

    Python keeps the first operand unless a later one compares greater
    (``max``) or smaller (``min``).  A comparison known when tracing -- a
    Python number against an integer tensor whose dtype's bounds decide it
    (``min(237, a)`` with an int8 ``a`` is ``a``; NumPy 2 compares a Python int
    exactly), or one with a NaN Python float, which never compares -- picks
    its operand then, which is returned as it is (a Python number stays one).
    A comparison made when the graph runs chooses one of its operands there,
    so the result has one dtype for both (``where``); that is Python's answer
    only if the operands are of one type, or if the other type joins in a way
    the rest of the program cannot tell apart.  The rule for such a run-time
    choice (``_refuse_mixed``):

    * one dtype, or Python numbers of one type: Python's answer;
    * a Python int (or float) beside an int32/int64 or floating tensor:
      the tensor's dtype (NEP 50: ``max(x, 0)`` with a float32 ``x`` is a
      float32 even where Python returns the int 0; README);
    * refused with an ``ag.TracingError`` (its dtype would depend on the
      values when the graph runs; cast first): two strong dtypes; a Python
      float beside an integer tensor; Python numbers of two types; and a
      Python int beside a bool, unsigned or 8/16-bit integer tensor, whose
      arithmetic wraps where the Python int's does not (``max(102, a) + 123``
      with an int8 ``a == -2`` is 225 in Python).
    """
    where = construct_at(f"{which}()")
    if len(args) == 1:
        return _extremum_of_one(args[0], which, where)
    if any((v.shape != ()) if builtins.isinstance(v, Tensor) else np.ndim(v) > 0 for v in args):
        return _extremum_of_arrays(args, which, where)
    # which operands the result may be, and each later operand's comparison with the best so far
    candidates, steps = [args[0]], []
    for value in args[1:]:
        wins = _static_greater(value, candidates) if which == "max" else _static_greater(candidates, value)
        if wins is True:
            candidates = [value]
        elif wins is None:
            candidates.append(value)
        steps.append((value, wins))
    if len(candidates) == 1:
        return candidates[0]  # the choice is known: that operand, as it is
    _refuse_mixed(candidates, which, where)
    strong = {_dtype(v) for v in candidates if not is_weak(v)}
    for value in candidates:  # a Python float the others' float dtype makes inf (1e10 beside a float16)
        for dtype in strong:
            refuse_float_beyond(f"the operand of {which}()", dtype, value, f"in {where}")
    best = args[0]
    for value, wins in steps:
        if wins is True:
            best = value
        elif wins is None:
            best = ops.where((value > best) if which == "max" else (value < best), value, best)
    if all(is_weak(v) for v in candidates):  # one of the Python numbers: a Python number
        best = ops.cast(best, best.dtype, weak=True)
    return best


def _extremum_of_arrays(args, which, where):
    """``max(a, b)`` with an array operand: Python takes the truth value of the comparison, which numpy
    gives for one element only (``ValueError`` otherwise, when the graph runs), and returns the operand
    it picks, so the operands must be of one shape (and type, as ``_refuse_mixed`` says)."""
    shapes_ = {v.shape if builtins.isinstance(v, Tensor) else np.shape(v) for v in args}
    if len(shapes_) > 1:
        raise TracingError(
            f"{where}: {which}() of operands of different shapes ({quoted_user_line() or 'this call'}) returns "
            f"the one it chooses, so the result's shape would depend on their values when the graph runs (and "
            f"Python compares arrays of more than one element only to raise ValueError). For the elementwise "
            f"{which}imum use rt.{which}imum(a, b)."
        )
    _refuse_mixed(args, which, where)
    best = args[0]
    for value in args[1:]:
        wins = bool_(math.greater(value, best) if which == "max" else math.less(value, best), f"{which}()")
        best = ops.where(wins, value, best)
    return best


def _bounds(value):
    """(lowest, highest, may be NaN) of the values ``value`` (or any of a list of them) may have."""
    if builtins.isinstance(value, builtins.list):
        found = [_bounds(v) for v in value]
        return builtins.min(b[0] for b in found), builtins.max(b[1] for b in found), any(b[2] for b in found)
    if not builtins.isinstance(value, Tensor):
        number = value.item() if builtins.isinstance(value, np.generic) else value
        if builtins.isinstance(number, (builtins.int, builtins.float)):
            return (number, number, False) if number == number else (float("inf"), float("-inf"), True)
    elif not value.weak and value.dtype.kind in "iub":
        info = np.iinfo(value.dtype) if value.dtype.kind != "b" else None
        return (info.min, info.max, False) if info else (0, 1, False)
    return float("-inf"), float("inf"), True


def _static_greater(left, right):
    """``left > right`` when the bounds of their values decide it, else None."""
    left_low, left_high, left_nan = _bounds(left)
    right_low, right_high, right_nan = _bounds(right)
    if left_high <= right_low or (left_nan and left_low > left_high) or (right_nan and right_low > right_high):
        return False  # (a NaN constant has empty bounds: nothing compares with it)
    if left_low > right_high and not (left_nan or right_nan):
        return True
    return None


def _refuse_mixed(candidates, which, where):
    """A ``TracingError`` when the operands a run-time choice picks from differ in type as the rule says."""
    strong = {_dtype(v) for v in candidates if not is_weak(v)}
    python = sorted({_PYTHON_NAMES[_kind(v)] for v in candidates if is_weak(v)}, key=_PYTHON_ORDER.index)
    wrapping = ""
    if len(strong) > 1:
        operands = " and ".join(sorted(d.name for d in strong)) + " values"
    elif strong:
        (dtype,) = strong
        higher = [p for p in python if _PYTHON_ORDER.index(p) > _PYTHON_ORDER.index(_PYTHON_NAMES[_kind(dtype)])]
        if not python or not (higher or dtypes.wraps(dtype)):
            return
        operands = f"{_a(dtype)} value and a Python {(higher or python)[-1]}"
        if not higher:
            wrapping = f", and {dtype.name} arithmetic wraps where a Python int's does not"
    elif len(python) > 1:
        operands = f"Python numbers of different types ({' and '.join(python)})"
    else:
        return
    raise TracingError(
        f"{where}: {which}() of {operands} ({quoted_user_line() or 'this call'}) returns the operand it "
        f"chooses, so its dtype would depend on their values when the graph runs{wrapping}. Cast the "
        f"operands to one dtype first (np.int64(a), rt.cast(a, 'int64'), np.int8(102), float(n))."
    )


def _a(dtype) -> str:
    return f"an {dtype.name}" if dtype.name.startswith("int") else f"a {dtype.name}"


_PYTHON_NAMES = {"b": "bool", "i": "int", "f": "float"}
_PYTHON_ORDER = ["bool", "int", "float"]


def _dtype(value) -> np.dtype:
    return value.dtype if builtins.isinstance(value, (Tensor, np.generic, np.ndarray)) else np.asarray(value).dtype


def _kind(value) -> str:
    dtype = value if builtins.isinstance(value, np.dtype) else _dtype(value)
    return {"f": "f", "i": "i", "u": "i", "b": "b"}.get(dtype.kind, "f")


def _extremum_of_one(only, which, where):
    """``max(t)``: Python iterates the rows and compares them; for a vector, the element Python finds."""
    if not builtins.isinstance(only, Tensor) or only.shape == ():
        raise TracingError(
            f"{where}: {which}() of one value needs an iterable; give it a tensor with at least one dimension, "
            f"or several values."
        )
    if only.shape is None or len(only.shape) != 1:
        raise TracingError(
            f"{where}: {which}() of the tensor {only.name} of shape {shapes.format_shape(only.shape)} compares "
            f"its rows as Python bools, which numpy refuses for rows of more than one element. Use "
            f"rt.reduce_{which}(t, axis=0) for the elementwise {which}imum of the rows."
        )
    list_operators.check_items_readable(only)
    length = iterables.len_(only)
    if type(length) is int and length == 0:
        raise ValueError(f"{where}: {which}() iterable argument is empty")
    only = conversions.ensure(only, math.greater(length, 0), "ValueError", f"{where}: {which}() iterable argument is empty")
    first = only[0]
    reduce = reduction.reduce_max if which == "max" else reduction.reduce_min
    if only.dtype.kind != "f":
        found = reduce(only)
        return ops.cast(found, found.dtype, weak=True) if only.weak else found
    # a NaN first element stays (nothing compares greater); later NaNs are never chosen; of equal
    # values (0.0 and -0.0) the first, as Python keeps the best so far unless one compares greater
    skipped = ops.where(math.not_equal(only, only), first, only)
    best = skipped[reduction.argmax(math.equal(skipped, reduce(skipped)))]
    found = ops.where(math.not_equal(first, first), first, best)
    return ops.cast(found, found.dtype, weak=True) if only.weak else found


def int_(x, base=None):
    """``int(t)``: Python's int, a weakly typed int64 (``conversions.python_int``; floats truncate, checked)."""
    where = construct_at("int()")
    if base is not None:
        raise TracingError(f"{where}: int() of the tensor {x.name} with a base is not supported; tensors are numbers.")
    _check_scalar(x, "int", where, TypeError)
    return conversions.python_int(x, where)


def float_(x):
    """``float(t)``: a weakly typed float64 (a Python float)."""
    _check_scalar(x, "float", construct_at("float()"), TypeError)
    return iterables.python_number(x, dtypes.float64)


def bool_(x, construct="bool()"):
    """``bool(t)`` (or the truth test of ``construct``, ``not``): numpy's truth value of the array, a weak
    bool (numpy's ValueError when the graph runs, for more or less than one element)."""
    if isinstance(x, StagedList):
        return math.greater(iterables.len_(x), 0)  # a list is true when not empty
    if x.shape == () and x.dtype == dtypes.bool_:
        return x
    return conversions.py_bool(x, construct_at(construct))


def _check_scalar(x, what, where, error):
    """Python converts one number: a tensor of another static shape is numpy's error, at trace time."""
    if x.shape is not None and x.shape != ():
        raise error(f"{where}: only 0-dimensional arrays can be converted to Python scalars "
                    f"({what}() of the tensor {x.name} of shape {shapes.format_shape(x.shape)})")


def range_(*args):
    """``range(...)`` with a tensor argument: a ``iterables.TensorRange`` that ``for_stmt`` loops over;
    a tensor step is checked to be nonzero when the graph runs."""
    if not 1 <= len(args) <= 3:
        raise TypeError(f"range expected 1 to 3 arguments, got {len(args)}")
    for value in args:  # Python's range() takes ints and Python bools, not floats or numpy bools
        if builtins.isinstance(value, Tensor) and (value.dtype.kind == "f" or (
                value.dtype == dtypes.bool_ and not value.weak)):
            stand_in = numpy_type(value)
            kind = stand_in.__name__ if stand_in.__module__ == "builtins" else f"numpy.{stand_in.__name__}"
            raise TypeError(f"{construct_at('range()')}: '{kind}' object cannot be interpreted as an integer "
                            "(cast it with int() first)")
    if len(args) == 1:
        return iterables.TensorRange(0, args[0], 1)
    if len(args) == 2:
        return iterables.TensorRange(args[0], args[1], 1)
    start, stop, step = args
    if builtins.isinstance(step, Tensor):
        where = construct_at("range()")
        step = conversions.ensure(step, math.not_equal(step, 0), "ValueError", f"{where}: range() arg 3 must not be zero")
    return iterables.TensorRange(start, stop, step)


def abs_(x):
    return ops.abs(x)


def enumerate_(iterable, start=0):
    """``enumerate(t)``: pairs ``(index, row)`` that ``for_stmt`` loops over."""
    return iterables.Enumerate(iterables.as_sequence(iterable, construct_at("enumerate()")), start)


def zip_(*sources, strict=False):
    """``zip(a, b, ...)`` with tensors: tuples of rows that ``for_stmt`` loops over."""
    where = construct_at("zip()")
    if strict:
        raise TracingError(f"{where}: zip(strict=True) over tensors is not supported; check lengths first.")
    return iterables.Zip([iterables.as_sequence(x, where) for x in sources])


def print_(*args, sep=" ", end="\n", file=None, flush=False):
    """``print(...)`` with tensors: ``rt.print``, which prints at every execution of the graph."""
    del flush
    return effects.print(*args, sep=sep, end=end, output_stream=file)


def reversed_(sequence):
    """``reversed(range(...))`` with tensor bounds: the range counting down; ``reversed(t)``: the rows backwards."""
    if builtins.isinstance(sequence, iterables.TensorRange):
        start, step = sequence.start, sequence.step
        length = sequence.length()
        last = start + (length - 1) * step
        return iterables.TensorRange(last, start - step, -step, dtype=sequence.index_dtype,
                                     python_ints=sequence.python_ints)
    if builtins.isinstance(sequence, Tensor):
        if sequence.shape == ():
            raise TypeError(f"{construct_at('reversed()')}: iteration over a 0-d array")
        return sequence[::-1]
    return builtins.reversed(sequence)


def type_(*args):
    """``type(t)``: the type of the value ``t`` stands for (``numpy_type``); other calls: the builtin."""
    if len(args) == 1 and builtins.isinstance(args[0], Tensor):
        return numpy_type(args[0])
    return builtins.type(*args)
