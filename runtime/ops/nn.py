"""Ops that gradients need: ``SumToShape`` (the adjoint of broadcasting) and ``ScatterAdd``
(the adjoint of ``GatherV2``).

* ``SumToShape(g, shape)`` -- ``g`` summed over the axes that broadcasting
  ``shape`` up to ``g``'s shape added or stretched (leading axes, and axes
  of size 1 in ``shape``), as a tensor of ``shape``.  The gradient of every
  broadcasting op goes through it once (``autodiff/backprop.py``) when a
  shape is known only while the graph runs.
* ``ScatterAdd(updates, indices, dims; axis)`` -- zeros of shape ``dims``
  with ``updates`` added at ``indices`` along ``axis`` (repeated indices
  add up, as ``np.add.at``): ``updates`` has the shape ``np.take(zeros,
  indices, axis)`` would have.
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


opdef.register("SumToShape", infer=_sum_to_shape_infer)
opdef.register("ScatterAdd", infer=_scatter_add_infer)


def sum_to_shape(g, shape, name=None):
    """``g`` summed down to ``shape`` (an int tensor or a tuple of ints), undoing broadcasting."""
    return apply.apply_op("SumToShape", [g, shape], name=name)


def scatter_add(updates, indices, dims, axis=0, name=None):
    """Zeros of shape ``dims`` plus ``updates`` at ``indices`` along ``axis`` (``np.add.at``)."""
    return apply.apply_op("ScatterAdd", [updates, indices, dims], {"axis": int(axis)}, name=name)
