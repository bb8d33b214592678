"""Ops that gradients need: ``SumToShape`` (the adjoint of broadcasting), ``ScatterAdd``
(the adjoint of ``GatherV2``) and ``StackPush`` (the accumulators of a ``While``'s gradient).

* ``SumToShape(g, shape)`` -- ``g`` summed over the axes that broadcasting
  ``shape`` up to ``g``'s shape added or stretched (leading axes, and axes
  of size 1 in ``shape``), as a tensor of ``shape``.  The gradient of every
  broadcasting op goes through it once (``autodiff/backprop.py``) when a
  shape is known only while the graph runs.
* ``ScatterAdd(updates, indices, dims; axis)`` -- zeros of shape ``dims``
  with ``updates`` added at ``indices`` along ``axis`` (repeated indices
  add up, as ``np.add.at``): ``updates`` has the shape ``np.take(zeros,
  indices, axis)`` would have.
* ``StackPush(buffer, index, item; ragged, label)`` -- ``buffer`` (entries
  on the first axis) with entry ``index`` set to ``item``: a forward loop
  pushes the value of iteration ``index`` (``autodiff/while_grad.py``).  The
  buffer grows by doubling, so a push costs one copy of the item: the
  kernel writes into the buffer it gets, which is only ever the loop
  variable's own (it starts empty, and the first push allocates).  Entries
  past the pushes made hold zeros, and are never read.  An item of another
  shape than the entries so far is an error naming ``label``, except with
  ``ragged`` (the items are themselves accumulators of an inner loop, whose
  length varies): entries are then padded with zeros to a common shape.
"""

from __future__ import annotations

from autograph.runtime.core import dtypes, opdef, shapes
from autograph.runtime.ops import apply
from autograph.runtime.ops._common import normalize_axis, partial_value


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


opdef.register("SumToShape", infer=_sum_to_shape_infer)
opdef.register("StackPush", infer=_stack_push_infer)
opdef.register("ScatterAdd", infer=_scatter_add_infer)


def sum_to_shape(g, shape, name=None):
    """``g`` summed down to ``shape`` (an int tensor or a tuple of ints), undoing broadcasting."""
    return apply.apply_op("SumToShape", [g, shape], name=name)


def scatter_add(updates, indices, dims, axis=0, name=None):
    """Zeros of shape ``dims`` plus ``updates`` at ``indices`` along ``axis`` (``np.add.at``)."""
    return apply.apply_op("ScatterAdd", [updates, indices, dims], {"axis": int(axis)}, name=name)


def stack_push(buffer, index, item, label, ragged=False, name=None):
    """``buffer`` with entry ``index`` set to ``item`` (growing it as needed; see the module docstring)."""
    return apply.apply_op("StackPush", [buffer, index, item], {"ragged": bool(ragged), "label": label}, name=name)
