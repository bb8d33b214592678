"""Core ops: ``Placeholder``, ``Const``, ``Identity``, ``Cast``.

``Placeholder`` and ``Const`` are never run by the executor (their values
come from the arguments and from the op's ``value`` attribute); they are
registered so that inference, verification and the optimizer treat every op
type the same way.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime import dtypes, op_registry
from autograph.runtime.errors import ExecutionError
from autograph.runtime.graph import current_graph
from autograph.runtime.ops._common import dtype_of


def _placeholder_kernel(**attrs):
    raise ExecutionError(
        "a Placeholder has no value of its own: pass one value per graph.all_inputs to run_graph"
    )


def _cast_kernel(x, *, dtype):
    return np.asarray(x).astype(dtype, copy=False)


op_registry.register(
    "Placeholder",
    infer=lambda inputs, attrs: [(attrs["dtype"], attrs["shape"])],
    kernel=_placeholder_kernel,
)
op_registry.register(
    "Const",
    infer=lambda inputs, attrs: [(attrs["value"].dtype, attrs["value"].shape)],
    kernel=lambda *, value, dtype: value,
)
op_registry.register(
    "Identity",
    infer=lambda inputs, attrs: [(inputs[0].dtype, inputs[0].shape)],
    kernel=lambda x: x,
)
op_registry.register(
    "Cast",
    infer=lambda inputs, attrs: [(dtypes.as_dtype(attrs["dtype"]), inputs[0].shape)],
    kernel=_cast_kernel,
)


def constant(value, dtype=None, name=None):
    """A constant: eagerly a numpy value, while tracing a ``Const`` op.

    ``dtype`` defaults to numpy's choice (``constant([1, 2])`` is int64,
    ``constant(1.5)`` float64).
    """
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if current_graph() is None:
        return op_registry.eager_result(op_registry.eager_value(value, dtype))
    return op_registry.constant(value, dtype, name=name or "const")


def identity(x, name=None):
    """``x`` unchanged (an ``Identity`` op while tracing)."""
    return op_registry.apply_op("Identity", [x], name=name)


def cast(x, dtype, name=None):
    """``x`` converted to ``dtype`` (numpy ``astype`` semantics: floats truncate toward zero)."""
    dtype = dtypes.as_dtype(dtype)
    if not hasattr(x, "dtype"):
        x = np.asarray(x)
        dtypes.as_dtype(dtype_of(x))
    return op_registry.apply_op("Cast", [x], {"dtype": dtype}, name=name)
