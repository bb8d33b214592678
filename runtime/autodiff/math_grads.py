"""Gradient rules of elementwise math, ``MatMul`` and the reductions (``registry.py`` says what a
rule is).  Each rule computes only the cotangents of the inputs that want one
(``fwd.wants(i)``), so that nothing the gradient does not need is read from the forward pass;
broadcasting is undone by the walker, not here.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime import ops
from autograph.runtime.autodiff import registry
from autograph.runtime.autodiff.backprop import Exact, dims_of
from autograph.runtime.core import shapes
from autograph.runtime.errors import TracingError
from autograph.runtime.ops import array, reduction


def _pair(fwd, dx, dy):
    """``[dx(), dy()]``, each computed only if that input wants a cotangent."""
    return [dx() if fwd.wants(0) else None, dy() if fwd.wants(1) else None]


def _add(fwd, grads):
    g = grads[0]
    return [g, g]


def _sub(fwd, grads):
    g = grads[0]
    return _pair(fwd, lambda: g, lambda: ops.negative(g))


def _mul(fwd, grads):
    g = grads[0]
    return _pair(fwd, lambda: ops.multiply(g, fwd.x(1)), lambda: ops.multiply(g, fwd.x(0)))


def _div(fwd, grads):
    g = grads[0]
    return _pair(fwd, lambda: ops.divide(g, fwd.x(1)),
                 lambda: ops.negative(ops.divide(ops.multiply(g, fwd.y(0)), fwd.x(1))))


def _pow(fwd, grads):
    g = grads[0]

    def dy():  # z * log(x), with 0 where x <= 0 (there z is 0 or not real-differentiable in y)
        x = fwd.x(0)
        positive = ops.greater(x, 0)
        safe = ops.where(positive, x, ops.ones_like(x))
        return ops.multiply(g, ops.where(positive, ops.multiply(fwd.y(0), ops.log(safe)), ops.zeros_like(x)))

    def dx():  # z * x ** (z - 1), with 0 where z is 0 (x ** 0 is 1 for every x, 0 included)
        x, z = fwd.x(0), fwd.x(1)
        zero = ops.equal(z, 0)
        slope = ops.multiply(z, ops.pow(x, ops.where(zero, ops.ones_like(z), ops.subtract(z, 1))))
        return ops.multiply(g, ops.where(zero, ops.zeros_like(slope), slope))

    return _pair(fwd, dx, dy)


def _select_by(compare):
    """Maximum / Minimum: the cotangent goes to the operand that was chosen (``x`` on a tie)."""

    def rule(fwd, grads):
        g = grads[0]
        x, y = fwd.x(0), fwd.x(1)
        chosen = compare(x, y)
        zeros = ops.zeros_like(g)
        return _pair(fwd, lambda: ops.where(chosen, g, zeros), lambda: ops.where(chosen, zeros, g))

    return rule


def _floor_mod(fwd, grads):  # x - floor(x / y) * y
    g = grads[0]
    return _pair(fwd, lambda: g, lambda: ops.negative(ops.multiply(g, ops.floordiv(fwd.x(0), fwd.x(1)))))


def _abs(fwd, grads):
    g, x = grads[0], fwd.x(0)
    return [Exact(ops.where(ops.greater(x, 0), g, ops.where(ops.less(x, 0), ops.negative(g), ops.zeros_like(g))))]


def _unary(derivative):
    """A rule ``g * derivative(fwd)`` for an elementwise op of one input (of the output's shape)."""
    return lambda fwd, grads: [Exact(ops.multiply(grads[0], derivative(fwd)))]


def _tanh_derivative(fwd):
    z = fwd.y(0)
    return ops.subtract(1, ops.multiply(z, z))


def _matmul(fwd, grads):
    """``a @ b``: ``g @ b^T`` and ``a^T @ g`` over the last two axes (1-D operands as numpy treats
    them); batch dimensions that broadcast are summed by the walker."""
    g = grads[0]
    a_shape, b_shape = fwd.inputs[0].shape, fwd.inputs[1].shape
    if a_shape is None or b_shape is None:
        raise TracingError(f"the gradient of matmul at {fwd.op.location or '<unknown>'} needs operands of known "
                           "rank; give the inputs static ranks (an input_signature with None dimensions)")
    a_vector, b_vector = len(a_shape) == 1, len(b_shape) == 1
    if a_vector:
        g = ops.reshape(g, _expanded(g, len(g.shape) - (0 if b_vector else 1)))
    if b_vector:
        g = ops.reshape(g, _expanded(g, len(g.shape)))

    def da():
        b = fwd.x(1)
        b = ops.reshape(b, (-1, 1)) if b_vector else b
        d = ops.matmul(g, _swap(b))
        return ops.reshape(d, (-1,)) if a_vector else d

    def db():
        a = fwd.x(0)
        a = ops.reshape(a, (1, -1)) if a_vector else a
        d = ops.matmul(_swap(a), g)
        return ops.reshape(d, (-1,)) if b_vector else d

    return _pair(fwd, da, db)


def _expanded(g, axis):
    """The shape of ``g`` with a dimension of 1 inserted at ``axis`` (static or dynamic)."""
    if shapes.is_fully_defined(g.shape):
        return g.shape[:axis] + (1,) + g.shape[axis:]
    dims = ops.shape(g)
    return ops.concat([dims[:axis], np.ones(1, np.int32), dims[axis:]])


def _swap(t):
    """``t`` with its last two axes swapped."""
    rank = len(t.shape)
    return array.transpose(t, tuple(range(rank - 2)) + (rank - 1, rank - 2))


# -- reductions ---------------------------------------------------------------------------


def _reduced_axes(fwd):
    rank = len(fwd.inputs[0].shape)
    axis = fwd.attrs["axis"]
    if axis is None:
        return tuple(range(rank))
    listed = axis if isinstance(axis, tuple) else (axis,)
    return tuple(a % rank for a in listed)


def spread(fwd, g):
    """The cotangent ``g`` of a reduction's output, broadcast back to the input's shape."""
    x = fwd.inputs[0]
    if x.shape is None:
        raise TracingError(f"the gradient of {fwd.op.type} at {fwd.op.location or '<unknown>'} needs an input of "
                           "known rank; give the input a static rank (an input_signature with None dimensions)")
    if not fwd.attrs["keepdims"]:
        axes = _reduced_axes(fwd)
        if shapes.is_fully_defined(g.shape):
            kept = list(g.shape)
            for a in sorted(axes):
                kept.insert(a, 1)
            g = ops.reshape(g, tuple(kept))
        else:
            g = ops.reshape(g, ops.where(np.isin(np.arange(len(x.shape)), axes), np.int32(1), dims_of(x)))
    return ops.add(g, ops.zeros(dims_of(x), g.dtype))


def _sum(fwd, grads):
    return [spread(fwd, grads[0])]


def _mean(fwd, grads):
    x = fwd.inputs[0]
    g = spread(fwd, grads[0])
    if shapes.is_fully_defined(x.shape):
        count = int(np.prod([x.shape[a] for a in _reduced_axes(fwd)], dtype=np.int64))
        return [ops.divide(g, np.asarray(max(count, 1), g.dtype))]
    count = ops.divide(ops.cast(ops.size(fwd.x(0)), g.dtype), ops.cast(ops.size(fwd.y(0)), g.dtype))
    return [ops.divide(g, count)]


def _extremum(fwd, grads):
    """``Max`` / ``Min``: the cotangent is shared equally by the elements equal to the result."""
    x = fwd.x(0)
    hit = ops.cast(ops.equal(x, spread(fwd, fwd.y(0))), grads[0].dtype)
    count = spread(fwd, reduction.reduce("Sum", hit, fwd.attrs["axis"], fwd.attrs["keepdims"]))
    return [ops.divide(ops.multiply(spread(fwd, grads[0]), hit), count)]


def _prod(fwd, grads):
    """``Prod``: each element's cotangent is the product of the others -- the product over the nonzero
    elements divided by the element where none is zero, that product for the one zero where there is
    one, zero where there are more (no division by zero)."""
    x, g = fwd.x(0), grads[0]
    axis, keepdims = fwd.attrs["axis"], fwd.attrs["keepdims"]
    zero = ops.equal(x, np.zeros((), x.dtype))
    nonzero = ops.where(zero, ops.ones_like(x), x)
    product = spread(fwd, reduction.reduce("Prod", nonzero, axis, keepdims))
    zeros = spread(fwd, reduction.reduce("Sum", ops.cast(zero, x.dtype), axis, keepdims))
    others = ops.where(ops.equal(zeros, 0), ops.divide(product, nonzero),
                       ops.where(ops.logical_and(zero, ops.equal(zeros, 1)), product, ops.zeros_like(x)))
    return [ops.multiply(spread(fwd, g), others)]


registry.register({
    "Add": _add,
    "Sub": _sub,
    "Mul": _mul,
    "RealDiv": _div,
    "Pow": _pow,
    "Maximum": _select_by(ops.greater_equal),
    "Minimum": _select_by(ops.less_equal),
    "FloorMod": _floor_mod,
    "Neg": lambda fwd, grads: [Exact(ops.negative(grads[0]))],
    "Abs": _abs,
    "Sqrt": _unary(lambda fwd: ops.divide(0.5, fwd.y(0))),
    "Exp": _unary(lambda fwd: fwd.y(0)),
    "Log": _unary(lambda fwd: ops.divide(1, fwd.x(0))),
    "Sin": _unary(lambda fwd: ops.cos(fwd.x(0))),
    "Cos": _unary(lambda fwd: ops.negative(ops.sin(fwd.x(0)))),
    "Tanh": _unary(_tanh_derivative),
    "Square": _unary(lambda fwd: ops.multiply(2, fwd.x(0))),
    "MatMul": _matmul,
    "Sum": _sum,
    "Mean": _mean,
    "Max": _extremum,
    "Min": _extremum,
    "Prod": _prod,
})
