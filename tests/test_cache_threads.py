"""The trace cache under threads: every option combination, 8 threads, a tiny switch interval.

Reads of the cache are lock-free; writes and eviction happen under the
function's lock and replace the tables instead of changing them while
another thread may walk them (once ``RuntimeError: dictionary changed size
during iteration`` in about 2 runs of 9 with ``max_traces``).  The calls are
derandomized: thread ``t`` calls with lengths ``(t + j) % 5 + 1``.
"""

from __future__ import annotations

import itertools
import sys
import threading

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt

THREADS = 8
CALLS = 24


@pytest.fixture(autouse=True)
def frequent_switches():
    saved = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(saved)


def run_threads(work):
    barrier = threading.Barrier(THREADS)
    errors = []

    def run(t):
        try:
            barrier.wait()
            work(t)
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[:3]


class Scale:
    """A static argument keyed by identity (plain object)."""

    def __init__(self, factor):
        self.factor = factor


def python(x, n, scale, step):
    return x * scale.factor + n + step


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
    options = {"reduce_retracing": reduce_retracing, "max_traces": max_traces}
    if signature is not None:
        options["input_signature"] = SIGNATURES[signature]
        f = ag.function(lambda x, n: x * 2.0 + n, **options)
        scales = [Scale(2.0)]
    else:
        f = ag.function(lambda x, n, scale, step: x * scale.factor + n + step, **options)
        scales = [Scale(2.0), Scale(3.0)]

    def work(t):
        for j in range(CALLS):
            length = (t + j) % 5 + 1
            x = np.arange(length, dtype=np.float32)
            n = np.int32(j)
            scale = scales[(t + j) % len(scales)]
            step = (t * j) % 3  # a Python int: a new trace per value
            if signature is not None:
                got = f(x, n) if style == "positional" else f(x=x, n=n)
                expected = x * 2.0 + n
            else:
                got = f(x, n, scale, step) if style == "positional" else f(x, n=n, scale=scale, step=step)
                expected = python(x, n, scale, step)
            np.testing.assert_array_equal(got, expected)

    run_threads(work)
    check_tables(f, max_traces)


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
