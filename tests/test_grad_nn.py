"""The model ops: values against numpy references, gradients against finite differences."""

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import autograph as ag
from autograph import runtime as rt

from test_grad_rules import arrays, check

W = np.arange(12.0).reshape(3, 4) / 7.0


def _logsumexp(x, axis, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


OPS = {
    "sigmoid": (rt.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "softmax": (lambda x: rt.softmax(x, axis=1), lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True)),
    "softmax0": (lambda x: rt.softmax(x, axis=0), lambda x: np.exp(x) / np.exp(x).sum(0, keepdims=True)),
    "log_softmax": (rt.log_softmax, lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
    "logsumexp": (lambda x: rt.reduce_logsumexp(x, axis=1, keepdims=True), lambda x: _logsumexp(x, 1, True)),
    "logsumexp_all": (rt.reduce_logsumexp, lambda x: _logsumexp(x, None)),
    "cumsum": (lambda x: rt.cumsum(x, axis=1), lambda x: np.cumsum(x, axis=1)),
    "tile": (lambda x: rt.tile(x, (2, 1, 3)), lambda x: np.tile(x, (2, 1, 3))),
    "transpose": (lambda x: rt.transpose(x), lambda x: x.T),
    "expand_squeeze": (lambda x: rt.squeeze(rt.expand_dims(x, 1), 1), lambda x: x),
    "clip": (lambda x: rt.clip_by_value(x, -0.5, 0.7), lambda x: np.clip(x, -0.5, 0.7)),
    "broadcast_to": (lambda x: rt.broadcast_to(x, (2, 3, 4)), lambda x: np.broadcast_to(x, (2, 3, 4))),
}


@settings(max_examples=5, deadline=None)
@given(arrays((3, 4), -3.0, 3.0))
@pytest.mark.parametrize("name", sorted(OPS))
def test_model_ops(name, x):
    op, reference = OPS[name]
    np.testing.assert_allclose(op(x), reference(x), rtol=1e-12)  # eager
    np.testing.assert_allclose(ag.function(op)(x), reference(x), rtol=1e-12)  # graph
    if name == "clip":
        assume(np.min(np.abs(np.abs(x - 0.1) - 0.6)) > 1e-3)  # at a clipping bound: no derivative

    def f(x):
        y = op(x)
        return rt.reduce_sum(rt.sin(y * np.arange(1.0, 1.0 + np.prod(y.shape)).reshape(y.shape) / 10.0))

    check(f, x)


def test_stable_for_large_inputs():
    x = np.array([-1000.0, 0.0, 1000.0])
    np.testing.assert_allclose(rt.sigmoid(x), [0.0, 0.5, 1.0])
    np.testing.assert_allclose(ag.function(lambda x: rt.softmax(x))(x), [0.0, 0.0, 1.0])
    assert ag.function(lambda x: rt.reduce_logsumexp(x))(x) == pytest.approx(1000.0)
    g = ag.grad(lambda x: rt.reduce_sum(rt.log_softmax(x) * np.array([0.0, 0.0, 1.0])))(x)
    np.testing.assert_allclose(g, [0.0, 0.0, 0.0], atol=1e-12)


def test_one_hot_and_cross_entropy():
    labels = np.array([2, 0])
    np.testing.assert_array_equal(rt.one_hot(labels, 3), [[0, 0, 1], [1, 0, 0]])

    def xent(logits):
        return -rt.reduce_mean(rt.reduce_sum(rt.one_hot(labels, 3, "float64") * rt.log_softmax(logits), axis=1))

    logits = np.array([[0.1, 0.2, 0.3], [1.0, -1.0, 0.5]])
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    np.testing.assert_allclose(ag.grad(xent)(logits), (p - np.eye(3)[labels]) / 2, rtol=1e-10)


def test_bad_input():
    with pytest.raises(ValueError, match=r"broadcast_to: shape \[3\] cannot be broadcast to \[2,4\]"):
        rt.broadcast_to(np.ones(3), (2, 4))
    with pytest.raises(ValueError, match="squeeze: axis 0 of shape"):
        rt.squeeze(np.ones((2, 3)), 0)
    with pytest.raises(TypeError, match="sigmoid needs a float tensor"):
        ag.function(rt.sigmoid)(np.int32(3))
