"""Cost of gradients: ``python benchmarks/grad.py [--quick] [--json FILE]``.

The cheap-gradient principle says a reverse-mode gradient costs a small
constant times the function.  For each computation this times, in the same
run, the forward pass alone (``ag.function``) and ``ag.value_and_grad``
(interpreter and ``jit_compile=True``, the four timed in alternation), and
prints the medians and the ratio value_and_grad / forward (target: at most 3):

* ``while_branch``: a 1,000-iteration scalar ``while`` loop with a branch in
  the body (its gradient is a ``While`` over accumulators);
* ``rnn``: a tanh RNN over T = 100 steps, batch 32, width 64 (a ``for`` over
  a tensor range);
* ``mlp_step``: one training step of a 2-layer MLP (batch 256, 64 -> 256 -> 10).

It also prints the accumulators of ``while_branch``: how many values per
iteration its gradient stacks, their entries and the elements their buffers
hold.  Where JAX is installed, the same computations written with
``lax.fori_loop``/``lax.scan`` are timed with ``jax.value_and_grad`` (jitted),
and the ratio autograph / JAX is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # see benchmarks/run.py

import numpy as np  # noqa: E402

import autograph as ag  # noqa: E402
from autograph import runtime as rt  # noqa: E402


def while_branch(x, n):
    y = x
    i = 0
    while i < n:
        if y > 1.0:
            y = y * 0.999 - 0.01 * x
        else:
            y = rt.sin(y) + 0.1 * x
        i += 1
    return y


def rnn(w, u, xs):
    h = rt.zeros((32, 64), "float64")
    for t in range(rt.shape(xs)[0]):
        h = rt.tanh(rt.matmul(h, w) + rt.matmul(xs[t], u))
    return rt.reduce_mean(h * h)


def mlp_loss(params, x, labels):
    h = rt.tanh(rt.matmul(x, params["w1"]) + params["b1"])
    logits = rt.matmul(h, params["w2"]) + params["b2"]
    return -rt.reduce_mean(rt.reduce_sum(labels * rt.log_softmax(logits), axis=1))


def _mlp_inputs(rng):
    params = {"w1": rng.normal(0, 0.1, (64, 256)), "b1": np.zeros(256), "w2": rng.normal(0, 0.1, (256, 10)),
              "b2": np.zeros(10)}
    labels = np.eye(10)[rng.integers(0, 10, 256)]
    return params, rng.normal(size=(256, 64)), labels


def cases():
    rng = np.random.default_rng(0)
    return [
        ("while_branch", while_branch, (np.float64(0.5), np.int32(1000)), 0),
        ("rnn", rnn, (rng.normal(0, 0.1, (64, 64)), rng.normal(0, 0.1, (16, 64)), rng.normal(size=(100, 32, 16))),
         (0, 1)),
        ("mlp_step", mlp_loss, _mlp_inputs(rng), 0),
    ]


def median_time(fn, args, repeats):
    return median_times([fn], args, repeats)[0]


def median_times(fns, args, repeats):
    """The median time of each of ``fns`` on ``args``, timed in alternation (a load on the machine
    slows them alike, so their ratios hold)."""
    for fn in fns:
        fn(*args)  # trace and warm up
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, found in zip(fns, times):
            start = time.perf_counter()
            fn(*args)
            found.append(time.perf_counter() - start)
    return [statistics.median(found) for found in times]


def accumulators(fn, args):
    """(values stacked per iteration, entries, buffer elements) of the loop in ``fn``'s gradient: one
    ``StackPush`` per stacked scalar value, one entry per iteration (``args[1]`` of them)."""
    cf = ag.value_and_grad(fn).get_concrete_function(*args)
    pushes = [op for g in cf.graph.library.values() for op in g.operations if op.type == "StackPush"]
    n = int(args[1])
    capacity = 4
    while capacity < n:
        capacity *= 2
    return len(pushes), n * len(pushes), capacity * len(pushes)


def jax_ratio(name, args):
    try:
        import jax
        import jax.numpy as jnp
        from jax import lax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    if name == "while_branch":
        def f(x):
            def body(i, y):
                return lax.cond(y > 1.0, lambda y: y * 0.999 - 0.01 * x, lambda y: jnp.sin(y) + 0.1 * x, y)
            return lax.fori_loop(0, 1000, body, x)
        fn, jargs = jax.jit(jax.value_and_grad(f)), (args[0],)
    elif name == "rnn":
        def f(w, u, xs):
            h, _ = lax.scan(lambda h, x: (jnp.tanh(h @ w + x @ u), None), jnp.zeros((32, 64)), xs)
            return jnp.mean(h * h)
        fn, jargs = jax.jit(jax.value_and_grad(f, argnums=(0, 1))), args
    else:
        def f(params, x, labels):
            h = jnp.tanh(x @ params["w1"] + params["b1"])
            return -jnp.mean(jnp.sum(labels * jax.nn.log_softmax(h @ params["w2"] + params["b2"]), axis=1))
        fn, jargs = jax.jit(jax.value_and_grad(f)), args
    return median_time(lambda *a: jax.block_until_ready(fn(*a)), jargs, 20)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--json", help="also write the figures to this file")
    options = parser.parse_args()
    repeats = 5 if options.quick else 20
    rows = []
    print(f"{'case':14} {'forward':>10} {'v&g':>10} {'ratio':>6} {'v&g jit':>10} {'ratio':>6} {'vs JAX':>7}")
    for name, fn, args, argnums in cases():
        forward, both, forward_jit, both_jit = median_times(
            [ag.function(fn), ag.value_and_grad(fn, argnums=argnums), ag.function(fn, jit_compile=True),
             ag.value_and_grad(fn, argnums=argnums, jit_compile=True)], args, repeats)
        jax_time = jax_ratio(name, args)
        row = {"case": name, "forward_s": forward, "value_and_grad_s": both, "ratio": both / forward,
               "forward_jit_s": forward_jit, "value_and_grad_jit_s": both_jit, "ratio_jit": both_jit / forward_jit,
               "vs_jax": None if jax_time is None else both / jax_time}
        rows.append(row)
        vs_jax = "-" if jax_time is None else f"{row['vs_jax']:.1f}x"
        print(f"{name:14} {forward * 1e3:8.2f}ms {both * 1e3:8.2f}ms {row['ratio']:5.2f}x "
              f"{both_jit * 1e3:8.2f}ms {row['ratio_jit']:5.2f}x {vs_jax:>7}")
    values, entries, held = accumulators(while_branch, cases()[0][2])
    print(f"while_branch accumulators: {values} values per iteration, {entries} entries for 1000 iterations "
          f"(buffers hold {held} elements, growing by doubling)")
    if options.json:
        with open(options.json, "w") as f:
            json.dump({"rows": rows, "accumulators": {"values": values, "entries": entries, "held": held}}, f,
                      indent=2)


if __name__ == "__main__":
    main()
