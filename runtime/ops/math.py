"""Elementwise math, comparison and logical ops, and ``MatMul``.

Each op type means one numpy ufunc (the tables below): its dtype is what
numpy's type resolution gives that ufunc (``ufunc.resolve_dtypes``, no
kernel runs), its shape broadcasts as in numpy, and the numpy backend's
kernel is that ufunc (``backends/numpy/kernels.py``), so eager and graph
results always agree.
Python scalar operands are weakly typed (``int32_t + 1`` stays int32);
where an operand stands for a Python number, ``binary`` gives Python's
answer where numpy's differs (exact comparisons with ints out of a dtype's
bounds, ``ZeroDivisionError``, an int to a negative int power).  Python's
own conversions of a value (``int()``, ``bool()``, ``round()``, checked
values) are in ``conversions.py``.
"""

from __future__ import annotations

import math as _math

import numpy as np

from autograph.runtime.core import opdef, shapes

from autograph.runtime.core.location import user_location_text
from autograph.runtime.core.tensor import Tensor, is_python_number, is_weak
from autograph.runtime.ops import apply
from autograph.runtime.ops.common import dtype_of, int_fits, is_weak_list, promote, ufunc_dtype
from autograph.runtime.ops.static_values import static_value
from autograph.runtime.ops.basic import cast
from autograph.runtime.ops.conversions import ensure

# op type -> the numpy ufunc it means, for ops of two broadcast operands
BINARY = {
    "Add": np.add,
    "Sub": np.subtract,
    "Mul": np.multiply,
    "RealDiv": np.true_divide,
    "FloorDiv": np.floor_divide,
    "FloorMod": np.remainder,
    "Pow": np.power,
    "Maximum": np.maximum,
    "Minimum": np.minimum,
    "Less": np.less,
    "LessEqual": np.less_equal,
    "Greater": np.greater,
    "GreaterEqual": np.greater_equal,
    "Equal": np.equal,
    "NotEqual": np.not_equal,
    "LogicalAnd": np.logical_and,
    "LogicalOr": np.logical_or,
    "LogicalXor": np.logical_xor,
    "BitwiseAnd": np.bitwise_and,
    "BitwiseOr": np.bitwise_or,
    "BitwiseXor": np.bitwise_xor,
    "LeftShift": np.left_shift,
    "RightShift": np.right_shift,
}

# op type -> the numpy ufunc it means, for ops of one operand (same shape out)
UNARY = {
    "Neg": np.negative,
    "Abs": np.absolute,
    "Sqrt": np.sqrt,
    "Exp": np.exp,
    "Log": np.log,
    "Sin": np.sin,
    "Cos": np.cos,
    "Tanh": np.tanh,
    "Square": np.square,
    "LogicalNot": np.logical_not,
    "Invert": np.invert,
    "Rint": np.rint,
}


def _describe(t) -> str:
    return f"{t.name} {t.dtype.name}{shapes.format_shape(t.shape)}"


def _binary_infer(ufunc):
    def infer(inputs, attrs):
        a, b = inputs
        try:
            dtype = ufunc_dtype(ufunc, [a.dtype, b.dtype])
        except TypeError as e:
            raise TypeError(
                f"{ufunc.__name__} is not defined for {a.dtype.name} and {b.dtype.name} "
                f"(operands {a.name}, {b.name}): {e}. Cast an operand with rt.cast"
            ) from None
        try:
            shape = shapes.broadcast(a.shape, b.shape)
        except ValueError:
            raise ValueError(
                f"operands {_describe(a)} and {_describe(b)} cannot be broadcast together; "
                "reshape or slice them so that each dimension matches or is 1"
            ) from None
        return [(dtype, shape)]

    return infer


def _unary_infer(ufunc):
    def infer(inputs, attrs):
        (x,) = inputs
        try:
            dtype = ufunc_dtype(ufunc, [x.dtype])
        except TypeError as e:
            raise TypeError(
                f"{ufunc.__name__} is not defined for {x.dtype.name} (operand {x.name}): {e}. "
                "Cast the operand with rt.cast"
            ) from None
        return [(dtype, x.shape)]

    return infer


# cost per output element, where it is above one pass over memory (``opdef.cost_of``)
_COSTS = {
    "Exp": 8, "Log": 8, "Sin": 10, "Cos": 10, "Tanh": 10, "Sqrt": 3, "Pow": 12,
    "RealDiv": 2, "FloorDiv": 4, "FloorMod": 4,
}

for _type, _ufunc in BINARY.items():
    opdef.register(_type, infer=_binary_infer(_ufunc), cost=_COSTS.get(_type, 1), inputs=2)
for _type, _ufunc in UNARY.items():
    opdef.register(_type, infer=_unary_infer(_ufunc), cost=_COSTS.get(_type, 1), inputs=1)


def binary(op_type: str, x, y, name=None):
    """Applies elementwise op ``op_type`` (a key of ``BINARY``) to ``x`` and ``y``."""
    if op_type == "Pow" and _python_ints(x, y):
        return _python_int_power(x, y, name)
    if op_type == "Pow" and _python_numbers(x, y):
        x = _real_power_base(x, y)
    if op_type == "RealDiv":
        x, y = (_true_division_operand(v, w) for v, w in ((x, y), (y, x)))
    if op_type in _DIVISIONS and _python_numbers(x, y):
        y = _nonzero_divisor(op_type, x, y)
    if op_type in _COMPARISONS:
        decided = _decided_by_sign(op_type, x, y)
        if decided is not None:
            return decided
    return apply.apply_op(op_type, promote([x, y], compared=op_type in _COMPARISONS, ufunc=BINARY[op_type]),
                          name=name)


_COMPARISONS = frozenset({"Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual"})


def _decided_by_sign(op_type, x, y):
    """A comparison of an integer operand with a Python int its dtype cannot hold, or None.

    NumPy 2 and Python compare them exactly (``np.uint8(5) < 300`` and ``np.int64(5) < 2**70`` are
    True, ``np.int8(-3) == 1000`` is False): every value of the dtype lies on the same side of the
    int, so the int's sign decides, as it decides ``op(0, sign)``.  The result is the operand
    compared with itself (``t == t``: True for every integer, ``t != t``: False), which has the
    comparison's shape and weak typing; no cast, so a weakly typed counter compared so keeps its dtype
    (``tracing/weak_loop_vars.py``).  (A staged list of Python ints is left to ``promote``: numpy
    makes it an int64 array.)"""
    for number, other, first in ((y, x, False), (x, y, True)):
        if type(number) is not int or is_python_number(other) or is_weak_list(other):
            continue
        dtype = dtype_of(other)
        if dtype.kind not in "iu":
            continue
        if int_fits(number, dtype):
            return None
        sign = 1 if number > 0 else -1
        holds = BINARY[op_type](sign, 0) if first else BINARY[op_type](0, sign)
        return apply.apply_op("Equal" if holds else "NotEqual", [other, other])
    return None


# division op type -> Python's ZeroDivisionError message (ints, floats)
_DIVISIONS = {
    "RealDiv": ("division by zero", "float division by zero"),
    "FloorDiv": ("integer division or modulo by zero", "float floor division by zero"),
    "FloorMod": ("integer modulo by zero", "float modulo"),
}


def _python_numbers(x, y) -> bool:
    """Two operands standing for Python numbers (weakly typed), at least one of them a tensor."""
    return all(is_weak(v) and not is_weak_list(v) for v in (x, y)) and any(isinstance(v, Tensor) for v in (x, y))


def _nonzero_divisor(op_type, x, y):
    """``y``, checked when the graph runs: Python numbers divided by zero are Python's ZeroDivisionError
    (numpy would give inf, nan or 0 with a warning)."""
    known = static_value(y)
    if known is not None and np.all(known != 0):
        return y
    floats = any(dtype_of(v).kind == "f" for v in (x, y))
    message = _DIVISIONS[op_type][floats]
    return ensure(y, not_equal(y, 0), "ZeroDivisionError", f"{message} (at {user_location_text()})")


def _python_ints(x, y) -> bool:
    """Two integers standing for Python ints (weakly typed), at least one of them a tensor."""
    return (all(type(v) is int or (is_weak(v) and not is_weak_list(v) and dtype_of(v).kind in "iu") for v in (x, y))
            and any(isinstance(v, Tensor) for v in (x, y)))


def _true_division_operand(value, other):
    """A Python int that an integer tensor's dtype cannot hold, as a float: numpy divides integers in
    float64, so ``np.int8(1) / 300`` is 0.0033, not NEP 50's ``OverflowError`` of ``np.int8(1) + 300``."""
    if (type(value) is int and isinstance(other, Tensor) and not other.weak and other.dtype.kind in "iub"
            and not int_fits(value, other.dtype)):
        return float(value)
    return value


def _real_power_base(x, y):
    """``x``, checked when the graph runs: a negative Python number to a fractional power is a complex
    number in Python (``(-4) ** 0.5``), which the graph (numpy: NaN) cannot give."""
    exponent, base = static_value(y), static_value(x)
    if (exponent is not None and float(exponent).is_integer()) or (base is not None and base >= 0):
        return x
    integral = equal(binary("FloorMod", y, 1.0), 0.0) if isinstance(y, Tensor) else bool(float(y).is_integer())
    real = logical_or(greater_equal(x, 0), integral) if isinstance(integral, Tensor) else greater_equal(x, 0)
    return ensure(x, real, "ValueError", (
        f"`x ** y` of Python numbers at {user_location_text()} with a negative x and a fractional y: Python "
        "gives a complex number, which a graph cannot hold. Check the sign of x first, or use abs(x) ** y."))


def _python_int_power(x, y, name):
    """``x ** y`` of Python ints: an int for ``y >= 0``, a float for ``y < 0`` (numpy refuses it on ints)."""
    exponent = static_value(y)
    if exponent is None:  # an int, as Python gives for y >= 0; y < 0 (a float in Python) is refused when run
        y = ensure(y, greater_equal(y, 0), "ValueError", (
            f"`x ** y` of Python ints at {user_location_text()} with a negative y: Python gives a float, and the "
            "graph was traced for y >= 0, giving an int. Make one of them a float (float(x) ** y)."))
        return apply.apply_op("Pow", promote([x, y]), name=name)
    if int(exponent) >= 0:
        return apply.apply_op("Pow", promote([x, y]), name=name)
    base = cast(x, np.float64, weak=True)
    base = ensure(base, not_equal(base, 0), "ZeroDivisionError", f"0 cannot be raised to a negative power "
                                                                    f"(at {user_location_text()})")
    return apply.apply_op("Pow", promote([base, float(exponent)]), name=name)


def unary(op_type: str, x, name=None):
    """Applies elementwise op ``op_type`` (a key of ``UNARY``) to ``x``."""
    return apply.apply_op(op_type, [x], name=name)


def add(x, y, name=None):
    return binary("Add", x, y, name)


def subtract(x, y, name=None):
    return binary("Sub", x, y, name)


def multiply(x, y, name=None):
    return binary("Mul", x, y, name)


def divide(x, y, name=None):
    """True division (``/``): integers give float64, as in numpy."""
    return binary("RealDiv", x, y, name)


def floordiv(x, y, name=None):
    return binary("FloorDiv", x, y, name)


def mod(x, y, name=None):
    return binary("FloorMod", x, y, name)


def pow(x, y, name=None):  # noqa: A001 - the runtime's name, as tf.pow
    return binary("Pow", x, y, name)


def maximum(x, y, name=None):
    return binary("Maximum", x, y, name)


def minimum(x, y, name=None):
    return binary("Minimum", x, y, name)


def less(x, y, name=None):
    return binary("Less", x, y, name)


def less_equal(x, y, name=None):
    return binary("LessEqual", x, y, name)


def greater(x, y, name=None):
    return binary("Greater", x, y, name)


def greater_equal(x, y, name=None):
    return binary("GreaterEqual", x, y, name)


def equal(x, y, name=None):
    return binary("Equal", x, y, name)


def not_equal(x, y, name=None):
    return binary("NotEqual", x, y, name)


def logical_and(x, y, name=None):
    return binary("LogicalAnd", x, y, name)


def logical_or(x, y, name=None):
    return binary("LogicalOr", x, y, name)


def logical_xor(x, y, name=None):
    return binary("LogicalXor", x, y, name)


def logical_not(x, name=None):
    return unary("LogicalNot", x, name)


def negative(x, name=None):
    return unary("Neg", x, name)


def abs(x, name=None):  # noqa: A001 - the runtime's name, as tf.abs
    return unary("Abs", x, name)


def sqrt(x, name=None):
    return unary("Sqrt", x, name)


def exp(x, name=None):
    return unary("Exp", x, name)


def log(x, name=None):
    return unary("Log", x, name)


def sin(x, name=None):
    return unary("Sin", x, name)


def cos(x, name=None):
    return unary("Cos", x, name)


def tanh(x, name=None):
    return unary("Tanh", x, name)


def square(x, name=None):
    return unary("Square", x, name)


# -- MatMul ---------------------------------------------------------------


def matmul_shape(a, b):
    """Static shape of ``np.matmul`` of shapes ``a`` and ``b`` (ValueError if they cannot multiply)."""
    if a is not None and len(a) == 0 or b is not None and len(b) == 0:
        raise ValueError("matmul does not accept scalar (rank-0) operands; use * to scale a tensor")
    if a is None or b is None:
        return None
    lhs = (1,) + a if len(a) == 1 else a
    rhs = b + (1,) if len(b) == 1 else b
    k1, k2 = lhs[-1], rhs[-2]
    if k1 is not None and k2 is not None and k1 != k2:
        raise ValueError(
            f"matmul: the last dimension of the left operand ({k1}, shape {shapes.format_shape(a)}) "
            f"must equal the second-to-last dimension of the right one ({k2}, shape "
            f"{shapes.format_shape(b)}); transpose or reshape an operand"
        )
    try:
        batch = shapes.broadcast(lhs[:-2], rhs[:-2])
    except ValueError:
        raise ValueError(
            f"matmul: the batch dimensions of shapes {shapes.format_shape(a)} and "
            f"{shapes.format_shape(b)} cannot be broadcast together"
        ) from None
    out = batch
    if len(a) > 1:
        out = out + (lhs[-2],)
    if len(b) > 1:
        out = out + (rhs[-1],)
    return out


def _matmul_infer(inputs, attrs):
    a, b = inputs
    try:
        dtype = ufunc_dtype(np.matmul, [a.dtype, b.dtype])
    except TypeError as e:
        raise TypeError(f"matmul is not defined for {a.dtype.name} and {b.dtype.name}: {e}") from None
    return [(dtype, matmul_shape(a.shape, b.shape))]


def _matmul_cost(op):
    """Multiply-adds: output elements times the contracted dimension (0 if a shape is unknown)."""
    a, out = op.inputs[0].shape, op.outputs[0].shape
    if not (shapes.is_fully_defined(a) and shapes.is_fully_defined(out)) or not a:
        return 0
    return _math.prod(out) * a[-1]


opdef.register("MatMul", infer=_matmul_infer, cost=_matmul_cost, inputs=2)


def matmul(x, y, name=None):
    """Matrix product with numpy's rules (1-D operands, broadcast batch dimensions)."""
    return apply.apply_op("MatMul", promote([x, y]), name=name)


# -- shifts and rounding to integers ------------------------------------------


def left_shift(x, y, name=None):
    return binary("LeftShift", x, y, name)


def right_shift(x, y, name=None):
    return binary("RightShift", x, y, name)


def rint(x, name=None):
    """Rounds to the nearest integer, halves to even (``np.rint``)."""
    return unary("Rint", x, name)
