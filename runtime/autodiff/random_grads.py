"""Gradient rules of the random ops with respect to their parameters (the reparameterization
trick; ``registry.py`` says what a rule is).

``RandomNormal(shape, mean, stddev)`` is ``mean + stddev * z`` for a standard normal ``z`` and
``RandomUniform(shape, minval, maxval)`` is ``minval + (maxval - minval) * u`` for ``u`` in
``[0, 1)`` (the numpy kernels), so the derivative of a sample with respect to a parameter is
``1``, ``z``, ``1 - u`` or ``u``; ``z`` and ``u`` are read back from the sample
(``(sample - mean) / stddev``), which a parameter making the distribution a point (``stddev == 0``,
``minval == maxval``) does not allow: the gradient is then NaN.  The shape carries no gradient.
"""

from __future__ import annotations

from autograph.runtime import ops
from autograph.runtime.autodiff import registry


def _normal(fwd, grads):
    g = grads[0]
    d_mean = ops.reduce_sum(g) if fwd.wants(1) else None
    d_stddev = None
    if fwd.wants(2):
        unit = ops.divide(ops.subtract(fwd.y(0), fwd.x(1)), fwd.x(2))
        d_stddev = ops.reduce_sum(ops.multiply(g, unit))
    return [None, d_mean, d_stddev]


def _uniform(fwd, grads):
    g = grads[0]
    low, high = fwd.x(1), fwd.x(2)
    unit = ops.divide(ops.subtract(fwd.y(0), low), ops.subtract(high, low))
    d_low = ops.reduce_sum(ops.multiply(g, ops.subtract(1, unit))) if fwd.wants(1) else None
    d_high = ops.reduce_sum(ops.multiply(g, unit)) if fwd.wants(2) else None
    return [None, d_low, d_high]


registry.register({"RandomNormal": _normal, "RandomUniform": _uniform})
