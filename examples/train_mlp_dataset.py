"""Minibatch SGD reading its batches from an rt.data pipeline, inside one ag.function.

The model and data are those of ``train_mlp.py`` (two rings, 2 -> 16 -> 1).
The input pipeline shuffles the points with a seed, batches them and
repeats for the epochs; the training loop ``for x, y in batches:`` is one
``DatasetReduce`` op whose body takes an SGD step with ``ag.grad`` and
stops early (``break``) once the loss of a batch is below the tolerance.

    python examples/train_mlp_dataset.py
"""

import os
import sys

import numpy as np

import autograph as ag
from autograph import runtime as rt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_mlp import accuracy, init_params, loss, make_data  # noqa: E402 - the model of train_mlp.py

gradient = ag.grad(loss)


def batches(x, y, batch_size=32, epochs=200, seed=0):
    """The points, shuffled each epoch (reproducibly), in batches, ``epochs`` times."""
    ds = rt.data.Dataset.from_tensor_slices((x, y))
    return ds.shuffle(len(x), seed=seed).batch(batch_size).repeat(epochs)


@ag.function
def train(params, ds, learning_rate, tolerance):
    """One SGD step per batch of ``ds`` until a batch's loss is below ``tolerance``."""
    w1, b1, w2, b2 = params["w1"], params["b1"], params["w2"], params["b2"]
    steps = 0
    current = np.float64(np.inf)
    for x, y in ds:
        p = {"w1": w1, "b1": b1, "w2": w2, "b2": b2}
        g = gradient(p, x, y)
        w1 = w1 - learning_rate * g["w1"]
        b1 = b1 - learning_rate * g["b1"]
        w2 = w2 - learning_rate * g["w2"]
        b2 = b2 - learning_rate * g["b2"]
        current = loss({"w1": w1, "b1": b1, "w2": w2, "b2": b2}, x, y)
        steps += 1
        if current < tolerance:
            break
    return {"w1": w1, "b1": b1, "w2": w2, "b2": b2}, current, steps


def main():
    x, y = make_data()
    params, final_loss, steps = train(init_params(), batches(x, y), np.float64(0.5), np.float64(0.02))
    print(f"stopped after {steps} steps, batch loss {final_loss:.4f}, accuracy {accuracy(params, x, y):.3f}")
    return params, final_loss, steps


if __name__ == "__main__":
    main()
