"""Benchmark of rt.data pipelines (issue 20's targets).  Run: ``python benchmarks/data.py``.

1. ``from_tensor_slices(100,000 records) -> map(a few numpy-level ops) -> filter -> batch(256)
   -> prefetch``, consumed by a staged ``for`` loop (``ag.function``) summing the batches:
   optimized (map+filter fusion, map+batch vectorization) vs ``Options(optimize=False)`` vs a
   the same staged loop over ``from_generator`` of a hand-written numpy generator doing the same
   work (vectorized over all records at once, batches sliced out).
2. A map whose function releases the GIL (large elementwise numpy ops, single-threaded in numpy): ``num_parallel_calls=2`` vs ``None``.

Prints one line per measurement and the ratios; the best of ``--repeat`` runs each.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.data import Dataset, Options

RECORDS = 100_000
BATCH = 256


def features(x, y):
    return rt.sqrt(x * x + 1.0) * 0.5 - y, y * 2.0


def keep(a, b):
    return a > 0.0


@ag.function
def total(ds):
    s = np.float64(0.0)
    for a, b in ds:
        s += rt.cast(rt.reduce_sum(a) + rt.reduce_sum(b), "float64")
    return s


def pipeline(xs, ys, options=None):
    ds = Dataset.from_tensor_slices((xs, ys)).map(features).filter(keep).batch(BATCH).prefetch(2)
    return ds if options is None else ds.with_options(options)


def numpy_generator(xs, ys):
    """The same work by hand: vectorized numpy over the whole arrays, batches sliced out."""
    a = np.sqrt(xs * xs + np.float32(1.0)) * np.float32(0.5) - ys
    b = ys * np.float32(2.0)
    mask = a > 0.0
    a, b = a[mask], b[mask]
    for start in range(0, len(a), BATCH):
        yield a[start:start + BATCH], b[start:start + BATCH]


def best_of(repeat, fn):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def vectorization(repeat):
    rng = np.random.default_rng(0)
    xs = rng.normal(size=RECORDS).astype(np.float32)
    ys = rng.normal(size=RECORDS).astype(np.float32)
    fast, slow = pipeline(xs, ys), pipeline(xs, ys, Options(optimize=False))
    spec = (rt.TensorSpec((None,), "float32"), rt.TensorSpec((None,), "float32"))
    by_hand = Dataset.from_generator(lambda: numpy_generator(xs, ys), output_signature=spec).prefetch(2)
    total(fast), total(slow), total(by_hand)  # traced once each (and the pipelines optimized) before timing
    t_fast, r_fast = best_of(repeat, lambda: total(fast))
    t_slow, r_slow = best_of(repeat, lambda: total(slow))
    t_numpy, r_numpy = best_of(repeat, lambda: total(by_hand))
    assert np.isclose(r_fast, r_slow, rtol=1e-9) and np.isclose(r_fast, r_numpy, rtol=1e-5), (r_fast, r_slow, r_numpy)
    print(f"pipeline optimized (vectorized)   {t_fast * 1e3:9.1f} ms")
    print(f"pipeline, Options(optimize=False) {t_slow * 1e3:9.1f} ms   ({t_slow / t_fast:.1f}x the optimized)")
    print(f"hand-written numpy generator      {t_numpy * 1e3:9.1f} ms   (optimized / numpy = {t_fast / t_numpy:.2f})")
    print(fast.explain().split("\n\n")[1])


def heavy(m):
    return rt.reduce_sum(rt.sin(m) * rt.cos(m) + rt.sqrt(rt.abs(m)))


def parallel_map(repeat):
    mats = np.random.default_rng(1).normal(size=(48, 400_000))
    serial = Dataset.from_tensor_slices(mats).map(heavy)
    parallel = Dataset.from_tensor_slices(mats).map(heavy, num_parallel_calls=2)
    t_serial, r_serial = best_of(repeat, lambda: [float(v) for v in serial])
    t_parallel, r_parallel = best_of(repeat, lambda: [float(v) for v in parallel])
    assert r_serial == r_parallel
    print(f"map, num_parallel_calls=None      {t_serial * 1e3:9.1f} ms")
    print(f"map, num_parallel_calls=2         {t_parallel * 1e3:9.1f} ms   ({t_parallel / t_serial:.2f}x)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    vectorization(args.repeat)
    parallel_map(args.repeat)


if __name__ == "__main__":
    main()
