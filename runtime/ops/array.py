"""Array ops: shapes, building and combining tensors, selection and gathering.

``Reshape(x, shape)`` and ``Fill(dims, value)`` take their target shape as an
int tensor (as in TensorFlow), so a shape computed while tracing works; the
static output shape comes from whatever of that tensor is known at trace
time (constants, ``Shape`` of a statically shaped tensor, stacks of those).
``Shape`` and ``Size`` give int32 by default; ``Pack`` (stack), ``ConcatV2``
(concat), ``Select`` (where), ``Range`` and ``GatherV2`` follow numpy's
``stack``, ``concatenate``, ``where``, ``arange`` and ``take``; ``ListAppend``
appends to a staged list as a TensorArray does (its first element sets the
element shape).
``zeros``/``ones`` default to float32, as in TensorFlow.
"""

from __future__ import annotations

import math as _math

import numpy as np

from autograph.runtime.core import dtypes, opdef, shapes

from autograph.runtime.ops import apply
from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import user_location_text
from autograph.runtime.errors import TracingError
from autograph.runtime.ops.common import check_int_attr, normalize_axis, promote
from autograph.runtime.ops.static_values import partial_value, static_value
from autograph.runtime.core.tensor import Tensor, is_python_number


def _shape_arg(shape):
    """A shape argument (tuple/list of ints and scalar tensors, or a 1-D int tensor) as an op input."""
    if isinstance(shape, Tensor):
        return shape
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    if isinstance(shape, np.ndarray):
        return shape.astype(np.int32) if shape.dtype.kind in "iu" else shape
    parts = list(shape)
    if any(p is None for p in parts):
        raise TracingError(
            f"the shape {tuple(parts)} has an unknown dimension (None) at {user_location_text()}: a static "
            "size such as x.shape[0] is None when it is only known while the graph runs. Use the "
            "dynamic size instead: rt.shape(x)[0]."
        )
    if any(isinstance(p, Tensor) for p in parts):
        return stack([p if isinstance(p, Tensor) else np.int32(p) for p in parts])
    return np.asarray(parts, dtype=np.int32).reshape(len(parts))


def _check_shape_tensor(t, what):
    if not dtypes.is_integer(t.dtype):
        raise TypeError(f"{what} must be integers, got {t.dtype.name} tensor {t.name}")
    if t.shape is not None and len(t.shape) != 1:
        raise ValueError(f"{what} must be a 1-D tensor (a list of sizes), got shape {shapes.format_shape(t.shape)}")


# -- Reshape, Shape, Size ---------------------------------------------------


def reshaped_shape(in_shape, target):
    """Static result of reshaping ``in_shape`` to ``target`` (list of int, -1 or None=unknown)."""
    if target is None:
        return None
    if sum(1 for d in target if d == -1) > 1:
        raise ValueError(f"reshape to {target}: at most one dimension may be -1")
    if any(d is not None and d < -1 for d in target):
        raise ValueError(f"reshape to {target}: negative dimension")
    known_in = shapes.is_fully_defined(in_shape)
    size_in = int(np.prod(in_shape, dtype=np.int64)) if known_in else None
    known_out = [d for d in target if d is not None and d != -1]
    product = int(np.prod(known_out, dtype=np.int64))
    if -1 in target:
        if size_in is not None and None not in target:
            if product == 0 or size_in % product:
                raise ValueError(
                    f"cannot reshape a tensor of shape {shapes.format_shape(in_shape)} ({size_in} elements) "
                    f"to {list(target)}: the known dimensions do not divide the size"
                )
            return tuple(size_in // product if d == -1 else d for d in target)
        return tuple(None if d == -1 else d for d in target)
    if size_in is not None and None not in target and product != size_in:
        raise ValueError(
            f"cannot reshape a tensor of shape {shapes.format_shape(in_shape)} ({size_in} elements) to "
            f"{list(target)} ({product} elements)"
        )
    return tuple(target)


def _reshape_infer(inputs, attrs):
    x, shape = inputs
    _check_shape_tensor(shape, "the target shape of reshape")
    target = partial_value(shape)
    return [(x.dtype, reshaped_shape(x.shape, target))]


opdef.register("Reshape", infer=_reshape_infer, cost=0, inputs=2)


def reshape(x, shape, name=None):
    """``x`` with the same elements in ``shape`` (one dimension may be -1)."""
    return apply.apply_op("Reshape", [x, _shape_arg(shape)], name=name)


def _shape_infer(inputs, attrs):
    (x,) = inputs
    rank = None if x.shape is None else len(x.shape)
    return [(dtypes.as_dtype(attrs["out_type"]), (rank,))]


opdef.register("Shape", infer=_shape_infer, cost=0, inputs=1, attrs={"out_type": "dtype"})
opdef.register("Size", infer=lambda inputs, attrs: [(dtypes.as_dtype(attrs["out_type"]), ())], cost=0, inputs=1,
               attrs={"out_type": "dtype"})


def shape(x, out_type="int32", name=None):
    """The dynamic shape of ``x`` as a 1-D int tensor (``x.shape`` is the static one)."""
    return apply.apply_op("Shape", [x], {"out_type": dtypes.as_dtype(out_type)}, name=name)


def size(x, out_type="int32", name=None):
    """The number of elements of ``x``."""
    return apply.apply_op("Size", [x], {"out_type": dtypes.as_dtype(out_type)}, name=name)


def _transpose_infer(inputs, attrs):
    (x,) = inputs
    perm = attrs["perm"]
    if x.shape is None:
        return [(x.dtype, None if perm is None else (None,) * len(perm))]
    rank = len(x.shape)
    perm = tuple(reversed(range(rank))) if perm is None else perm
    if sorted(normalize_axis(p, rank) for p in perm) != list(range(rank)):
        raise ValueError(f"transpose: axes {perm} do not match a tensor of rank {rank}")
    return [(x.dtype, tuple(x.shape[p] for p in perm))]


opdef.register("Transpose", infer=_transpose_infer, weak=opdef.weak_if_first_input_weak, inputs=1,
               attrs={"perm": "plain"})


def transpose(x, perm=None, name=None):
    """``np.transpose(x, perm)``: the axes permuted (reversed when ``perm`` is None)."""
    perm = None if perm is None else tuple(check_int_attr(p, "an axis") for p in perm)
    return apply.apply_op("Transpose", [x], {"perm": perm}, name=name)


# -- Pack, ConcatV2 ---------------------------------------------------------


def _pack_infer(inputs, attrs):
    if not inputs:
        raise ValueError("stack needs at least one tensor")
    dtype = dtypes.result_type(*[t.dtype for t in inputs])
    merged = inputs[0].shape
    for t in inputs[1:]:
        if not shapes.is_compatible(merged, t.shape):
            raise ValueError(
                f"stack needs tensors of one shape, got {shapes.format_shape(inputs[0].shape)} "
                f"({inputs[0].name}) and {shapes.format_shape(t.shape)} ({t.name})"
            )
        merged = shapes.merge(merged, t.shape)
    if merged is None:
        return [(dtype, None)]
    axis = normalize_axis(attrs["axis"], len(merged) + 1)
    return [(dtype, merged[:axis] + (len(inputs),) + merged[axis:])]


# weak (attr): the stacked elements of a staged list of Python numbers (``tracing/staged_list.py``)
opdef.register("Pack", infer=_pack_infer, weak=opdef.weak_from_attr, inputs=(0, None),
               attrs={"axis": "axis", "weak": opdef.optional("bool", False)})


def stack(values, axis=0, name=None, weak=False):
    """Stacks tensors of one shape along a new ``axis``; ``weak`` (while tracing) for a staged list
    of Python numbers (strongly typed otherwise, as ``np.stack`` of Python numbers is).

    As in numpy, a single tensor (or array) is a sequence of its rows, so
    stacking it along axis 0 gives it back: a staged list that came out of
    a tensor loop is already stacked.
    """
    if isinstance(values, (Tensor, np.ndarray)):
        if check_int_attr(axis, "axis") != 0:
            raise ValueError(f"stack of a single tensor supports only axis=0, got axis={axis}")
        return apply.apply_op("Identity", [values], name=name)
    return _join("Pack", values, axis, weak, name)


def _concat_infer(inputs, attrs):
    if not inputs:
        raise ValueError("concat needs at least one tensor")
    dtype = dtypes.result_type(*[t.dtype for t in inputs])
    known = [t for t in inputs if t.shape is not None]
    if not known:
        return [(dtype, None)]
    rank = len(known[0].shape)
    if rank == 0:
        raise ValueError(f"concat of scalars ({known[0].name}): use stack to build a vector from scalars")
    axis = normalize_axis(attrs["axis"], rank)
    out = list(known[0].shape)
    total = 0
    for t in known:
        if len(t.shape) != rank:
            raise ValueError(
                f"concat needs tensors of one rank, got {shapes.format_shape(known[0].shape)} "
                f"({known[0].name}) and {shapes.format_shape(t.shape)} ({t.name})"
            )
        for i, d in enumerate(t.shape):
            if i == axis:
                continue
            if out[i] is not None and d is not None and out[i] != d:
                raise ValueError(
                    f"concat along axis {axis}: dimension {i} differs between {known[0].name} "
                    f"{shapes.format_shape(known[0].shape)} and {t.name} {shapes.format_shape(t.shape)}"
                )
            out[i] = d if out[i] is None else out[i]
    for t in inputs:
        d = None if t.shape is None else t.shape[axis]
        total = None if total is None or d is None else total + d
    out[axis] = total
    return [(dtype, tuple(out))]


opdef.register("ConcatV2", infer=_concat_infer, weak=opdef.weak_from_attr, inputs=(0, None),
               attrs={"axis": "axis", "weak": opdef.optional("bool", False)})


def concat(values, axis=0, name=None, weak=False):
    """Joins tensors along an existing ``axis``; ``weak`` as for ``stack``."""
    return _join("ConcatV2", values, axis, weak, name)


def _join(op_type, values, axis, weak, name):
    """A ``Pack`` or ``ConcatV2`` of ``values`` (promoted to one dtype) along ``axis``."""
    values = promote(list(values), lists=False)  # a staged list's elements keep their weak typing
    attrs = {"axis": check_int_attr(axis, "axis")}
    if weak:
        attrs["weak"] = True
    return apply.apply_op(op_type, values, attrs, name=name)


# -- ListAppend (staged lists: tracing/staged_list.py) -----------------------


def _list_append_infer(inputs, attrs):
    target, item = inputs
    if target.dtype != item.dtype:
        raise ValueError(f"list append of a {item.dtype.name} item to a list of {target.dtype.name} elements")
    if target.shape is None or item.shape is None:
        return [(target.dtype, None)]
    if not target.shape:
        raise ValueError(f"list append to the scalar {target.name}: a staged list has a first (length) axis")
    length = target.shape[0]
    if length == 0:  # an empty list's element shape means nothing: the item gives it
        return [(target.dtype, (1, *item.shape))]
    element = shapes.relax(target.shape[1:], item.shape)
    if element is None:
        return [(target.dtype, None)]
    return [(target.dtype, (None if length is None else length + 1, *element))]


opdef.register("ListAppend", infer=_list_append_infer, weak=opdef.weak_if_all_inputs_weak, inputs=2,
               attrs={"label": "plain"})


def list_append(target, item, label="the list", name=None):
    """``target`` (elements stacked on the first axis) with ``item`` appended, TensorArray-like.

    The elements' shape is the first element's: an empty ``target`` takes
    the item's shape whatever its trailing dimensions (so an empty list of
    elements of an unknown shape can start as a ``(0, 0)`` array); an item
    of another shape than the elements so far fails when the graph runs,
    naming ``label`` (``"the list 'rows' of the for loop at f.py:3"``).
    Static shapes: element dimensions that differ become unknown.
    """
    return apply.apply_op("ListAppend", [target, item], {"label": label}, name=name)


# -- Select -----------------------------------------------------------------


def _select_infer(inputs, attrs):
    cond, x, y = inputs
    dtype = dtypes.result_type(x.dtype, y.dtype)
    try:
        out = shapes.broadcast(cond.shape, shapes.broadcast(x.shape, y.shape))
    except ValueError:
        raise ValueError(
            f"where: condition {shapes.format_shape(cond.shape)} ({cond.name}), x "
            f"{shapes.format_shape(x.shape)} ({x.name}) and y {shapes.format_shape(y.shape)} ({y.name}) "
            "cannot be broadcast together"
        ) from None
    return [(dtype, out)]


opdef.register("Select", infer=_select_infer, inputs=3)


def where(condition, x=None, y=None, name=None):
    """Elementwise ``x if condition else y`` with broadcasting (``np.where`` with three arguments)."""
    if x is None or y is None:
        raise TypeError(
            "rt.where needs x and y: the one-argument form (indices of true elements) has a data-dependent "
            "shape and is not supported; use rt.where(condition, x, y)"
        )
    x, y = promote([x, y])
    return apply.apply_op("Select", [condition, x, y], name=name)


# -- Range, Fill, ZerosLike, OnesLike ----------------------------------------


def range_length(start, limit, delta) -> int:
    """The number of elements of ``np.arange(start, limit, delta)``."""
    if delta == 0:
        raise ValueError("range: delta must not be zero")
    return max(0, _math.ceil((limit - start) / delta))


def _range_infer(inputs, attrs):
    for t, what in zip(inputs, ("start", "limit", "delta")):
        if t.shape is not None and t.shape != ():
            raise ValueError(f"range: {what} must be a scalar, got shape {shapes.format_shape(t.shape)} ({t.name})")
    values = [static_value(t) for t in inputs]
    length = None
    if all(v is not None for v in values):
        length = range_length(*(v.item() for v in values))
    return [(dtypes.as_dtype(attrs["dtype"]), (length,))]


opdef.register("Range", infer=_range_infer, inputs=3, attrs={"dtype": "dtype"})


def tensor_range(start, limit=None, delta=1, dtype=None, name=None):
    """``rt.range``: like ``np.arange`` (``range(n)`` or ``range(start, limit, delta)``)."""
    if limit is None:
        start, limit = 0, start
    values = promote([start, limit, delta])
    if dtype is None:
        dtype = dtypes.result_type(*[v if is_python_number(v) else v.dtype for v in values])
    dtype = dtypes.as_dtype(dtype)
    values = [np.asarray(v, dtype) if is_python_number(v) else v for v in values]
    return apply.apply_op("Range", values, {"dtype": dtype}, name=name)


def _fill_infer(inputs, attrs):
    dims, value = inputs
    _check_shape_tensor(dims, "the shape of fill")
    if value.shape is not None and value.shape != ():
        raise ValueError(f"fill: the value must be a scalar, got shape {shapes.format_shape(value.shape)}")
    target = partial_value(dims)
    if target is not None and any(d is not None and d < 0 for d in target):
        raise ValueError(f"fill: negative dimension in {target}")
    return [(value.dtype, None if target is None else tuple(target))]


opdef.register("Fill", infer=_fill_infer, inputs=2)


def fill(dims, value, name=None):
    """A tensor of shape ``dims`` with every element ``value``."""
    return apply.apply_op("Fill", [_shape_arg(dims), value], name=name)


def zeros(shape, dtype="float32", name=None):
    """Zeros of ``shape`` (float32 unless ``dtype`` says otherwise)."""
    dtype = dtypes.as_dtype(dtype)
    if current_graph() is None and not isinstance(shape, Tensor):
        return apply.eager_result(np.zeros(tuple(_eager_dims(shape)), dtype))
    return fill(shape, np.zeros((), dtype), name=name or "zeros")


def ones(shape, dtype="float32", name=None):
    """Ones of ``shape`` (float32 unless ``dtype`` says otherwise)."""
    dtype = dtypes.as_dtype(dtype)
    if current_graph() is None and not isinstance(shape, Tensor):
        return apply.eager_result(np.ones(tuple(_eager_dims(shape)), dtype))
    return fill(shape, np.ones((), dtype), name=name or "ones")


def _eager_dims(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return [int(d) for d in np.asarray(shape).reshape(-1)]


def _like_infer(inputs, attrs):
    (x,) = inputs
    return [(x.dtype if attrs["dtype"] is None else dtypes.as_dtype(attrs["dtype"]), x.shape)]


opdef.register("ZerosLike", infer=_like_infer, inputs=1, attrs={"dtype": "dtype_or_none"})
opdef.register("OnesLike", infer=_like_infer, inputs=1, attrs={"dtype": "dtype_or_none"})


def zeros_like(x, dtype=None, name=None):
    """Zeros with the shape (and, unless given, the dtype) of ``x``."""
    dtype = None if dtype is None else dtypes.as_dtype(dtype)
    return apply.apply_op("ZerosLike", [x], {"dtype": dtype}, name=name)


def ones_like(x, dtype=None, name=None):
    """Ones with the shape (and, unless given, the dtype) of ``x``."""
    dtype = None if dtype is None else dtypes.as_dtype(dtype)
    return apply.apply_op("OnesLike", [x], {"dtype": dtype}, name=name)


# -- GatherV2 ---------------------------------------------------------------


def _gather_infer(inputs, attrs):
    params, indices = inputs
    if not dtypes.is_integer(indices.dtype):
        raise TypeError(f"gather: indices must be integers, got {indices.dtype.name} tensor {indices.name}")
    if params.shape is None:
        return [(params.dtype, None)]
    if len(params.shape) == 0:
        raise ValueError(f"gather from the scalar {params.name}: params must have at least one dimension")
    axis = normalize_axis(attrs["axis"], len(params.shape))
    if indices.shape is None:
        return [(params.dtype, None)]
    size = params.shape[axis]
    value = static_value(indices)
    if value is not None and size is not None and value.size:
        bad = value[(value >= size) | (value < -size)]
        if bad.size:
            raise IndexError(f"gather: index {int(bad.reshape(-1)[0])} is out of bounds for axis {axis} with size {size}")
    return [(params.dtype, params.shape[:axis] + indices.shape + params.shape[axis + 1 :])]


opdef.register("GatherV2", infer=_gather_infer, weak=opdef.weak_if_first_input_weak, inputs=2,
               attrs={"axis": "axis"})


def gather(params, indices, axis=0, name=None):
    """Elements of ``params`` at ``indices`` along ``axis`` (``np.take``)."""
    if not isinstance(indices, Tensor):
        indices = np.asarray(indices)
        if indices.dtype.kind not in "iu":
            raise TypeError(f"gather: indices must be integers, got {indices.dtype.name} values")
    return apply.apply_op("GatherV2", [params, indices], {"axis": check_int_attr(axis, "axis")}, name=name)
