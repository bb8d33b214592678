"""examples/train_mlp.py: a model trained end to end in one graph, in every execution mode."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import autograph as ag

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "train_mlp.py"


def _load():
    spec = importlib.util.spec_from_file_location("train_mlp", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("mode", [{}, {"jit_compile": True}, {"parallel": False}, {"optimize": False}], ids=str)
def test_trains_to_the_tolerance_and_classifies(mode, capsys):
    example = _load()
    train = ag.function(example.train.python_function, **mode)
    x, y = example.make_data()
    params, loss, epochs = train(example.init_params(), x, y, np.float64(0.5), np.float64(0.05), np.int32(3000))
    assert loss <= 0.05 and 0 < epochs < 3000  # stopped early, by the tensor while's condition
    assert example.accuracy(params, x, y) >= 0.97
    printed = [float(line.split()[-1]) for line in capsys.readouterr().out.splitlines() if line.startswith("epoch")]
    assert len(printed) >= 3 and printed == sorted(printed, reverse=True)  # the loss falls


def test_matches_plain_numpy_sgd():
    """The same SGD in numpy with hand-written gradients, for a few epochs."""
    example = _load()
    x, y = example.make_data(n=40)
    p = example.init_params(hidden=4)
    params, _, epochs = example.train(p, x, y, np.float64(0.5), np.float64(0.0), np.int32(5))
    w1, b1, w2, b2 = p["w1"], p["b1"], p["w2"], p["b2"]
    for _ in range(5):
        h = np.tanh(x @ w1 + b1)
        z = (h @ w2 + b2).reshape(-1)
        dz = (1 / (1 + np.exp(-z)) - y) / len(y)
        dw2, db2 = h.T @ dz[:, None], dz.sum(keepdims=True)
        dh = dz[:, None] @ w2.T * (1 - h * h)
        dw1, db1 = x.T @ dh, dh.sum(0)
        w1, b1, w2, b2 = w1 - 0.5 * dw1, b1 - 0.5 * db1, w2 - 0.5 * dw2, b2 - 0.5 * db2
    assert epochs == 5
    for got, want in zip((params["w1"], params["b1"], params["w2"], params["b2"]), (w1, b1, w2, b2)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
