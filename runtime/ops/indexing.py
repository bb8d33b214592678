"""Indexing a tensor: ``t[i]``, ``t[1:-1, ::2]``, ``t[..., None]``, ``t[idx]``.

Basic indexing becomes one ``StridedSlice`` op whose ``spec`` attribute
spells the index, one item per entry of the key::

    ("index", i)                   an integer: removes the dimension
    ("slice", start, stop, step)   a slice (None for omitted parts)
    ("newaxis",)                   None / np.newaxis: inserts a dimension of 1
    ("ellipsis",)                  ...: as many full slices as needed

Any integer in the spec may instead be the string ``"$k"``: the value of the
op's input ``k`` (a scalar int tensor), so ``t[i]`` with a tensor ``i`` and
``t[:n]`` work while tracing.  A non-scalar integer index (a tensor, list or
array) selects along its dimension with ``GatherV2``, as numpy's integer
array indexing does for a single index array.  Static shapes follow numpy;
a constant index out of range for a known dimension is an ``IndexError``
at trace time.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import dtypes, opdef, shapes

from autograph.runtime.ops import apply
from autograph.runtime.ops.array import gather
from autograph.runtime.core.tensor import Tensor

_FULL = ("slice", None, None, None)


def sliced_shape(shape, spec):
    """Static shape of ``x[spec]`` for ``x`` of ``shape``; IndexError/ValueError when it is invalid."""
    consuming = sum(1 for item in spec if item[0] in ("index", "slice"))
    if shape is None:
        return None
    rank = len(shape)
    if consuming > rank:
        raise IndexError(f"too many indices ({consuming}) for a tensor of rank {rank}")
    out = []
    dim = 0
    for item in spec:
        kind = item[0]
        if kind == "newaxis":
            out.append(1)
        elif kind == "ellipsis":
            n = rank - consuming
            out.extend(shape[dim : dim + n])
            dim += n
        elif kind == "index":
            size, index = shape[dim], item[1]
            if isinstance(index, int) and size is not None and not -size <= index < size:
                raise IndexError(f"index {index} is out of bounds for axis {dim} with size {size}")
            dim += 1
        else:
            size = shape[dim]
            start, stop, step = item[1:]
            if step == 0:
                raise ValueError("slice step cannot be zero")
            static = not any(isinstance(v, str) for v in (start, stop, step))
            out.append(len(range(*slice(start, stop, step).indices(size))) if static and size is not None else None)
            dim += 1
    out.extend(shape[dim:])
    return tuple(out)


def _strided_slice_infer(inputs, attrs):
    x, *dynamic = inputs
    for t in dynamic:
        if not dtypes.is_integer(t.dtype) or (t.shape is not None and t.shape != ()):
            raise TypeError(
                f"a tensor used in an index must be an integer scalar, got {t.name} "
                f"{t.dtype.name}{shapes.format_shape(t.shape)}"
            )
    return [(x.dtype, sliced_shape(x.shape, attrs["spec"]))]


opdef.register("StridedSlice", infer=_strided_slice_infer, weak=opdef.weak_if_first_input_weak)


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


class _SpecBuilder:
    """Turns key entries into spec items, collecting tensor-valued ints as inputs."""

    def __init__(self):
        self.dynamic = []

    def scalar(self, v, what):
        if v is None:
            return None
        if _is_int(v):
            return int(v)
        if isinstance(v, Tensor):
            if not dtypes.is_integer(v.dtype) or (v.shape is not None and v.shape != ()):
                raise TypeError(
                    f"{what} must be an int or an integer scalar tensor, got {v.name} "
                    f"{v.dtype.name}{shapes.format_shape(v.shape)}"
                )
            self.dynamic.append(v)
            return f"${len(self.dynamic)}"
        if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind in "iu":
            return int(v)
        raise TypeError(f"{what} must be an int, None or an integer scalar tensor, got {v!r}")

    def item(self, entry):
        if entry is None:
            return ("newaxis",)
        if entry is Ellipsis:
            return ("ellipsis",)
        if isinstance(entry, slice):
            return (
                "slice",
                self.scalar(entry.start, "a slice start"),
                self.scalar(entry.stop, "a slice stop"),
                self.scalar(entry.step, "a slice step"),
            )
        return ("index", self.scalar(entry, "an index"))


def _is_advanced(entry) -> bool:
    """True for an index that selects several positions (integer array / list / tensor of rank > 0)."""
    if isinstance(entry, Tensor):
        return entry.shape is None or len(entry.shape) > 0
    if isinstance(entry, (list, np.ndarray)):
        return np.ndim(entry) > 0
    return False


def _check_advanced(entry):
    dtype = entry.dtype if isinstance(entry, Tensor) else np.asarray(entry).dtype
    if dtypes.is_bool(dtype):
        raise TypeError(
            "indexing with a boolean mask gives a data-dependent shape and is not supported; "
            "use rt.where(mask, x, fill_value) to select elementwise"
        )
    if not dtypes.is_integer(dtype):
        raise TypeError(f"an index array must hold integers, got {dtype}")


def getitem(tensor, key):
    """``tensor[key]`` with numpy semantics: ``StridedSlice`` and, for an index array, ``GatherV2``."""
    if not isinstance(key, tuple):
        key = (key,)
    if sum(1 for e in key if e is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    advanced = [i for i, e in enumerate(key) if _is_advanced(e)]
    if not advanced:
        builder = _SpecBuilder()
        spec = tuple(builder.item(e) for e in key)
        if all(item == _FULL for item in spec) or not spec:
            return tensor
        return apply.apply_op("StridedSlice", [tensor, *builder.dynamic], {"spec": spec}, name="strided_slice")
    if len(advanced) > 1:
        raise TypeError(
            "indexing with more than one index array is not supported; gather one axis at a time (rt.gather)"
        )
    (position,) = advanced
    _check_advanced(key[position])
    ints = [i for i, e in enumerate(key) if not _is_advanced(e) and not isinstance(e, slice) and e is not None and e is not Ellipsis]
    group = sorted(ints + [position])
    if ints and group != list(range(group[0], group[-1] + 1)):
        raise TypeError(
            "an index array separated from integer indices by slices follows numpy's transposing rule, "
            "which is not supported; index in two steps (first the integers, then the array)"
        )
    axis = _gather_axis(tensor, key, position)
    rest = key[:position] + (slice(None),) + key[position + 1 :]
    return gather(getitem(tensor, rest), key[position], axis=axis)


def _gather_axis(tensor, key, position) -> int:
    """The axis, after basic indexing, where the index array at ``key[position]`` lands."""
    consuming = sum(1 for e in key if e is not None and e is not Ellipsis)
    axis = 0
    for e in key[:position]:
        if e is Ellipsis:
            if tensor.shape is None:
                raise TypeError("an index array after '...' needs a tensor of known rank")
            axis += len(tensor.shape) - consuming
        elif isinstance(e, slice) or e is None:
            axis += 1
    return axis
