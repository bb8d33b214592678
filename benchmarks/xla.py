"""XLA through the JAX backend: ``python benchmarks/xla.py [--quick] [--repeat N] [--json FILE]``.

For each computation this times, in the same run, ``ag.function(f,
backend="jax")`` (the traced graph lowered to JAX, compiled by XLA) against
``jax.jit`` of the same computation written by hand with
``lax.while_loop``/``lax.cond``, both returning numpy values (the hand-written
one through ``np.array``, as ``ag.function`` returns them), and prints the
medians and the ratio autograph / hand-written (target: at most 1.2). The
numpy interpreter's time is printed for reference.

* ``while_branch``: a scalar ``while`` loop of 100,000 iterations with a
  branch in its body;
* ``elementwise``: a chain of elementwise ops on 1e6 float32 elements;
* ``matmul_loop``: 20 iterations of a 256x256 float32 matmul (with a tanh).

Both sides are called once before timing (trace + compile), so the figures
are steady-state calls, and are timed in alternation, call by call, so a
load on the machine slows both alike.
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
            y = y + 0.1 * x
        i += 1
    return y


def elementwise(x):
    y = rt.exp(-x * x) * 3.0 + rt.sin(x)
    return rt.tanh(y * 0.5 - x) + rt.sqrt(rt.abs(y) + 1.0)


def matmul_loop(a, w, n):
    i = 0
    while i < n:  # n a tensor: a While, as by hand (a Python 20 would unroll the loop at trace time)
        a = rt.tanh(rt.matmul(a, w))
        i += 1
    return a


def hand_written():
    """The same computations written for ``jax.jit`` by hand."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    def while_branch_jax(x, n):
        def body(c):
            i, y = c
            y = lax.cond(y > 1.0, lambda y: y * 0.999 - 0.01 * x, lambda y: y + 0.1 * x, y)
            return i + 1, y

        return lax.while_loop(lambda c: c[0] < n, body, (jnp.int32(0), x))[1]

    def elementwise_jax(x):
        y = jnp.exp(-x * x) * 3.0 + jnp.sin(x)
        return jnp.tanh(y * 0.5 - x) + jnp.sqrt(jnp.abs(y) + 1.0)

    def matmul_loop_jax(a, w, n):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, jnp.tanh(c[1] @ w)), (jnp.int32(0), a))[1]

    return {name: jax.jit(fn) for name, fn in (
        ("while_branch", while_branch_jax), ("elementwise", elementwise_jax), ("matmul_loop", matmul_loop_jax))}


def cases(quick):
    rng = np.random.default_rng(0)
    n = 10_000 if quick else 100_000
    size = 100_000 if quick else 1_000_000
    return {
        "while_branch": (while_branch, (np.float32(0.5), np.int32(n))),
        "elementwise": (elementwise, (rng.standard_normal(size).astype(np.float32),)),
        "matmul_loop": (matmul_loop, (rng.standard_normal((256, 256)).astype(np.float32),
                                      (rng.standard_normal((256, 256)) / 16).astype(np.float32), np.int32(20))),
    }


def paired_times(first, second, args, repeat):
    """Medians of ``first(*args)`` and ``second(*args)`` timed in alternation (a load on the machine
    slows both alike)."""
    first(*args), second(*args)
    times = ([], [])
    for _ in range(repeat):
        for fn, out in zip((first, second), times):
            start = time.perf_counter()
            fn(*args)
            out.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def median_time(fn, args, repeat):
    fn(*args)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    jitted = hand_written()
    rows = {}
    print(f"{'computation':<14}{'numpy interp':>14}{'backend=jax':>14}{'jax.jit hand':>14}{'ratio':>8}")
    for name, (fn, inputs) in cases(args.quick).items():
        hand = jitted[name]

        def by_hand(*a, hand=hand):
            return np.array(hand(*a))

        on_jax = ag.function(fn, backend="jax")
        np.testing.assert_allclose(on_jax(*inputs), by_hand(*inputs), rtol=2e-5, atol=1e-5)
        t_numpy = median_time(ag.function(fn), inputs, max(3, args.repeat // 5))
        t_jax, t_hand = paired_times(on_jax, by_hand, inputs, args.repeat)
        rows[name] = {"numpy_s": t_numpy, "backend_jax_s": t_jax, "hand_jax_s": t_hand, "ratio": t_jax / t_hand}
        print(f"{name:<14}{t_numpy * 1e3:>12.3f}ms{t_jax * 1e3:>12.3f}ms{t_hand * 1e3:>12.3f}ms"
              f"{t_jax / t_hand:>8.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
