"""Runs every benchmark: ``python benchmarks/run.py [--quick] [--json FILE]``.

Each row times one computation three ways in the same run -- written by hand
in plain Python / numpy (the baseline), as a graph run by the interpreter,
and as a graph compiled with ``jit_compile=True`` -- and prints the medians
and the ratios against the baseline, then the same figures as JSON.  The
``parallel`` row compares the interpreter with and without parallel
execution of independent operations.  ``benchmarks/conversion.py`` (the
converter's own benchmark) runs first when it exists.

Rows use ``ag.function`` (conversion + tracing); when the converter is not
available they fall back to ``rt.function`` over the same graphs written
with ``rt.cond`` / ``rt.while_loop`` (the ``mode`` column says which).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# One BLAS thread: on a shared 2-core machine, OpenBLAS's threads spin-waiting for a
# busy core make a 256x256 matmul vary 20-fold from run to run (set the variable
# to measure otherwise).  Must be set before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import programs  # noqa: E402

import autograph.runtime as rt  # noqa: E402
from autograph.runtime.exec import parallel  # noqa: E402


def _ag():
    """``autograph`` if ``ag.function`` works end to end here, else None."""
    try:
        import autograph as ag

        ag.function(programs.ag_scalar_loop)(np.int32(3))
    except Exception as e:  # noqa: BLE001 - any failure means: measure the runtime alone
        print(f"note: ag.function unavailable ({type(e).__name__}: {e}); using rt.function", file=sys.stderr)
        return None
    return ag


AG = _ag()
MODE = "ag" if AG is not None else "rt"


def function(name, **options):
    """``ag.function`` of ``programs.ag_<name>``, else ``rt.function`` of ``rt_<name>``."""
    if AG is not None:
        return AG.function(getattr(programs, "ag_" + name), **options)
    return rt.function(getattr(programs, "rt_" + name), **options)


def timeit(fn, repeats: int, number: int = 1) -> float:
    """Median seconds per call of ``fn()`` over ``repeats`` batches of ``number`` calls."""
    return compare([fn], repeats, number)[0]


def compare(fns, repeats: int, number: int = 1) -> list[float]:
    """Median seconds per call of each of ``fns``, measured interleaved.

    Each repeat times every function once, in turn, so that load from other
    processes (this machine is shared) hits all of them alike.
    """
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, bucket in zip(fns, times):
            gc.disable()
            start = time.perf_counter()
            for _ in range(number):
                fn()
            bucket.append((time.perf_counter() - start) / number)
            gc.enable()
    return [statistics.median(t) for t in times]


def row(name, baseline, interpreter, jit=None, note=""):
    return {
        "benchmark": name,
        "mode": MODE,
        "baseline_s": baseline,
        "interpreter_s": interpreter,
        "interpreter_ratio": interpreter / baseline,
        "jit_s": jit,
        "jit_ratio": None if jit is None else jit / baseline,
        "note": note,
    }


# -- the benchmarks ---------------------------------------------------------------------


def bench_first_call(quick):
    """Convert + trace + run of a fresh function with an ``if`` inside a ``while``."""
    count = 5 if quick else 15
    x, n = np.float32(1.5), np.int32(20)
    with tempfile.TemporaryDirectory() as tmp:
        def fresh(i, tag):
            return programs.fresh_first_call(tmp, f"first_call_{tag}_{i}")

        def first(tag, **options):
            fns = [fresh(i, tag) for i in range(count)]
            times = []
            for fn in fns:
                wrap = AG.function if AG is not None else None
                start = time.perf_counter()
                wrap(fn, **options)(x, n)
                times.append(time.perf_counter() - start)
            return statistics.median(times)

        if AG is None:
            return None
        interp = first("i")
        jit = first("j", jit_compile=True)
    baseline = timeit(lambda: programs.np_first_call(x, n), 5, 20)
    return row("first call (convert+trace+run)", baseline, interp, jit, "absolute: see *_s columns")


def bench_tiny(quick):
    number = 2000 if quick else 20000
    x = np.float32(2.0)
    f, fj = function("tiny"), function("tiny", jit_compile=True)
    f(x), fj(x)
    baseline, interp, jit = compare([lambda: programs.np_tiny(x), lambda: f(x), lambda: fj(x)], 7, number)
    return row("cached call, x + 1 on a scalar", baseline, interp, jit)


def bench_scalar_loop(quick):
    n = np.int32(100_000)
    repeats = 5 if quick else 15
    f, fj = function("scalar_loop"), function("scalar_loop", jit_compile=True)
    assert float(f(n)) == float(fj(n)) == float(programs.np_scalar_loop(n))
    baseline, interp, jit = compare([lambda: programs.np_scalar_loop(n), lambda: f(n), lambda: fj(n)], repeats)
    return row("scalar While, 100000 iterations with a branch", baseline, interp, jit, "per-iteration ratio")


def bench_chain(quick):
    x = np.linspace(-4.0, 4.0, 1_000_000, dtype=np.float32)
    repeats, number = (7, 5) if quick else (21, 20)
    f, fj = function("chain"), function("chain", jit_compile=True)
    np.testing.assert_allclose(f(x), programs.np_chain(x), rtol=1e-6)
    np.testing.assert_allclose(fj(x), programs.np_chain(x), rtol=1e-6)
    baseline, interp, jit = compare([lambda: programs.np_chain(x), lambda: f(x), lambda: fj(x)], repeats, number)
    return row("elementwise chain, 1e6 float32", baseline, interp, jit)


def bench_matmul(quick):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 256)).astype(np.float32)
    w = (rng.standard_normal((256, 256)) / 16.0).astype(np.float32)
    n = np.int32(20)
    repeats, number = (5, 3) if quick else (15, 10)
    f, fj = function("matmul_loop"), function("matmul_loop", jit_compile=True)
    np.testing.assert_allclose(f(x, w, n), programs.np_matmul_loop(x, w, n), rtol=1e-4, atol=1e-3)
    baseline, interp, jit = compare(
        [lambda: programs.np_matmul_loop(x, w, n), lambda: f(x, w, n), lambda: fj(x, w, n)], repeats, number)
    return row("matmul loop, 20 x 256x256", baseline, interp, jit)


def bench_parallel(quick):
    """Two independent chains of 5 x sin(exp(.)) over 4e6 float32: parallel vs sequential interpreter."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal(4_000_000).astype(np.float32)
    b = rng.standard_normal(4_000_000).astype(np.float32)
    repeats = 7 if quick else 21
    f = function("two_chains")
    graph = f.get_concrete_function(a, b).execution_graph
    args = [a, b]
    flow = parallel.dataflow(graph)
    assert flow.worthwhile, "the two chains should be scheduled in parallel"
    for _ in range(2 * parallel.Adaptive.TRIALS):  # let the adaptive runner measure both modes first
        f(a, b)
    pool = concurrent.futures.ThreadPoolExecutor(1)
    baseline, numpy_threads, sequential, threaded, chosen = compare([
        lambda: programs.np_two_chains(a, b),
        lambda: programs.np_two_chains_threaded(a, b, pool),  # the reference: what two threads give here
        lambda: flow.plan.run(args),
        lambda: flow.run(args),
        lambda: f(a, b),  # ag.function's default: the adaptive runner
    ], repeats)
    pool.shutdown()
    out = row("two independent chains, 4e6 float32 (parallel)", baseline, threaded, None,
              f"parallel/sequential = {threaded / sequential:.2f}, adaptive/sequential = {chosen / sequential:.2f}, "
              f"numpy 2 threads/1 thread = {numpy_threads / baseline:.2f}")
    out["sequential_s"] = sequential
    out["parallel_over_sequential"] = threaded / sequential
    out["adaptive_over_sequential"] = chosen / sequential
    out["numpy_two_threads_over_one"] = numpy_threads / baseline
    small = np.ones(16, np.float32)
    small_graph = f.get_concrete_function(small, small).execution_graph
    seq_small, par_small = compare([
        lambda: parallel.run_graph(small_graph, [small, small], parallel=False),
        lambda: parallel.run_graph(small_graph, [small, small], parallel=True),
    ], 5, 2000)
    out["small_graph_parallel_over_sequential"] = par_small / seq_small
    return out


BENCHMARKS = [bench_first_call, bench_tiny, bench_scalar_loop, bench_chain, bench_matmul, bench_parallel]


def fmt_time(seconds):
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def fmt_ratio(ratio):
    return "-" if ratio is None else f"{ratio:.2f}x"


def print_table(rows):
    header = f"{'benchmark':<48} {'mode':<4} {'baseline':>10} {'interp':>10} {'ratio':>8} {'jit':>10} {'ratio':>8}  note"
    print(header)
    print("-" * len(header))
    for r in rows:
        print(
            f"{r['benchmark']:<48} {r['mode']:<4} {fmt_time(r['baseline_s']):>10} {fmt_time(r['interpreter_s']):>10} "
            f"{fmt_ratio(r['interpreter_ratio']):>8} {fmt_time(r['jit_s']):>10} {fmt_ratio(r['jit_ratio']):>8}  "
            f"{r['note']}"
        )


def run_conversion(quick):
    path = os.path.join(HERE, "conversion.py")
    if not os.path.exists(path):
        return
    print("== benchmarks/conversion.py ==")
    cmd = [sys.executable, path] + (["--repeat", "5"] if quick else [])
    subprocess.run(cmd, check=False)
    print()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (under a minute)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON to FILE")
    parser.add_argument("--only", metavar="NAME", help="run only benchmarks whose name contains NAME")
    args = parser.parse_args(argv)
    if not args.only:
        run_conversion(args.quick)
    rows = []
    for bench in BENCHMARKS:
        if args.only and args.only not in bench.__name__:
            continue
        result = bench(args.quick)
        if result is not None:
            rows.append(result)
    print_table(rows)
    text = json.dumps(rows, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
