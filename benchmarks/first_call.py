"""First call of ``ag.function``: convert + trace + optimize + plan + run, split by phase.

``python benchmarks/first_call.py [--trials N] [--profile] [--tf]``

The function is ``programs.FIRST_CALL_SOURCE`` (the first-call row of
``run.py``): ten lines with an ``if`` inside a ``while``.  Every trial uses a
*fresh* function -- its own module written to a temporary folder, so nothing
is cached from the previous trial (conversion is cached per code object) --
and times its first call, ``g(np.float32(1.5), np.int32(20))``.
The phases are timed exclusively (a phase nested in another is subtracted
from it):

* ``convert`` -- loading the source, the analyses and the converter
  pipeline, compiling the result (``autograph.api._convert_code``);
* ``trace`` -- running the converted function on placeholders (what is left
  of the call once the other phases are taken out);
* ``optimize`` -- ``optimizer.optimize``;
* ``plan`` -- building the executor plans (and the parallel runner's
  dataflow) of the graph and its sub-graphs;
* ``run`` -- running the optimized graph on the argument (plans of
  sub-graphs built during the run count as ``plan``).

It prints the median total (and the fastest: on a loaded machine the least
disturbed figure) and the median of each phase over the trials.
``--profile`` adds a cProfile listing of one more first call; ``--tf``
times ``tf.function`` on the same function in the same process when
TensorFlow is importable (``TF_PYTHON``: another interpreter that has it, run
as a subprocess right after, when this one has not; it gets the source and the
expected result from this process, so it needs TensorFlow and numpy only, not
autograph).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fresh  # noqa: E402

X, N = 1.5, 20


def _program():
    """The benchmarked source and its expected result (``programs`` imports autograph; the
    ``--tf-only`` subprocess gets both from its parent instead, so its interpreter needs only
    TensorFlow)."""
    import programs

    return programs.FIRST_CALL_SOURCE, programs.np_first_call(np.float32(X), np.int32(N))

PHASES = ("convert", "trace", "optimize", "plan", "run")


class _Clock:
    """Exclusive time per phase: a nested phase's time is taken out of its parent's."""

    def __init__(self):
        self.totals = dict.fromkeys(PHASES, 0.0)
        self._stack = []  # [phase, start, time of children]

    @contextlib.contextmanager
    def phase(self, name):
        self._stack.append([name, time.perf_counter(), 0.0])
        try:
            yield
        finally:
            phase, start, children = self._stack.pop()
            elapsed = time.perf_counter() - start
            self.totals[phase] += elapsed - children
            if self._stack:
                self._stack[-1][2] += elapsed


CLOCK = _Clock()


def _timed(owner, attribute, phase):
    """Replaces ``owner.attribute`` (a function) by one that times ``phase``."""
    original = getattr(owner, attribute)

    def timed(*args, **kwargs):
        with CLOCK.phase(phase):
            return original(*args, **kwargs)

    setattr(owner, attribute, timed)


def _instrument():
    from autograph import api
    from autograph.runtime import optimizer
    from autograph.runtime.exec import parallel, plan
    from autograph.runtime.tracing import concrete

    _timed(api, "_convert_code", "convert")
    _timed(optimizer, "optimize", "optimize")
    _timed(plan.Plan, "__init__", "plan")
    _timed(parallel.Dataflow, "__init__", "plan")
    _timed(concrete.ConcreteFunction, "call_flat", "run")


def _fresh_function(folder, index, source):
    """The benchmarked function under a name of its own (``fresh.py``)."""
    return fresh.fresh_function(folder, f"first_call_{index}", source)


def _first_call(ag, fn, expected):
    for name in PHASES:
        CLOCK.totals[name] = 0.0
    start = time.perf_counter()
    with CLOCK.phase("trace"):
        result = ag.function(fn)(np.float32(X), np.int32(N))
    total = time.perf_counter() - start
    assert result == expected, result
    return total, dict(CLOCK.totals)


def _tf_first_call(trials, source, expected):
    """Median first call of tf.function over fresh functions (seconds), or None without TensorFlow."""
    try:
        import tensorflow as tf
    except ImportError:
        return None
    times = []
    with tempfile.TemporaryDirectory() as folder:
        for i in range(trials + 1):
            fn = _fresh_function(folder, f"tf{i}", source)
            start = time.perf_counter()
            result = tf.function(fn)(tf.constant(X, dtype=tf.float32), tf.constant(N, dtype=tf.int32))
            times.append(time.perf_counter() - start)
            assert np.float32(result.numpy()) == expected, result
    return statistics.median(times[1:])  # the first also pays TensorFlow's own warm-up


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of one first call")
    parser.add_argument("--tf", action="store_true", help="also time tf.function (same process if importable)")
    parser.add_argument("--tf-only", action="store_true", help=argparse.SUPPRESS)  # source on stdin
    parser.add_argument("--expected", type=float, help=argparse.SUPPRESS)  # with --tf-only
    args = parser.parse_args(argv)
    if args.tf_only:
        median = _tf_first_call(args.trials, sys.stdin.read(), np.float32(args.expected))
        print("none" if median is None else repr(median))
        return
    import autograph as ag

    source, expected = _program()

    _instrument()
    totals, phases = [], {name: [] for name in PHASES}
    with tempfile.TemporaryDirectory() as folder:
        _first_call(ag, _fresh_function(folder, "warmup", source), expected)  # imports, kernel tables, numpy warm-up
        for i in range(args.trials):
            total, split = _first_call(ag, _fresh_function(folder, i, source), expected)
            totals.append(total)
            for name in PHASES:
                phases[name].append(split[name])
        if args.profile:
            profile = cProfile.Profile()
            fn = _fresh_function(folder, "profiled", source)
            profile.enable()
            ag.function(fn)(np.float32(X), np.int32(N))
            profile.disable()
    median = statistics.median(totals)
    print(f"first call of ag.function (median of {args.trials} fresh functions): {median * 1e3:.2f} ms "
          f"(fastest {min(totals) * 1e3:.2f} ms)")
    for name in PHASES:
        value = statistics.median(phases[name])
        print(f"  {name:<9} {value * 1e3:7.3f} ms  {100 * value / median:5.1f} %")
    if args.tf:
        tf_median = _tf_first_call(args.trials, source, expected)
        if tf_median is None and os.environ.get("TF_PYTHON"):
            out = subprocess.run(
                [os.environ["TF_PYTHON"], os.path.abspath(__file__), "--tf-only", "--trials", str(args.trials),
                 "--expected", repr(float(expected))],
                input=source, capture_output=True, text=True, check=True,
            ).stdout.strip().splitlines()[-1]
            tf_median = None if out == "none" else float(out)
        if tf_median is None:
            print("tf.function: TensorFlow is not importable here (set TF_PYTHON to an interpreter that has it)")
        else:
            print(f"tf.function first call (median): {tf_median * 1e3:.2f} ms; "
                  f"autograph / tf.function = 1/{tf_median / median:.1f}")
    if args.profile:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(45)


if __name__ == "__main__":
    main(sys.argv[1:])
