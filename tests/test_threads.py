"""State under threads: no lost updates, one conversion, one trace (tiny switch interval)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import autograph as ag
from autograph import api, loading
from autograph import runtime as rt

sys.path.insert(0, os.path.dirname(__file__))
from thread_util import THREADS, frequent_switches, run_threads  # noqa: E402,F401 - the fixture

pytestmark = pytest.mark.usefixtures("frequent_switches")


def in_threads(work):
    run_threads(lambda _: work())


def test_assign_add_in_a_graph_from_8_threads_loses_nothing():
    v = rt.Variable(np.int64(1), name="counter")

    @ag.function
    def bump(x):
        v.assign_add(x)
        return v.read_value()

    bump(np.int64(0))
    in_threads(lambda: [bump(np.int64(1)) for _ in range(2000)])
    print("threaded counter:", v.numpy())
    assert v.numpy() == 1 + THREADS * 2000


def test_eager_assign_add_and_sub_from_8_threads_lose_nothing():
    v = rt.Variable(np.float64(0.0))

    def work():
        for _ in range(1000):
            v.assign_add(2.0)
            v.assign_sub(1.0)

    in_threads(work)
    assert v.numpy() == THREADS * 1000


def test_concurrent_first_conversions_convert_once(monkeypatch):
    loads = []
    real_find = loading.find_node
    monkeypatch.setattr(loading, "find_node", lambda f: loads.append(f) or real_find(f))

    def f(x):
        if x > 0:
            return x
        return -x

    results = []
    in_threads(lambda: results.append(ag.convert(f, always_converted=True)))
    assert len(loads) == 1
    assert len({r.__code__ for r in results}) == 1 and all(r(-3) == 3 for r in results)
    assert len(api._CACHE[f.__code__]) == 1


def test_trace_cache_traces_once_per_signature_under_threads():
    @ag.function
    def f(x):
        return x * 2.0

    in_threads(lambda: [f(np.float32(i)) for i in range(50)])
    assert f.tracing_count == 1
    in_threads(lambda: [f(np.zeros(3, np.float32)) for _ in range(20)])
    assert f.tracing_count == 2
