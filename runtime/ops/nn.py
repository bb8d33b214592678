"""Ops that models and gradients need.

Model ops (``rt.*``), each a definition here, a numpy kernel and a gradient
rule (``autodiff/nn_grads.py``): ``Sigmoid``, ``Softmax`` / ``LogSoftmax``
(attr ``axis``; computed stably, from ``x - max``), ``LogSumExp`` (a
reduction: ``axis``, ``keepdims``), ``Cumsum`` (``axis``), ``Tile``
(``multiples``, as ``np.tile``).  ``expand_dims``, ``squeeze``,
``one_hot``, ``clip_by_value``, ``broadcast_to``, ``reduce_variance`` and
``reduce_std`` are compositions of other ops (and differentiate through them).

Ops of the gradients themselves: ``SumToShape`` (the adjoint of
broadcasting), ``ScatterAdd`` (the adjoint of ``GatherV2``) and
``StackPush`` (the accumulators of a ``While``'s gradient).

* ``SumToShape(g, shape)`` -- ``g`` summed over the axes that broadcasting
  ``shape`` up to ``g``'s shape added or stretched (leading axes, and axes
  of size 1 in ``shape``), as a tensor of ``shape``.  The gradient of every
  broadcasting op goes through it once (``autodiff/backprop.py``) when a
  shape is known only while the graph runs.
* ``ScatterAdd(updates, indices, dims; axis)`` -- zeros of shape ``dims``
  with ``updates`` added at ``indices`` along ``axis`` (repeated indices
  add up, as ``np.add.at``): ``updates`` has the shape ``np.take(zeros,
  indices, axis)`` would have.
* ``StackRead(buffer, index)`` -- entry ``index`` of a ``StackPush`` buffer
  (a copy), which the gradient ``While`` reads backwards.
* ``StackPush(buffer, index, item; ragged, label)`` -- ``buffer`` (entries
  on the first axis) with entry ``index`` set to ``item``: a forward loop
  pushes the value of iteration ``index`` (``autodiff/while_grad.py``).  The
  buffer grows by doubling, so a push costs one copy of the item: the
  kernel writes into the buffer it gets, which is only ever the loop
  variable's own (it starts empty, and the first push allocates).  Entries
  past the pushes made are never read (``StackRead``).  An item of another
  shape than the entries so far is an error naming ``label``, except with
  ``ragged`` (an item whose static shape has unknown dimensions: an inner
  loop's accumulator, a list grown in the loop): entries are then padded
  with zeros to a common shape, and the gradient pushes each item's shape
  beside it to crop the entry it reads back.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import dtypes, opdef, shapes
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.errors import TracingError
from autograph.runtime.ops import apply, array, math, reduction
from autograph.runtime.ops.common import check_int_attr, dtype_of, normalize_axis
from autograph.runtime.ops.static_values import partial_value
from autograph.runtime.ops.basic import cast, identity


def _check_dims(t, what):
    if not dtypes.is_integer(t.dtype) or (t.shape is not None and len(t.shape) != 1):
        raise TypeError(f"{what} must be a 1-D int tensor, got {t.name} {t.dtype.name}{shapes.format_shape(t.shape)}")


def _sum_to_shape_infer(inputs, attrs):
    g, shape = inputs
    _check_dims(shape, "the target shape of SumToShape")
    target = partial_value(shape)
    if target is not None and g.shape is not None:
        if len(target) > len(g.shape):
            raise ValueError(f"SumToShape: {g.name} of shape {shapes.format_shape(g.shape)} has fewer axes "
                             f"than the target shape {target}")
    return [(g.dtype, None if target is None else tuple(target))]


def _scatter_add_infer(inputs, attrs):
    updates, indices, dims = inputs
    if not dtypes.is_integer(indices.dtype):
        raise TypeError(f"ScatterAdd: indices must be integers, got {indices.dtype.name} tensor {indices.name}")
    _check_dims(dims, "the shape of ScatterAdd")
    target = partial_value(dims)
    if target is not None:
        normalize_axis(attrs["axis"], len(target))
    return [(updates.dtype, None if target is None else tuple(target))]


def _stack_push_infer(inputs, attrs):
    buffer, index, item = inputs
    if not dtypes.is_integer(index.dtype) or index.shape not in ((), None):
        raise TypeError(f"StackPush: the index must be an int scalar, got {index.name}")
    if buffer.dtype != item.dtype:
        raise TypeError(f"StackPush of a {item.dtype.name} item onto a {buffer.dtype.name} buffer")
    if buffer.shape is None or item.shape is None or len(buffer.shape) != len(item.shape) + 1:
        return [(buffer.dtype, None)]
    return [(buffer.dtype, (None, *shapes.relax(buffer.shape[1:], item.shape)))]


opdef.register("SumToShape", infer=_sum_to_shape_infer, inputs=2)
opdef.register("StackPush", infer=_stack_push_infer, inputs=3, attrs={"label": "plain", "ragged": "plain"})


def _stack_read_infer(inputs, attrs):
    buffer, index = inputs
    if not dtypes.is_integer(index.dtype) or index.shape not in ((), None):
        raise TypeError(f"StackRead: the index must be an int scalar, got {index.name}")
    if buffer.shape is not None and not buffer.shape:
        raise ValueError(f"StackRead from the scalar {buffer.name}: a stack has a first (entries) axis")
    return [(buffer.dtype, None if buffer.shape is None else buffer.shape[1:])]


opdef.register("StackRead", infer=_stack_read_infer, cost=0, inputs=2)
opdef.register("ScatterAdd", infer=_scatter_add_infer, inputs=3, attrs={"axis": "axis"})


def sum_to_shape(g, shape, name=None):
    """``g`` summed down to ``shape`` (an int tensor or a tuple of ints), undoing broadcasting."""
    return apply.apply_op("SumToShape", [g, shape], name=name)


def scatter_add(updates, indices, dims, axis=0, name=None):
    """Zeros of shape ``dims`` plus ``updates`` at ``indices`` along ``axis`` (``np.add.at``)."""
    return apply.apply_op("ScatterAdd", [updates, indices, dims], {"axis": int(axis)}, name=name)


def stack_read(buffer, index, name=None):
    """Entry ``index`` of the stack ``buffer``."""
    return apply.apply_op("StackRead", [buffer, index], name=name)


def stack_push(buffer, index, item, label, ragged=False, name=None):
    """``buffer`` with entry ``index`` set to ``item`` (growing it as needed; see the module docstring)."""
    return apply.apply_op("StackPush", [buffer, index, item], {"ragged": bool(ragged), "label": label}, name=name)


# -- model ops ----------------------------------------------------------------------------


def _float_input(x, what):
    if x.dtype.kind != "f":
        raise TypeError(f"{what} needs a float tensor, got {x.name} {x.dtype.name}; cast it with rt.cast")


def _elementwise_infer(inputs, attrs):
    (x,) = inputs
    _float_input(x, "sigmoid")
    return [(x.dtype, x.shape)]


def _axis_infer(inputs, attrs):
    (x,) = inputs
    _float_input(x, "softmax")
    if x.shape is not None:
        normalize_axis(attrs["axis"], len(x.shape))
    return [(x.dtype, x.shape)]


def _logsumexp_infer(inputs, attrs):
    (x,) = inputs
    _float_input(x, "reduce_logsumexp")
    return [(x.dtype, reduction.reduced_shape(x.shape, attrs["axis"], attrs["keepdims"]))]


def _cumsum_infer(inputs, attrs):
    (x,) = inputs
    if x.shape is not None:
        normalize_axis(attrs["axis"], len(x.shape))
    kind = x.dtype.kind
    dtype = np.dtype(np.int_) if kind in "bi" and x.dtype.itemsize < 8 else np.dtype(np.uint) if kind == "u" else x.dtype
    return [(dtype, x.shape)]


def _tile_infer(inputs, attrs):
    (x,) = inputs
    multiples = attrs["multiples"]
    if x.shape is None:
        return [(x.dtype, None)]
    rank = max(len(x.shape), len(multiples))
    dims = (1,) * (rank - len(x.shape)) + tuple(x.shape)
    reps = (1,) * (rank - len(multiples)) + tuple(multiples)
    return [(x.dtype, tuple(None if d is None else d * m for d, m in zip(dims, reps)))]


opdef.register("Sigmoid", infer=_elementwise_infer, cost=10, inputs=1)
opdef.register("Softmax", infer=_axis_infer, cost=12, inputs=1, attrs={"axis": "axis"})
opdef.register("LogSoftmax", infer=_axis_infer, cost=12, inputs=1, attrs={"axis": "axis"})
opdef.register("LogSumExp", infer=_logsumexp_infer, cost=12, inputs=1,
               attrs={"axis": "axis", "keepdims": "bool"})
opdef.register("Cumsum", infer=_cumsum_infer, inputs=1, attrs={"axis": "axis"})
opdef.register("Tile", infer=_tile_infer, inputs=1, attrs={"multiples": "plain"})


def sigmoid(x, name=None):
    """``1 / (1 + exp(-x))``, without overflow for large ``|x|``."""
    return apply.apply_op("Sigmoid", [x], name=name)


def softmax(x, axis=-1, name=None):
    """``exp(x) / sum(exp(x))`` along ``axis``."""
    return apply.apply_op("Softmax", [x], {"axis": check_int_attr(axis, "axis")}, name=name)


def log_softmax(x, axis=-1, name=None):
    """``x - log(sum(exp(x)))`` along ``axis``."""
    return apply.apply_op("LogSoftmax", [x], {"axis": check_int_attr(axis, "axis")}, name=name)


def reduce_logsumexp(x, axis=None, keepdims=False, name=None):
    """``log(sum(exp(x)))`` over ``axis``, without overflow."""
    return reduction.reduce("LogSumExp", x, axis, keepdims, name)


def reduce_variance(x, axis=None, keepdims=False, ddof=0, name=None):
    """``np.var``: the squared deviations from the mean, summed over ``axis`` and divided by
    ``n - ddof`` (``n`` the count of reduced elements), step by step as numpy
    computes it, so the value is numpy's to the bit: the mean and the final quotient divided in
    float64 and cast back to ``x``'s float dtype; bools and integers in float64 throughout.
    (``ddof``: a Python int, or a float as numpy takes it.)"""
    if type(ddof) is not float:
        ddof = check_int_attr(ddof, "ddof")
    dtype = dtype_of(x)
    if dtype.kind not in "biuf":
        raise TypeError(f"reduce_variance of a {dtype.name} tensor; cast it to a float or integer dtype")
    if dtype.kind == "f":
        total = reduction.reduce_sum(x, axis, keepdims=True)
        count = _reduced_count(x, total)
        mean = cast(math.divide(cast(total, dtypes.float64), count), dtype)
        deviations = math.subtract(x, mean)
    else:  # numpy sums the integers in float64 (np.mean) and subtracts in float64
        mean = reduction.reduce_mean(x, axis, keepdims=True)
        count = _reduced_count(x, mean)
        deviations = math.subtract(cast(x, dtypes.float64), mean)
    squares = reduction.reduce_sum(math.square(deviations), axis, keepdims=keepdims)
    kept = max(count - ddof, 0) if isinstance(count, int) else math.maximum(math.subtract(count, ddof), 0)
    variance = math.divide(cast(squares, dtypes.float64), kept)
    return cast(variance, dtype, name=name) if dtype.kind == "f" else identity(variance, name=name)


def reduce_std(x, axis=None, keepdims=False, ddof=0, name=None):
    """``np.std``: the square root of ``reduce_variance``."""
    return math.sqrt(reduce_variance(x, axis, keepdims, ddof), name=name)


def _reduced_count(x, reduced):
    """How many elements of ``x`` each element of ``reduced`` (``x`` reduced with ``keepdims``)
    stands for: a Python int when the shapes are static, else an int64 tensor."""
    have = x.shape if isinstance(x, (Tensor, np.ndarray, np.generic)) else np.shape(x)
    if have is not None and None not in have:
        kept = reduced.shape
        return int(np.prod([d for d, k in zip(have, kept) if k == 1 and d != 1], dtype=np.int64))
    whole = array.size(x, out_type="int64")
    return math.floordiv(whole, math.maximum(array.size(reduced, out_type="int64"), 1))


def cumsum(x, axis=0, name=None):
    """Running sums along ``axis`` (``np.cumsum``)."""
    return apply.apply_op("Cumsum", [x], {"axis": check_int_attr(axis, "axis")}, name=name)


def tile(x, multiples, name=None):
    """``x`` repeated ``multiples[i]`` times along axis ``i`` (``np.tile``; ``multiples`` Python ints)."""
    multiples = tuple(check_int_attr(m, "multiples") for m in multiples)
    if any(m < 0 for m in multiples):
        raise ValueError(f"tile: multiples must not be negative, got {multiples}")
    return apply.apply_op("Tile", [x], {"multiples": multiples}, name=name)


def _static_shape(x, what):
    shape = x.shape if isinstance(x, (Tensor, np.ndarray, np.generic)) else np.shape(x)
    if shape is None or None in shape:
        raise TracingError(f"{what} needs a tensor of static shape, got {getattr(x, 'name', 'a value')} of shape "
                           f"{shapes.format_shape(shape)}; use rt.reshape with rt.shape(x) instead")
    return tuple(shape)


def expand_dims(x, axis, name=None):
    """``x`` with a dimension of 1 inserted at ``axis`` (``np.expand_dims``)."""
    shape = _static_shape(x, "expand_dims")
    axis = normalize_axis(check_int_attr(axis, "axis"), len(shape) + 1)
    return array.reshape(x, shape[:axis] + (1,) + shape[axis:], name=name)


def squeeze(x, axis=None, name=None):
    """``x`` without its dimensions of 1 (only those of ``axis``, if given: each must be 1)."""
    shape = _static_shape(x, "squeeze")
    axes = range(len(shape)) if axis is None else [normalize_axis(a, len(shape)) for a in
                                                     (axis if isinstance(axis, (tuple, list)) else (axis,))]
    axes = {a for a in axes if shape[a] == 1 or axis is not None}
    for a in axes:
        if shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} of shape {shapes.format_shape(shape)} is not of size 1")
    return array.reshape(x, tuple(d for i, d in enumerate(shape) if i not in axes), name=name)


def one_hot(indices, depth, dtype="float32", name=None):
    """A float ``(..., depth)`` tensor, 1 at each index and 0 elsewhere (out of range: all 0)."""
    depth = check_int_attr(depth, "depth")
    if isinstance(indices, Tensor):
        indices = array.reshape(indices, _static_shape(indices, "one_hot") + (1,))
    else:
        indices = np.asarray(indices)[..., None]
    hits = math.equal(indices, np.arange(depth, dtype=getattr(indices, "dtype", np.int64)))
    return cast(hits, dtype, name=name)


def clip_by_value(x, clip_value_min, clip_value_max, name=None):
    """``x`` limited to ``[clip_value_min, clip_value_max]`` (``np.clip``: a bound of None is no
    bound on that side): the gradient passes where it is inside."""
    low = x if clip_value_min is None else math.maximum(x, clip_value_min)
    return low if clip_value_max is None else math.minimum(low, clip_value_max, name=name)


def broadcast_to(x, shape, name=None):
    """``x`` broadcast to the static ``shape`` (``np.broadcast_to``: ``x``'s dimensions must fit it)."""
    target = tuple(check_int_attr(d, "shape") for d in shape)
    have = _static_shape(x, "broadcast_to")
    try:
        fits = shapes.broadcast(have, target) == target
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"broadcast_to: shape {shapes.format_shape(have)} cannot be broadcast to "
                         f"{shapes.format_shape(target)}")
    dtype = x.dtype if isinstance(x, (Tensor, np.ndarray, np.generic)) else np.asarray(x).dtype
    return math.add(x, array.zeros(target, dtype), name=name)
