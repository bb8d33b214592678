"""The JAX kernels of the pure op types: op type -> its ``jax.numpy``/``lax`` form.

The contract is the numpy backend's (``core/backend.py``): ``kernel(*input_values,
**attrs)`` returns the output value, or a tuple of them.  A kernel runs while
``jax.jit`` traces the lowered graph (``lowering.py``), on tracers or on
numpy values that are known while tracing (constants, shapes); the lowering
casts every result to the dtype the op's definition inferred, so a kernel
never decides a dtype.

Where numpy and XLA differ on a value, the kernel computes numpy's: integer
``//`` and ``%`` by zero give 0 (numpy's result; numpy also warns, XLA
cannot), ``Rint`` rounds half to even, a float divisor is hidden from XLA
(``_opaque``: XLA would multiply by the rounded reciprocal of a constant or
broadcast one, 1 ulp off), a signed and an unsigned integer compare exactly.
Every kernel of ``OPERANDS`` gets its inputs already cast to the dtypes numpy
computes the op in (the lowering casts them): JAX's own promotion differs
(``int32 / int32`` and ``sqrt(int32)`` in float32, ``int16 + float16`` in
float16, ``int64 < uint64`` in float64).  An op whose numpy kernel can raise
for some values (an index out of range, an integer to a negative power, a
failing assert) cannot raise from inside an XLA computation: it is in
``UNLOWERABLE`` with the reason, or its rule in ``lowering.py`` refuses the
cases it cannot compute (``Unlowerable``), and the graph runs on numpy; the
ops that raise in ways XLA can compute whether they would are checks
(``checks.py``: ``Pow``, ``StridedSlice``, ``GatherV2``, ``CheckIndex``,
``Assert``, ...), raised after the call.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from autograph.runtime.backends.jax.errors import unlowerable
from autograph.runtime.ops import math


def _integer(x) -> bool:
    return jnp.issubdtype(jnp.result_type(x), jnp.integer)


def _opaque(y, like):
    """A float divisor ``y`` as a value of ``like``'s dtype and of the quotient's shape that XLA cannot
    see into: XLA rewrites ``x / c`` (a constant) and ``x / broadcast(b)`` to ``x * (1 / c)``, which is
    not numpy's correctly rounded quotient."""
    shape = jnp.broadcast_shapes(np.shape(like), np.shape(y))
    return lax.optimization_barrier(jnp.broadcast_to(jnp.asarray(y, jnp.result_type(like)), shape))


def _true_divide(x, y):
    return jnp.true_divide(x, _opaque(y, x))


def _float_divmod(x, y):
    """numpy's ``npy_divmod`` of floats (``//`` and ``%``), the signs of zero results included; float16
    in float32, as numpy computes it."""
    dtype = jnp.result_type(x)
    if dtype == np.float16:
        x, y = jnp.asarray(x, np.float32), jnp.asarray(y, np.float32)
    y = _opaque(y, x)
    mod = lax.rem(x, y)  # C's fmod
    div = (x - mod) / y
    adjust = (mod != 0) & ((y < 0) != (mod < 0))
    mod = jnp.where(adjust, mod + y, jnp.where(mod != 0, mod, jnp.copysign(0.0, y).astype(mod.dtype)))
    div = jnp.where(adjust, div - 1, div)
    floor = jnp.floor(div)
    floor = jnp.where(div - floor > 0.5, floor + 1, floor)
    quotient = jnp.where(div != 0, floor, jnp.copysign(0.0, x / y).astype(div.dtype))
    by_zero = y == 0
    return jnp.where(by_zero, x / y, quotient), jnp.where(by_zero, lax.rem(x, y), mod)


def _floor_div(x, y):
    if _integer(x) and _integer(y):
        safe = jnp.where(y == 0, 1, y)
        return jnp.where(y == 0, 0, jnp.floor_divide(x, safe))
    return _float_divmod(x, y)[0]


def _floor_mod(x, y):
    if _integer(x) and _integer(y):
        safe = jnp.where(y == 0, 1, y)
        return jnp.where(y == 0, 0, jnp.remainder(x, safe))
    return _float_divmod(x, y)[1]


def _comparison(fn):
    """``fn`` exact for a signed and an unsigned integer, as numpy's loops for them are (JAX compares
    both in float64): a negative value compares as -1 with 0."""
    def kernel(x, y):
        kinds = jnp.result_type(x).kind, jnp.result_type(y).kind
        if kinds == ("i", "u"):
            return jnp.where(x < 0, fn(-1, 0), fn(jnp.asarray(x).astype(jnp.result_type(y)), y))
        if kinds == ("u", "i"):
            return jnp.where(y < 0, fn(0, -1), fn(x, jnp.asarray(y).astype(jnp.result_type(x))))
        return fn(x, y)

    return kernel


BINARY = {
    "Add": jnp.add, "Sub": jnp.subtract, "Mul": jnp.multiply, "RealDiv": _true_divide,
    "FloorDiv": _floor_div, "FloorMod": _floor_mod,
    "Maximum": jnp.maximum, "Minimum": jnp.minimum,
    **{name: _comparison(fn) for name, fn in {
        "Greater": jnp.greater, "GreaterEqual": jnp.greater_equal, "Less": jnp.less, "LessEqual": jnp.less_equal,
        "Equal": jnp.equal, "NotEqual": jnp.not_equal}.items()},
    "LogicalAnd": jnp.logical_and, "LogicalOr": jnp.logical_or, "LogicalXor": jnp.logical_xor,
    "BitwiseAnd": jnp.bitwise_and, "BitwiseOr": jnp.bitwise_or, "BitwiseXor": jnp.bitwise_xor,
    "LeftShift": jnp.left_shift, "RightShift": jnp.right_shift,
    "MatMul": jnp.matmul,
}

UNARY = {
    "Abs": jnp.abs, "Cos": jnp.cos, "Exp": jnp.exp, "Invert": jnp.invert, "Log": jnp.log,
    "LogicalNot": jnp.logical_not, "Neg": jnp.negative, "Rint": jnp.rint, "Sin": jnp.sin,
    "Sqrt": jnp.sqrt, "Square": jnp.square, "Tanh": jnp.tanh,
}


def _reduction(fn):
    def kernel(x, *, axis, keepdims):
        return fn(x, axis=None if axis is None else tuple(axis) if isinstance(axis, (list, tuple)) else axis,
                  keepdims=keepdims)

    return kernel


REDUCTIONS = {name: _reduction(fn) for name, fn in {
    "Sum": jnp.sum, "Max": jnp.max, "Min": jnp.min, "Prod": jnp.prod, "Any": jnp.any, "All": jnp.all,
}.items()}


def _mean(x, *, axis, keepdims):
    """``np.mean``: the sum (in ``OPERANDS``' dtype) divided by the count, as numpy divides it."""
    total = REDUCTIONS["Sum"](x, axis=axis, keepdims=keepdims)
    count = np.size(x) // np.size(total) if np.size(total) else 1
    return _true_divide(total, np.asarray(count, total.dtype))


REDUCTIONS["Mean"] = _mean


def _loop_dtypes(ufunc):
    return lambda op: ufunc.resolve_dtypes((*(t.dtype for t in op.inputs), None))[:-1]


def _output_dtype(op):
    return [op.outputs[0].dtype] * len(op.inputs)


def _mean_dtype(op):
    (x,) = op.inputs  # numpy sums float16 in float32, bools and integers in float64
    return [np.dtype(np.float32) if x.dtype == np.float16 else op.outputs[0].dtype]


def _round_dtype(op):
    (x,) = op.inputs  # numpy rounds integers to tens, hundreds... in float64
    return [np.dtype(np.float64) if x.dtype.kind in "iu" and op.attrs["decimals"] < 0 else x.dtype]


# op type -> rule(op) -> the dtypes numpy computes the op in, one per input (the lowering casts the
# inputs to them before the kernel runs; JAX's promotion would choose others)
OPERANDS: dict = {
    **{name: _loop_dtypes(ufunc) for name, ufunc in {**math.BINARY, **math.UNARY, "MatMul": np.matmul}.items()},
    "Sum": _output_dtype, "Prod": _output_dtype, "Cumsum": _output_dtype, "Mean": _mean_dtype,
    "Pack": _output_dtype, "ConcatV2": _output_dtype, "Round": _round_dtype,
}


def static_ints(value, what) -> tuple:
    """``value`` as a tuple of Python ints, if it is known while tracing (a constant, a shape);
    else ``Unlowerable``: XLA needs every shape at compile time."""
    if isinstance(value, (np.ndarray, np.generic, int, list, tuple)):
        return tuple(int(d) for d in np.asarray(value).reshape(-1))
    raise unlowerable(f"{what} is computed in the graph, and XLA needs it at compile time")


def _argmax(x, *, axis):
    return jnp.argmax(x, axis=axis)


def _argmin(x, *, axis):
    return jnp.argmin(x, axis=axis)


def _reshape(x, shape):
    return jnp.reshape(x, static_ints(shape, "the shape of a reshape"))


def _shape(x, *, out_type):
    return np.array(np.shape(x), dtype=out_type)  # known while tracing


def _size(x, *, out_type):
    return np.asarray(np.size(x), dtype=out_type)


def _range(start, limit, delta, *, dtype):
    bounds = [static_ints(v, "a bound of rt.range")[0] if np.ndim(v) == 0 and not isinstance(v, np.floating)
              else v for v in (start, limit, delta)]
    if not all(isinstance(b, int) for b in bounds):
        raise unlowerable("a float range (XLA needs its length at compile time)")
    return np.arange(*bounds, dtype=dtype)


def _fill(dims, value):
    return jnp.full(static_ints(dims, "the shape of a fill"), value)


def _list_append(target, item, *, label):
    """A staged list grown by one element (in a loop its shape changes: JAX refuses the carry,
    and the graph runs on numpy)."""
    if np.shape(target)[0] == 0:
        return jnp.stack([item]).astype(target.dtype)
    if np.shape(target)[1:] != np.shape(item):
        raise unlowerable(f"{label}: elements of different shapes appended (numpy raises ValueError)")
    return jnp.concatenate([target, jnp.asarray(item)[None].astype(target.dtype)])


def _round(x, *, decimals, python=False):
    """``np.round``: ``x * 10**decimals`` rounded half to even, divided by ``10**decimals``, each step
    in ``x``'s float dtype (integers unchanged; to tens, hundreds...: in float64, ``OPERANDS``)."""
    if python and decimals:
        raise unlowerable("round() of a Python number to decimals (Python's correctly rounded result)")
    dtype = jnp.result_type(x)
    if decimals == 0 or dtype.kind not in "iuf":
        return jnp.round(x, decimals)
    if dtype.kind in "iu":  # (to tens, hundreds...: in float64, ``OPERANDS``)
        return x
    scale = np.asarray(10.0 ** abs(decimals)).astype(dtype)
    if decimals > 0:
        return _true_divide(jnp.rint(x * scale), scale)
    return jnp.rint(_true_divide(x, scale)) * scale


def _choose(pred, x, y):
    if isinstance(pred, (np.ndarray, np.generic, bool)):
        return x if pred else y
    if np.shape(x) != np.shape(y):
        raise unlowerable("a choice between values of different shapes (XLA needs one shape)")
    return jnp.where(pred, x, y)


KERNELS: dict = {
    "Choose": _choose,
    "ListAppend": _list_append,
    **BINARY,
    **UNARY,
    **REDUCTIONS,
    "ArgMax": _argmax,
    "ArgMin": _argmin,
    "Identity": lambda x: x,
    "Cast": lambda x, *, dtype, weak=False: jnp.asarray(x).astype(dtype),
    "Reshape": _reshape,
    "Shape": _shape,
    "Size": _size,
    "Pack": lambda *values, axis, weak=False: jnp.stack(values, axis=axis),
    "ConcatV2": lambda *values, axis, weak=False: jnp.concatenate(values, axis=axis),
    "Select": jnp.where,
    "Range": _range,
    "Fill": _fill,
    "ZerosLike": lambda x, *, dtype: jnp.zeros_like(x, dtype=dtype),
    "OnesLike": lambda x, *, dtype: jnp.ones_like(x, dtype=dtype),
    "Transpose": lambda x, *, perm: jnp.transpose(x, perm),
    "Round": _round,
    "Sigmoid": lambda x: jax_nn().sigmoid(x),
    "Softmax": lambda x, *, axis: jax_nn().softmax(x, axis=axis),
    "LogSoftmax": lambda x, *, axis: jax_nn().log_softmax(x, axis=axis),
    "LogSumExp": lambda x, *, axis, keepdims: jax_nn().logsumexp(x, axis=axis, keepdims=keepdims),
    "Cumsum": lambda x, *, axis: jnp.cumsum(x, axis=axis),
    "Tile": lambda x, *, multiples: jnp.tile(x, multiples),
}


def jax_nn():
    import jax.nn

    return jax.nn


# Op types never lowered, with the reason (the graph runs on numpy, after one warning).
UNLOWERABLE: dict = {
    "PyBool": "bool() of a tensor (its ValueError cannot be raised from inside XLA)",
    "StackPush": "a gradient accumulator, which grows at every iteration (XLA needs fixed shapes)",
    "StackRead": "a gradient accumulator, which grows at every iteration (XLA needs fixed shapes)",
    "SumToShape": "a gradient reduction to a shape given as a value",
    "ScatterAdd": "a scatter whose output shape is given as a value",
    "DatasetReduce": "a loop over an rt.data pipeline, which runs in Python",
    "Placeholder": "a placeholder without a value",
}
