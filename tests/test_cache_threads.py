"""The trace cache under threads: every option combination, 8 threads, a tiny switch interval.

Reads of the cache are lock-free; writes and eviction happen under the
function's lock, and the tables a lock-free reader walks are replaced,
not changed (once ``RuntimeError: dictionary changed size during
iteration`` in about 2 runs of 9 with ``max_traces``).  The calls are
derandomized: call ``j`` of thread ``t`` has a length and a Python value
computed from ``t`` and ``j``.  The race is a narrow window: a failing
cache fails some runs, not every run.
"""

from __future__ import annotations

import itertools
import os
import sys

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt

sys.path.insert(0, os.path.dirname(__file__))
from thread_util import THREADS, frequent_switches, run_threads  # noqa: E402,F401 - the fixture

CALLS = 24
pytestmark = pytest.mark.usefixtures("frequent_switches")


class Scale:
    """A static argument keyed by identity (plain object)."""

    def __init__(self, factor):
        self.factor = factor


def python(x, n, step):
    return x * 2.0 + n + step


SIGNATURES = {None: None, "signature": [rt.TensorSpec((None,), "float32"), rt.TensorSpec((), "int32")]}
COMBINATIONS = list(itertools.product([False, True], [None, 1, 3], list(SIGNATURES), ["positional", "keyword"]))


def check_tables(f, max_traces):
    traced = f._traced_graphs()
    if max_traces is not None:
        assert len(traced) <= max_traces
    live = {id(cf) for cf in traced}
    tables = f._traces
    assert all(id(cf) in live for cf in tables.by_key.values())
    assert all(id(entry[0]) in live for entry in tables.fast.values())
    assert all(id(cf) in live for _, cf in tables.general)


@pytest.mark.filterwarnings("ignore::autograph.runtime.tracing.function.RetracingWarning")
@pytest.mark.parametrize("reduce_retracing,max_traces,signature,style", COMBINATIONS)
def test_cache_options_under_8_threads(reduce_retracing, max_traces, signature, style):
    """Many lengths (new hot-path entries) while Python values make new traces (evictions)."""
    options = {"reduce_retracing": reduce_retracing, "max_traces": max_traces}
    if signature is not None:
        options["input_signature"] = SIGNATURES[signature]
        f = ag.function(lambda x, n: x * 2.0 + n, **options)
    else:
        f = ag.function(python, **options)

    def work(t):
        for j in range(CALLS):
            x = np.arange((t * 7 + j * 13) % 48 + 1, dtype=np.float32)
            n = np.int32(j)
            step = (t + j) % 4  # a Python int: a new trace per value
            if signature is not None:
                got = f(x, n) if style == "positional" else f(x=x, n=n)
                expected = x * 2.0 + n
            else:
                got = f(x, n, step) if style == "positional" else f(x, n=n, step=step)
                expected = python(x, n, step)
            np.testing.assert_array_equal(got, expected)

    run_threads(work)
    check_tables(f, max_traces)


@pytest.mark.filterwarnings("ignore::autograph.runtime.tracing.function.RetracingWarning")
def test_new_entries_while_other_threads_evict():
    """Half the threads add hot-path and memoized entries (new lengths under a relaxed key),
    the other half trace new Python values, each trace evicting the oldest."""
    f = ag.function(lambda x, step: x * 2.0 + step, reduce_retracing=True, max_traces=3)
    f(np.zeros(1, np.float32), 0)
    f(np.zeros(2, np.float32), 0)  # [None]: new lengths now match without a trace

    def work(t):
        for j in range(80):
            if t % 2:
                x, step = np.zeros(100 + t * 100 + j, np.float32), 0
            else:
                x, step = np.zeros(3, np.float32), (t * 80 + j) % 7
            np.testing.assert_array_equal(f(x, step), x * 2.0 + step)

    run_threads(work)
    check_tables(f, 3)


@pytest.mark.filterwarnings("ignore::autograph.runtime.tracing.function.RetracingWarning")
def test_variables_and_objects_as_arguments_under_8_threads():
    variables = [rt.Variable(np.int64(0), name=f"v{t}") for t in range(THREADS)]

    @ag.function(max_traces=2)
    def bump(v, x, scale):
        v.assign_add(x)
        return v.read_value() * scale.factor

    scales = [Scale(1), Scale(2), Scale(3)]

    def work(t):
        for j in range(CALLS):
            scale = scales[(t + j) % 3]
            bump(variables[t], np.int64(1), scale)

    run_threads(work)
    assert [v.numpy() for v in variables] == [CALLS] * THREADS  # each call updated the variable passed in
    check_tables(bump, 2)
