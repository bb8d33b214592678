"""First-call cost of ``jax.jit(ag.convert(f))`` against ``jax.jit`` of the same function written with lax.

The first call of a jitted function traces and compiles it; with autograph it
also converts ``f`` (parse, passes, compile of the generated code) and runs
the operators while JAX traces.  Each round imports fresh copies of both
versions (a new module: new code objects, so neither autograph's conversion
cache nor JAX's trace cache helps) and times their first calls in
alternation, so a load on the machine slows both alike.  Printed: the median
first-call times and their ratio (target: at most 1.2), and the ratio of
steady-state call times.

    python benchmarks/jax_autograph.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import statistics
import sys
import tempfile
import time

SOURCE = '''
import jax.numpy as jnp
from jax import lax


def clip_loop(x, n):
    i = 0
    while i < n:
        if x > 1.0:
            x = x * 0.5
        else:
            x = x + 1.0
        i += 1
    return x


def clip_loop_lax(x, n):
    def body(carry):
        i, x = carry
        x = lax.cond(x > 1.0, lambda x: x * 0.5, lambda x: x + 1.0, x)
        return i + 1, x

    return lax.while_loop(lambda carry: carry[0] < n, body, (0, x))[1]


def cumulative(xs):
    s = 0.0
    out = []
    for row in xs:
        s = s + jnp.tanh(row)
        out.append(s * 2.0)
    return s, out


def cumulative_lax(xs):
    def step(s, row):
        s = s + jnp.tanh(row)
        return s, s * 2.0

    return lax.scan(step, jnp.float32(0.0), xs)


def search(x, limit):
    k = 0
    total = 0.0
    while True:
        total = total + x * k
        k += 1
        if total > limit or k > 100:
            break
    return total, k


def search_lax(x, limit):
    def cond(carry):
        total, k, done = carry
        return ~done

    def body(carry):
        total, k, _ = carry
        total = total + x * k
        k = k + 1
        return total, k, (total > limit) | (k > 100)

    total, k, _ = lax.while_loop(cond, body, (jnp.float32(0.0), 0, False))
    return total, k
'''

ROWS = [
    ("while + if (scalar)", "clip_loop", lambda jnp: (3.0, 1000)),
    ("for over rows + append", "cumulative", lambda jnp: (jnp.linspace(0.0, 1.0, 256),)),
    ("while True + break", "search", lambda jnp: (0.5, 1000.0)),
]


def _fresh_module(directory, index):
    path = pathlib.Path(directory) / f"bench_jax_autograph_{index}.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def _first_call(fn, args):
    import jax

    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    return time.perf_counter() - start


def _steady(fn, args, number=100, repeat=5):
    """The best per-call time over ``repeat`` runs of ``number`` calls (compiled already)."""
    import jax

    jax.block_until_ready(fn(*args))
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            jax.block_until_ready(fn(*args))
        best = min(best, (time.perf_counter() - start) / number)
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    options = parser.parse_args(argv)
    import jax
    import jax.numpy as jnp

    import autograph as ag

    print(f"jax {jax.__version__}, {options.rounds} rounds, first call = trace + compile (+ conversion)")
    print(f"{'row':28} {'ag first':>10} {'lax first':>10} {'ratio':>6} {'steady ratio':>13}")
    counter = 0
    with tempfile.TemporaryDirectory() as directory:
        for title, name, make_args in ROWS:
            args = make_args(jnp)
            ours, theirs = [], []
            for _ in range(options.rounds):
                counter += 1
                module = _fresh_module(directory, counter)
                ours.append(_first_call(jax.jit(ag.convert(getattr(module, name))), args))
                theirs.append(_first_call(jax.jit(getattr(module, name + "_lax")), args))
            module = _fresh_module(directory, counter + 1)
            counter += 1
            steady = _steady(jax.jit(ag.convert(getattr(module, name))), args) / _steady(
                jax.jit(getattr(module, name + "_lax")), args)
            a, b = statistics.median(ours), statistics.median(theirs)
            print(f"{title:28} {a * 1e3:8.2f}ms {b * 1e3:8.2f}ms {a / b:6.2f} {steady:13.2f}")


if __name__ == "__main__":
    main()
