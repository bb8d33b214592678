"""The numpy kernels of the model and gradient ops (``runtime/ops/nn.py``), a part of the
backend's table (``kernels.KERNELS``)."""

from __future__ import annotations

import threading
import weakref

import numpy as np

from autograph.runtime.core import shapes

# -- the ops of gradients ---------------------------------------------------------------


def _sum_to_shape(g, shape):
    g, shape = np.asarray(g), tuple(int(d) for d in shape)
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape) if d == 1 and g.shape[lead + i] != 1)
    if not axes:
        return g.reshape(shape)
    return np.sum(g, axis=axes, keepdims=True, dtype=g.dtype).reshape(shape)  # g's dtype, as inferred


def _scatter_add(updates, indices, dims, *, axis):
    out = np.zeros(tuple(int(d) for d in dims), np.asarray(updates).dtype)
    np.add.at(out, (slice(None),) * (axis % out.ndim) + (np.asarray(indices),), updates)
    return out


def _stack_push(buffer, index, item, *, ragged, label):
    i = int(index)
    if i < len(buffer) and buffer.shape[1:] == getattr(item, "shape", ()):  # the common case, first
        buffer[i] = item
        return buffer
    return _grown_push(buffer, i, np.asarray(item), ragged, label)


def _grown_push(buffer, i, item, ragged, label):
    if len(buffer) == 0:
        buffer = np.zeros((0, *item.shape), buffer.dtype)
    elif buffer.shape[1:] != item.shape:
        if not ragged or buffer.ndim != item.ndim + 1:
            raise ValueError(f"{label}: the value has shape {shapes.format_shape(item.shape)} at iteration {i} and "
                             f"{shapes.format_shape(buffer.shape[1:])} before; the gradient of a loop needs its values "
                             "to keep one shape across iterations")
        target = tuple(np.maximum(buffer.shape[1:], item.shape))
        buffer, item = _zero_padded(buffer, (len(buffer), *target)), _zero_padded(item, target)
    if i >= len(buffer):
        grown = _new_buffer(max(2 * len(buffer), i + 1, 4), buffer.shape[1:], buffer.dtype)  # read below i only
        grown[: len(buffer)] = buffer
        buffer = grown
    buffer[i] = item
    return buffer


# The buffers of accumulators that died, kept for the next run (fresh memory costs a page fault per
# page on first write, which for a loop's accumulators costs more than the pushes themselves), by
# dtype and entry shape: a buffer is taken at its largest, so an accumulator filled as far as in the
# run before needs no growing (no copy).  A buffer is a view of a pooled base; when the view dies its
# base returns to the pool.  Nothing else views a buffer: pushes copy into it, reads copy out of it.
_POOL: dict = {}  # (dtype, entry shape) -> bases
_POOL_LIMIT = 1 << 27  # bytes kept at most
_pooled = [0]
_pool_lock = threading.Lock()


def _new_buffer(entries, entry_shape, dtype):
    """A buffer of at least ``entries`` entries: the largest pooled one of its kind if that is enough."""
    key = (np.dtype(dtype), tuple(entry_shape))
    base = None
    with _pool_lock:
        bases = _POOL.get(key)
        if bases:
            largest = max(range(len(bases)), key=lambda k: len(bases[k]))
            if len(bases[largest]) >= entries:
                base = bases.pop(largest)
                _pooled[0] -= base.nbytes
    if base is None:
        base = np.empty((entries, *entry_shape), dtype)
    view = base[...]
    weakref.finalize(view, _release, base)
    return view


def _release(base):
    with _pool_lock:
        if _pooled[0] + base.nbytes <= _POOL_LIMIT:
            _POOL.setdefault((base.dtype, base.shape[1:]), []).append(base)
            _pooled[0] += base.nbytes


def _stack_read(buffer, index):
    value = buffer[int(index)]
    return value.copy() if isinstance(value, np.ndarray) else value  # never a view of a buffer pushes write


def _zero_padded(a, shape):
    if a.shape == shape:
        return a
    out = np.zeros(shape, a.dtype)
    out[tuple(slice(0, d) for d in a.shape)] = a
    return out


# -- model ops ---------------------------------------------------------------------------


def _sigmoid(x):
    x = np.asarray(x)
    e = np.exp(-np.abs(x))  # never overflows
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def _shifted(x, axis):
    x = np.asarray(x)
    top = np.max(x, axis=axis, keepdims=True)
    return x - np.where(np.isfinite(top), top, 0)


def _softmax(x, *, axis):
    e = np.exp(_shifted(x, axis))
    return e / np.sum(e, axis=axis, keepdims=True)


def _log_softmax(x, *, axis):
    z = _shifted(x, axis)
    return z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))


def _logsumexp(x, *, axis, keepdims):
    x = np.asarray(x)
    top = np.max(x, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)
    out = np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True)) + top
    return out if keepdims else np.squeeze(out, axis=axis)


def _cumsum(x, *, axis):
    return np.cumsum(x, axis=axis)


def _tile(x, *, multiples):
    return np.tile(x, multiples)


KERNELS = {
    "SumToShape": _sum_to_shape,
    "ScatterAdd": _scatter_add,
    "StackPush": _stack_push,
    "StackRead": _stack_read,
    "Sigmoid": _sigmoid,
    "Softmax": _softmax,
    "LogSoftmax": _log_softmax,
    "LogSumExp": _logsumexp,
    "Cumsum": _cumsum,
    "Tile": _tile,
}
