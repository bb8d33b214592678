"""Train a two-layer network end to end inside one ag.function.

The data: two noisy rings in the plane (class 0 inside, class 1 outside),
which no straight line separates.  The model: 2 -> 16 (tanh) -> 1 logit.
The whole training run -- an epoch loop that is a tensor ``while`` stopping
early once the loss is below a tolerance, each epoch one SGD step with the
gradient from ``ag.grad`` -- is one graph; ``rt.print`` reports the loss
every 100 epochs while it runs.

    python examples/train_mlp.py
"""

import numpy as np

import autograph as ag
from autograph import runtime as rt


def make_data(n=300, seed=0):
    """Two rings: points of class 1 at radius 2, of class 0 at radius 0.7, with noise."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    angles = rng.uniform(0.0, 2 * np.pi, n)
    radius = np.where(labels == 1, 2.0, 0.7) + rng.normal(0.0, 0.15, n)
    x = np.stack([radius * np.cos(angles), radius * np.sin(angles)], axis=1)
    return x, labels.astype(np.float64)


def init_params(hidden=16, seed=1):
    rng = np.random.default_rng(seed)
    return {"w1": rng.normal(0.0, 1.0, (2, hidden)), "b1": np.zeros(hidden),
            "w2": rng.normal(0.0, 1.0 / np.sqrt(hidden), (hidden, 1)), "b2": np.zeros(1)}


def logits(params, x):
    h = rt.tanh(rt.matmul(x, params["w1"]) + params["b1"])
    return rt.reshape(rt.matmul(h, params["w2"]) + params["b2"], (-1,))


def loss(params, x, y):
    """Binary cross-entropy of the logits, computed without overflow."""
    z = logits(params, x)
    return rt.reduce_mean(rt.maximum(z, 0.0) - z * y + rt.log(1.0 + rt.exp(-rt.abs(z))))


gradient = ag.grad(loss)


@ag.function
def train(params, x, y, learning_rate, tolerance, max_epochs):
    """SGD until the loss is below ``tolerance`` or ``max_epochs`` epochs have run."""
    w1, b1, w2, b2 = params["w1"], params["b1"], params["w2"], params["b2"]
    epoch = 0
    current = loss(params, x, y)
    while epoch < max_epochs and current > tolerance:
        g = gradient({"w1": w1, "b1": b1, "w2": w2, "b2": b2}, x, y)
        w1 = w1 - learning_rate * g["w1"]
        b1 = b1 - learning_rate * g["b1"]
        w2 = w2 - learning_rate * g["w2"]
        b2 = b2 - learning_rate * g["b2"]
        current = loss({"w1": w1, "b1": b1, "w2": w2, "b2": b2}, x, y)
        if epoch % 100 == 0:
            rt.print("epoch", epoch, "loss", current)
        epoch += 1
    return {"w1": w1, "b1": b1, "w2": w2, "b2": b2}, current, epoch


@ag.function
def accuracy(params, x, y):
    predicted = rt.cast(logits(params, x) > 0.0, "float64")
    return rt.reduce_mean(rt.cast(rt.equal(predicted, y), "float64"))


def main():
    x, y = make_data()
    params, final_loss, epochs = train(init_params(), x, y, np.float64(0.5), np.float64(0.05), np.int32(3000))
    print(f"stopped after {epochs} epochs, loss {final_loss:.4f}, accuracy {accuracy(params, x, y):.3f}")
    return params, final_loss, epochs


if __name__ == "__main__":
    main()
