"""What a tensor ``for`` loop iterates over: rows of a tensor, tensor ranges, ``enumerate``/``zip`` of those.

``as_sequence`` turns an iterable into an object with ``length()``,
``item(index)`` and ``index_dtype``; ``for_stmt``'s graph path loops over it
with a hidden counter.  A staged iterable's class sets
``__ag_staged_iterable__ = True``; ``is_staged`` is the one test of "is this
iterable staged?" (the numpy backend's ``detect`` for ``for_stmt`` and the
builtins that iterate: ``len``, ``enumerate``, ``zip``, ``reversed``,
``sum``, ``any``, ``all``).

A class whose loops are staged some other way defines
``__ag_for_stmt__(self, extra_test, body, get_state, set_state, symbol_names, opts)``
with ``for_stmt``'s contract; while a trace is active ``for_stmt`` hands the
loop to it (``rt.data.Dataset``: one ``DatasetReduce`` op, ``runtime/data/staged_loop.py``).
"""

from __future__ import annotations

import numpy as np

from autograph.runtime import ops
from autograph.runtime.core import dtypes
from autograph.runtime.core.location import construct_at, user_location_text
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.errors import TracingError
from autograph.runtime.ops import list_operators
from autograph.runtime.ops.common import int_fits
from autograph.runtime.ops.static_values import static_value
from autograph.runtime.tracing import staged_list


def is_tensor(value) -> bool:
    """The numpy backend's ``detect`` for a condition, an operand or a receiver: a symbolic ``Tensor``."""
    return isinstance(value, Tensor)


def is_staged(value) -> bool:
    """True for a symbolic tensor, or an object whose class sets ``__ag_staged_iterable__``."""
    return isinstance(value, Tensor) or getattr(type(value), "__ag_staged_iterable__", False)


def len_(obj):
    """``len(t)``: the static first dimension if known, else a weakly typed scalar ``int64`` tensor
    (Python's int: ``len(x) * len(x)`` of 50,000 items is 2,500,000,000, no wrap at int32)."""
    if isinstance(obj, (TensorRange, Enumerate, Zip)):
        return obj.length()
    if not isinstance(obj, Tensor):
        return len(obj)
    if obj.shape is not None:
        if len(obj.shape) == 0:
            raise TracingError(
                f"len() of the scalar tensor {obj.name} at {user_location_text()}: a scalar has no "
                "length. Use it directly, or reshape it."
            )
        if obj.shape[0] is not None:
            return obj.shape[0]
    return python_number(ops.shape(obj, out_type="int64")[0], dtypes.int64)


def python_number(x, dtype):
    """``x`` as the weakly typed tensor Python's ``int()``/``float()``/``len()`` would give (a Python number)."""
    if x.weak and x.dtype == dtype:
        return x
    return ops.cast(x, dtype, weak=True)



def static_int(tensor):
    """A Python int for a tensor whose value is known while tracing (a Const), else the tensor."""
    value = static_value(tensor)
    return tensor if value is None else int(value)


class TensorItems:
    """The rows of a tensor (its first dimension)."""

    def __init__(self, tensor, where):
        if tensor.shape is not None and len(tensor.shape) == 0:
            raise TracingError(
                f"{where} iterates over the scalar tensor {tensor.name}; only tensors with at least one "
                "dimension can be iterated (over their first dimension)."
            )
        list_operators.check_items_readable(tensor)
        self.tensor = tensor
        self.index_dtype = dtypes.int32

    def length(self):
        return len_(self.tensor)

    def item(self, index):
        return ops.gather(self.tensor, index, axis=0)


def _spans_wrap(dtype) -> bool:
    """The bounds' ``stop - start`` may wrap in ``dtype`` (``range(np.int8(100), -100, -1)``: 200 items;
    ``range(np.uint32(5), 3)``: none), where Python's ints never do: narrow and unsigned dtypes."""
    return dtype.kind in "iu" and dtypes.wraps(dtype) and dtype != dtypes.uint64  # (uint64: no wider int)


class TensorRange:
    """``range(start, stop, step)`` with tensor bounds: what ``range_`` returns for a ``for`` loop."""

    __ag_staged_iterable__ = True

    def __init__(self, start, stop, step, dtype=None, python_ints=True):
        for value in (start, stop, step):
            kind = value.dtype.kind if isinstance(value, Tensor) else np.asarray(value).dtype.kind
            if kind not in "iub":
                raise TracingError(
                    f"range() at {user_location_text()} got {value!r}, which is not an integer; "
                    "cast it with int() first."
                )
        if type(step) is int and step == 0:
            raise ValueError("range() arg 3 must not be zero")
        self.start, self.stop, self.step = start, stop, step
        # Python's range() yields Python ints (weakly typed); iterating rt.range gives numpy values
        self.python_ints = python_ints
        strong = [v.dtype for v in (start, stop, step) if isinstance(v, Tensor)]
        weak = [v for v in (start, stop, step) if not isinstance(v, Tensor)]
        if dtype is not None:
            self.index_dtype = dtypes.as_dtype(dtype)
        elif strong:
            self.index_dtype = dtypes.result_type(*strong, *[int(v) for v in weak])
            if _spans_wrap(self.index_dtype) or not all(int_fits(int(v), self.index_dtype) for v in weak):
                self._count_in_int64(strong)
        else:
            self.index_dtype = dtypes.int64

    def _count_in_int64(self, strong):
        """Python's range() computes with Python ints: bounds whose span may wrap in their dtype
        (``_spans_wrap``), or a Python int bound that the tensor bounds' dtype cannot hold
        (``range(n, 2**40)`` with an int32 ``n``, ``range(a, 300)`` with a uint8 ``a``) make the range
        count in int64 (the tensor bounds cast to it)."""
        wide = dtypes.result_type(np.int64, *strong)
        if wide.kind not in "iu" or not all(int_fits(int(v), wide) for v in (self.start, self.stop, self.step)
                                            if not isinstance(v, Tensor)):
            return  # (uint64 bounds next to a negative int; an int beyond int64): NEP 50's OverflowError
        self.index_dtype = wide
        self.start, self.stop, self.step = [ops.cast(v, wide) if isinstance(v, Tensor) else v
                                            for v in (self.start, self.stop, self.step)]

    def __repr__(self):
        return f"TensorRange({self.start!r}, {self.stop!r}, {self.step!r})"

    def __iter__(self):
        raise TracingError(
            f"{self!r} is a range with tensor bounds; only a converted `for` loop can iterate over it. "
            "Convert the function, or use rt.while_loop."
        )

    def length(self):
        """``len(range(start, stop, step))``: a Python int when the bounds are, else a scalar tensor."""
        start, stop, step = self.start, self.stop, self.step
        if not any(isinstance(v, Tensor) for v in (start, stop, step)):
            return len(range(start, stop, step))
        span = stop if type(start) is int and start == 0 else stop - start
        if type(step) is int:
            if step == 1:
                count = span
            elif step > 0:
                count = (span + (step - 1)) // step
            else:
                count = (span + (step + 1)) // step
        else:
            count = ops.where(step > 0, (span + step - 1) // step, (span + step + 1) // step)
        return ops.maximum(count, 0)

    def item(self, index):
        value = index
        if not (type(self.step) is int and self.step == 1):
            value = value * self.step
        if not (type(self.start) is int and self.start == 0):
            value = value + self.start
        if self.python_ints:
            return python_number(value, value.dtype)
        if value.weak:
            return ops.cast(value, value.dtype)
        return value


def _not_iterable(name):
    """``__iter__`` of a staged iterable: only a converted ``for`` loop (one tensor loop) goes through it."""

    def __iter__(self):
        raise TracingError(
            f"{construct_at(f'{name}() over a tensor')} can only be looped over by a `for` loop of converted "
            f"code (a tensor loop); list(), tuple() or unpacking need its length while tracing. Loop over it "
            f"(`for i, x in {name}(...)`), appending to a list, or index the tensor."
        )

    return __iter__


class Enumerate:
    __ag_staged_iterable__ = True
    __iter__ = _not_iterable("enumerate")

    def __init__(self, sequence, start):
        self.sequence, self.start = sequence, start
        self.index_dtype = sequence.index_dtype

    def length(self):
        return self.sequence.length()

    def item(self, index):
        position = index if type(self.start) is int and self.start == 0 else index + self.start
        return python_number(position, position.dtype), self.sequence.item(index)


class Zip:
    __ag_staged_iterable__ = True
    __iter__ = _not_iterable("zip")

    def __init__(self, sequences):
        self.sequences = sequences
        self.index_dtype = dtypes.result_type(*[s.index_dtype for s in sequences])

    def length(self):
        lengths = [s.length() for s in self.sequences]
        result = lengths[0]
        for other in lengths[1:]:
            if isinstance(result, int) and isinstance(other, int):
                result = min(result, other)
            else:
                result = ops.minimum(result, other)
        return result

    def item(self, index):
        return tuple(s.item(index) for s in self.sequences)


def as_sequence(iterable, where):
    if isinstance(iterable, Tensor):
        if iterable.op.type == "Range" and dtypes.is_integer(iterable.dtype):
            # rt.range(...): count instead of materializing the range and gathering from it
            return TensorRange(*[static_int(t) for t in iterable.op.inputs], dtype=iterable.dtype,
                               python_ints=False)
        return TensorItems(iterable, where)
    if isinstance(iterable, (TensorRange, Enumerate, Zip)):
        return iterable
    if isinstance(iterable, range):
        return TensorRange(iterable.start, iterable.stop, iterable.step)
    if type(iterable) in (list, tuple) and iterable:
        return TensorItems(staged_list.stack(list(iterable), label="iterable", where=where), where)
    raise TracingError(
        f"{where} iterates over {type(iterable).__name__} {iterable!r} together with tensors; a tensor loop "
        "can iterate over tensors, range() and non-empty lists of numbers or tensors."
    )
