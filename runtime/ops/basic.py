"""Core ops: ``Placeholder``, ``Const``, ``Identity``, ``Cast``.

Weak typing: a ``Const`` or ``Cast`` with the attr ``weak=True`` has a
weakly typed output (a ``Const`` made from a Python number; a ``Cast`` for
Python's ``int()``/``float()``, which give Python numbers); ``Identity``
keeps its input's weakness.  A ``Placeholder``'s weakness is set by the
graph's caller (a weak loop variable, a captured weak tensor).

``Placeholder`` and ``Const`` are never run by the executor (their values
come from the arguments and from the op's ``value`` attribute); they are
registered so that inference, verification and the optimizer treat every op
type the same way.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import dtypes, opdef

from autograph.runtime.ops import apply
from autograph.runtime.core.graph import current_graph
from autograph.runtime.ops.common import dtype_of


opdef.register(
    "Placeholder",
    infer=lambda inputs, attrs: [(attrs["dtype"], attrs["shape"])],
    cost=0,
    inputs=0,
    attrs={"dtype": "dtype", "shape": "shape"},
)
opdef.register(
    "Const",
    infer=lambda inputs, attrs: [(attrs["value"].dtype, attrs["value"].shape)],
    weak=opdef.weak_from_attr,
    cost=0,
    inputs=0,
    attrs={"value": "array", "dtype": "dtype", "weak": opdef.optional("bool", False)},
)
opdef.register(
    "Identity",
    infer=lambda inputs, attrs: [(inputs[0].dtype, inputs[0].shape)],
    weak=opdef.weak_if_all_inputs_weak,
    cost=0,
    inputs=1,
)
opdef.register(
    "Cast",
    infer=lambda inputs, attrs: [(dtypes.as_dtype(attrs["dtype"]), inputs[0].shape)],
    weak=opdef.weak_from_attr,
    inputs=1,
    attrs={"dtype": "dtype", "weak": opdef.optional("bool", False)},
)


def constant(value, dtype=None, name=None):
    """A constant: eagerly a numpy value, while tracing a ``Const`` op.

    ``dtype`` defaults to numpy's choice (``constant([1, 2])`` is int64,
    ``constant(1.5)`` float64).
    """
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if current_graph() is None:
        return apply.eager_result(apply.eager_value(value, dtype))
    return apply.constant(value, dtype, name=name or "const")


def identity(x, name=None):
    """``x`` unchanged (an ``Identity`` op while tracing)."""
    return apply.apply_op("Identity", [x], name=name)


def cast(x, dtype, name=None, weak=False):
    """``x`` converted to ``dtype`` (numpy ``astype`` semantics: floats truncate toward zero).

    ``weak=True`` (while tracing) makes the result weakly typed, like the
    Python number ``int(x)`` / ``float(x)`` give.
    """
    dtype = dtypes.as_dtype(dtype)
    if not hasattr(x, "dtype"):
        x = np.asarray(x)
        dtypes.as_dtype(dtype_of(x))
    attrs = {"dtype": dtype, "weak": True} if weak and current_graph() is not None else {"dtype": dtype}
    return apply.apply_op("Cast", [x], attrs, name=name)
