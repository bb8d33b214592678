"""Which code an ``ag.convert`` result runs: the original outside traces, the converted code in them.

Outside every trace no value can be symbolic, so the original and the
converted code do the same; the original runs (at its own speed).  While
``ag.function`` traces -- in that thread -- the converted code runs, or a
tensor ``if`` would be a Python ``bool`` of a tensor.  ``always_converted``
runs the converted code everywhere.  These tests tell the two apart by the
code object of the running frame.
"""

from __future__ import annotations

import inspect
import sys
import threading
import traceback

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.core import graph as graph_module
from autograph.runtime.operators import calls


def running_code(x):
    """The code object executing this function's body, and the sign of x."""
    if x > 0:
        sign = 1
    else:
        sign = -1
    return sys._getframe().f_code, sign


def relu(x):
    if x > 0:
        y = x
    else:
        y = x * 0
    return y


def test_outside_a_trace_the_original_runs():
    converted = ag.convert(running_code)
    assert converted(2) == (running_code.__code__, 1)
    assert converted(-2) == (running_code.__code__, -1)


def test_always_converted_runs_the_converted_code():
    converted = ag.convert(running_code, always_converted=True)
    code, sign = converted(-2)
    assert sign == -1 and code is not running_code.__code__ and code is converted.__code__


def test_inside_a_trace_the_converted_code_runs():
    converted = ag.convert(relu)

    @ag.function
    def caller(x):
        return converted(x) + 1

    assert caller(np.float32(-3.0)) == np.float32(1.0)
    assert caller(np.float32(2.0)) == np.float32(3.0)
    graph = caller.get_concrete_function(rt.TensorSpec((), "float32")).graph
    assert "If" in graph.to_text()
    # ag.function of an ag.convert result traces its converted code, too.
    assert ag.function(converted)(np.float32(-2.0)) == np.float32(-0.0)


def test_the_result_looks_like_the_original():
    converted = ag.convert(relu)
    assert converted.__wrapped__ is relu and converted.__name__ == "relu"
    assert converted.__qualname__ == relu.__qualname__ and converted.__module__ == relu.__module__
    assert inspect.signature(converted) == inspect.signature(relu)
    assert ag.to_code(converted) == ag.to_code(relu) and "ag__.if_stmt" in ag.to_code(converted)
    assert ag.convert(converted) is converted
    generated = ag.convert(converted, always_converted=True)
    assert generated is not converted and generated.__code__ is not relu.__code__
    assert generated(-1.0) == relu(-1.0) == converted(-1.0)


def test_methods_static_and_class_methods_and_callables():
    class Box:
        scale = 3

        def times(self, x):
            if x > 0:
                return x * self.scale
            return 0

        @staticmethod
        def twice(x):
            return running_code(x)[1] * 2

        @classmethod
        def scaled(cls, x):
            return x * cls.scale

        def __call__(self, x):
            return self.times(x) + 1

    box = Box()
    assert ag.convert(box.times)(2) == 6 and ag.convert(Box.times)(box, -1) == 0
    assert ag.convert(Box.__dict__["twice"]).__func__(-4) == -2
    assert ag.convert(Box.__dict__["scaled"]).__func__(Box, 2) == 6
    assert ag.convert(box)(2) == 7


def test_a_traceback_from_the_original_shows_only_user_frames():
    def divide(a, b):
        if b == 0:
            return a / b
        return a // b

    converted = ag.convert(divide)
    with pytest.raises(ZeroDivisionError) as info:
        converted(1, 0)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert [f.name for f in frames] == ["test_a_traceback_from_the_original_shows_only_user_frames", "divide"]
    assert frames[-1].lineno == divide.__code__.co_firstlineno + 2


def test_a_trace_in_one_thread_does_not_change_another_thread():
    converted = ag.convert(running_code)
    inside, release = threading.Event(), threading.Event()
    seen = {}

    def wait_while_tracing(x):
        inside.set()
        release.wait(10)
        seen["in trace"] = converted(1)[0]
        return x

    traced = ag.function(wait_while_tracing)
    worker = threading.Thread(target=traced, args=(np.float32(1.0),))
    worker.start()
    try:
        assert inside.wait(10)
        assert graph_module.active_traces[0] >= 1
        assert converted(1)[0] is running_code.__code__  # this thread is not tracing
    finally:
        release.set()
        worker.join()
    assert seen["in trace"] is not running_code.__code__
    assert graph_module.active_traces[0] == 0


def test_the_trace_count_is_restored_when_a_trace_fails():
    @ag.function
    def bad(x):
        raise KeyError("boom")

    with pytest.raises(KeyError):
        bad(np.float32(1.0))
    assert graph_module.active_traces[0] == 0 and not calls.tracing()


def test_another_backend_s_trace_probe_selects_the_converted_code():
    converted = ag.convert(running_code)
    flag = [False]
    probe = lambda: flag[0]  # noqa: E731
    calls.register_trace_probe(probe)
    try:
        assert converted(1)[0] is running_code.__code__
        flag[0] = True
        assert calls.tracing() and converted(1)[0] is not running_code.__code__
    finally:
        calls._trace_probes.remove(probe)
    assert converted(1)[0] is running_code.__code__


def test_recursion_through_the_decorated_name(tmp_path):
    path = tmp_path / "recursive.py"
    path.write_text(
        "import autograph as ag\n"
        "@ag.convert\n"
        "def fact(n):\n"
        "    if n <= 1:\n"
        "        return 1\n"
        "    return n * fact(n - 1)\n"
    )
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    fact = namespace["fact"]
    assert fact(6) == 720
    assert ag.function(fact)(5) == 120  # a Python int: the recursion unrolls while tracing
