"""The training example reads its batches from a dataset: staged, it matches plain Python SGD."""

import importlib.util
import pathlib

import numpy as np
import pytest

import autograph as ag

EXAMPLE = pathlib.Path(__file__).resolve().parent.parent / "examples" / "train_mlp_dataset.py"
spec = importlib.util.spec_from_file_location("train_mlp_dataset", EXAMPLE)
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)


def test_training_stops_early_with_high_accuracy():
    params, final_loss, steps = example.main()
    x, y = example.make_data()
    assert final_loss < 0.02 and steps < 10 * 200
    assert example.accuracy(params, x, y) >= 0.97


def python_sgd(params, ds, learning_rate):
    """The same steps as plain Python over the dataset (numpy in, numpy out)."""
    params = dict(params)
    for x, y in ds:
        g = example.gradient(params, x, y)
        params = {k: params[k] - learning_rate * g[k] for k in params}
    return params


@pytest.mark.parametrize("jit", [False, True])
def test_a_few_staged_steps_equal_python_sgd(jit):
    x, y = example.make_data(n=100)
    make = lambda: example.batches(x, y, batch_size=16, epochs=2, seed=3)  # noqa: E731 - two equal pipelines
    train = ag.function(example.train.python_function, jit_compile=jit)
    staged, _, steps = train(example.init_params(), make(), np.float64(0.5), np.float64(-1.0))
    reference = python_sgd(example.init_params(), make(), 0.5)
    assert int(steps) == 2 * 7
    for k in reference:
        np.testing.assert_allclose(staged[k], reference[k], rtol=1e-12, atol=1e-12)
