"""Benchmark of rt.data pipelines (issue 20's targets).  Run: ``python benchmarks/data.py``.

1. ``from_tensor_slices(100,000 records) -> map(a few numpy-level ops) -> filter -> batch(256)
   -> prefetch``, consumed by a staged ``for`` loop (``ag.function``) summing the batches:
   optimized (map+filter fusion, map+batch vectorization) vs ``Options(optimize=False)`` vs the
   same staged loop over ``from_generator`` of a hand-written numpy generator doing the same
   work (vectorized over all records at once, batches sliced out).  The generator gets no
   prefetch: it does all its work on the first element, so a prefetch thread would only add
   handovers -- this is its fastest form.  A plain Python loop over the generator (no
   autograph at all) is printed too: the difference to it is the staged loop's own cost,
   paid alike by both pipelines.
2. A map whose function releases the GIL (large elementwise numpy ops, single-threaded in
   numpy): ``num_parallel_calls=2`` vs ``None``; next to it the same work on two plain Python
   threads (the most two threads can gain on this machine right now: other processes share the
   cores) and how many map calls ran at once on average (a ``py_function`` sort, timed inside).

Each measurement runs ``--repeat`` times, the variants of a comparison alternating (a load that
comes and goes slows them alike); prints medians and the median of the per-round ratios.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import statistics
import threading
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


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def alternating(repeat, variants):
    """{name: (median seconds, per-round seconds, last result)}, the variants run in turn each round."""
    rounds = {name: [] for name in variants}
    results = {}
    for _ in range(repeat):
        for name, fn in variants.items():
            seconds, results[name] = timed(fn)
            rounds[name].append(seconds)
    return {name: (statistics.median(t), t, results[name]) for name, t in rounds.items()}


def median_ratio(runs, a, b):
    return statistics.median(x / y for x, y in zip(runs[a][1], runs[b][1]))


def plain_python_total(xs, ys):
    s = np.float64(0.0)
    for a, b in numpy_generator(xs, ys):
        s += np.float64(a.sum()) + np.float64(b.sum())
    return s


def vectorization(repeat):
    rng = np.random.default_rng(0)
    xs = rng.normal(size=RECORDS).astype(np.float32)
    ys = rng.normal(size=RECORDS).astype(np.float32)
    fast, slow = pipeline(xs, ys), pipeline(xs, ys, Options(optimize=False))
    spec = (rt.TensorSpec((None,), "float32"), rt.TensorSpec((None,), "float32"))
    by_hand = Dataset.from_generator(lambda: numpy_generator(xs, ys), output_signature=spec).with_options(
        Options(inject_prefetch=False))
    total(fast), total(slow), total(by_hand)  # traced once each (and the pipelines optimized) before timing
    runs = alternating(repeat, {"fast": lambda: total(fast), "by_hand": lambda: total(by_hand),
                                "python": lambda: plain_python_total(xs, ys)})
    slow_runs = alternating(max(1, repeat // 4), {"fast": lambda: total(fast), "slow": lambda: total(slow)})
    r_fast, r_hand, r_python, r_slow = runs["fast"][2], runs["by_hand"][2], runs["python"][2], slow_runs["slow"][2]
    assert np.isclose(r_fast, r_slow, rtol=1e-9) and np.isclose(r_fast, r_hand, rtol=1e-5), (r_fast, r_slow, r_hand)
    assert np.isclose(r_fast, r_python, rtol=1e-5), (r_fast, r_python)
    ms = {name: run[0] * 1e3 for name, run in runs.items()}
    print(f"pipeline optimized (vectorized)   {ms['fast']:9.1f} ms")
    print(f"pipeline, Options(optimize=False) {slow_runs['slow'][0] * 1e3:9.1f} ms   "
          f"({median_ratio(slow_runs, 'slow', 'fast'):.1f}x the optimized)")
    print(f"hand-written numpy generator      {ms['by_hand']:9.1f} ms   "
          f"(optimized / numpy = {median_ratio(runs, 'fast', 'by_hand'):.2f})")
    print(f"  the generator in a Python loop  {ms['python']:9.1f} ms   (no autograph: the staged loop's own cost "
          "is the rest)")
    print(fast.explain().split("\n\n")[1])


def heavy(m):
    return rt.reduce_sum(rt.sin(m) * rt.cos(m) + rt.sqrt(rt.abs(m)))


def heavy_numpy(m):
    return np.sum(np.sin(m) * np.cos(m) + np.sqrt(np.abs(m)))


def two_threads(mats):
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        return list(pool.map(heavy_numpy, mats))


def calls_at_once(mats, repeat):
    """The mean number of map calls running at once in a ``num_parallel_calls=2`` map of a sort."""
    spans, lock = [], threading.Lock()

    def sort_sum(m):
        start = time.perf_counter()
        out = np.sort(m)[::997].sum()
        with lock:
            spans.append(time.perf_counter() - start)
        return out

    ds = Dataset.from_tensor_slices(mats).map(
        lambda m: rt.py_function(sort_sum, [m], "float64", shape=()), num_parallel_calls=2)
    levels = []
    for _ in range(max(1, repeat // 2)):
        spans.clear()
        seconds, _ = timed(lambda: [float(v) for v in ds])
        levels.append(sum(spans) / seconds)
    return statistics.median(levels)


def parallel_map(repeat):
    mats = np.random.default_rng(1).normal(size=(48, 400_000))
    serial = Dataset.from_tensor_slices(mats).map(heavy)
    parallel = Dataset.from_tensor_slices(mats).map(heavy, num_parallel_calls=2)
    runs = alternating(repeat, {
        "serial": lambda: [float(v) for v in serial], "parallel": lambda: [float(v) for v in parallel],
        "numpy_serial": lambda: [heavy_numpy(m) for m in mats], "numpy_threads": lambda: two_threads(mats),
    })
    assert runs["serial"][2] == runs["parallel"][2]
    assert np.allclose(runs["serial"][2], runs["numpy_threads"][2])
    print(f"map, num_parallel_calls=None      {runs['serial'][0] * 1e3:9.1f} ms")
    print(f"map, num_parallel_calls=2         {runs['parallel'][0] * 1e3:9.1f} ms   "
          f"({median_ratio(runs, 'parallel', 'serial'):.2f}x)")
    print(f"  same work, plain numpy, 2 threads vs 1: {median_ratio(runs, 'numpy_threads', 'numpy_serial'):.2f}x "
          f"(what 2 threads can gain now; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print(f"  map calls running at once (num_parallel_calls=2, a sort): {calls_at_once(mats, repeat):.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    vectorization(args.repeat)
    parallel_map(args.repeat)


if __name__ == "__main__":
    main()
