"""Gradient rules of the model ops (``runtime/ops/nn.py``; ``registry.py`` says what a rule is)."""

from __future__ import annotations

import numpy as np

from autograph.runtime import ops
from autograph.runtime.autodiff import registry
from autograph.runtime.autodiff.backprop import Exact, dims_of
from autograph.runtime.autodiff.math_grads import spread
from autograph.runtime.core import shapes
from autograph.runtime.errors import TracingError
from autograph.runtime.ops import apply, indexing, nn


def _sigmoid(fwd, grads):
    z = fwd.y(0)
    return [ops.multiply(grads[0], ops.multiply(z, ops.subtract(1, z)))]


def _softmax(fwd, grads):
    g, z, axis = grads[0], fwd.y(0), fwd.attrs["axis"]
    return [ops.multiply(z, ops.subtract(g, ops.reduce_sum(ops.multiply(g, z), axis=axis, keepdims=True)))]


def _log_softmax(fwd, grads):
    g, z, axis = grads[0], fwd.y(0), fwd.attrs["axis"]
    return [ops.subtract(g, ops.multiply(ops.exp(z), ops.reduce_sum(g, axis=axis, keepdims=True)))]


def _logsumexp(fwd, grads):
    weights = ops.exp(ops.subtract(fwd.x(0), spread(fwd, fwd.y(0))))
    return [ops.multiply(spread(fwd, grads[0]), weights)]


def _reversed(t, axis):
    return indexing.getitem(t, (slice(None),) * axis + (slice(None, None, -1),))


def _cumsum(fwd, grads):
    rank = len(fwd.inputs[0].shape)
    axis = fwd.attrs["axis"] % rank
    return [_reversed(nn.cumsum(_reversed(grads[0], axis), axis), axis)]


def _tile(fwd, grads):
    x, multiples = fwd.inputs[0], fwd.attrs["multiples"]
    if not shapes.is_fully_defined(x.shape):
        raise TracingError(f"the gradient of tile at {fwd.op.location or '<unknown>'} needs an input of static shape, "
                           f"got {shapes.format_shape(x.shape)}")
    rank = max(len(x.shape), len(multiples))
    dims = (1,) * (rank - len(x.shape)) + tuple(x.shape)
    reps = (1,) * (rank - len(multiples)) + tuple(multiples)
    split = ops.reshape(grads[0], tuple(d for pair in zip(reps, dims) for d in pair))
    summed = ops.reduce_sum(split, axis=tuple(range(0, 2 * rank, 2)))
    return [ops.reshape(summed, x.shape) if dims != x.shape else summed]


def _set_entry(buffer, index, value, where):
    attrs = {"key": (("index", "$1"),), "operator": "=", "python_value": False, "where": where}
    return apply.apply_op("SetItem", [buffer, value, index], attrs)


def _stack_read(fwd, grads):
    """An entry read back: its cotangent goes to that entry of the buffer (second derivatives of loops)."""
    where = f"the gradient of an accumulator read at {fwd.op.location or '<unknown>'}"
    return [Exact(_set_entry(ops.zeros_like(fwd.x(0)), fwd.x(1), grads[0], where)), None]


def _stack_push(fwd, grads):
    """A push: the pushed entry's cotangent goes to the item, the others to the buffer before it.  The
    cotangent keeps the shape of the last buffer (entries past a smaller one are never read).  A ragged
    item (padded with zeros to the largest entry) gets its own part of the entry: the leading
    ``item.shape`` of it."""
    g, index = grads[0], fwd.x(1)
    where = f"the gradient of an accumulator push at {fwd.op.location or '<unknown>'}"
    item = indexing.getitem(g, index) if fwd.wants(2) else None
    if item is not None and fwd.attrs["ragged"]:
        rank = fwd.inputs[2].shape
        if rank is None:
            raise TracingError(f"cannot differentiate the gradient of the nested loop at {fwd.op.location or '<unknown>'} "
                               "once more: its accumulators have no static rank")
        dims = dims_of(fwd.inputs[2])
        item = Exact(indexing.getitem(item, tuple(slice(0, dims[k]) for k in range(len(rank)))))
    return [Exact(_set_entry(g, index, np.zeros((), g.dtype), where)), None, item]


def _sum_to_shape(fwd, grads):
    return [Exact(ops.add(grads[0], ops.zeros_like(fwd.x(0)))), None]


def _scatter_add(fwd, grads):
    return [Exact(ops.gather(grads[0], fwd.x(1), axis=fwd.attrs["axis"])), None, None]


registry.register({
    "Sigmoid": _sigmoid,
    "Softmax": _softmax,
    "LogSoftmax": _log_softmax,
    "LogSumExp": _logsumexp,
    "Cumsum": _cumsum,
    "Tile": _tile,
    "StackRead": _stack_read,
    "StackPush": _stack_push,
    "SumToShape": _sum_to_shape,
    "ScatterAdd": _scatter_add,
})
