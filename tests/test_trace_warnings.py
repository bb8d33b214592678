"""Trace-time warnings (``ag.TracingWarning``): Python code that runs once, while tracing.

A Python loop unrolling past the threshold and a plain ``print`` warn once
per site, at the user's ``file:line``, through ``warnings``.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt

UNROLLED = "a Python loop unrolled more than"
PRINTED = r"print\(\) with no tensor arguments runs once, while tracing"


def line_of(fn, text: str) -> int:
    """The file line of the first line of ``fn``'s source containing ``text``."""
    lines, first = inspect.getsourcelines(inspect.unwrap(getattr(fn, "python_function", fn)))
    return first + next(i for i, line in enumerate(lines) if text in line)


def recorded(call, *args):
    """The warnings ``call(*args)`` emits under the default filters (once per site)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        call(*args)
    return [w for w in caught if issubclass(w.category, ag.AutoGraphWarning)]


@pytest.fixture
def threshold():
    previous = ag.set_unroll_warning_threshold(100)
    yield
    ag.set_unroll_warning_threshold(previous)


def for_loop(x):
    for i in range(150):
        x = x + 1.0
    return x


def while_loop(x):
    k = 0
    while k < 101:
        x = x * 2.0
        k += 1
    return x


def loop_with_break(x):
    for i in range(1000):
        if i == 500:
            break
        x = x + 1.0
    return x


def short_loop(x):
    for i in range(100):
        x = x + 1.0
    return x


def test_tracing_warning_is_an_autograph_warning():
    assert issubclass(ag.TracingWarning, ag.AutoGraphWarning) and rt.TracingWarning is ag.TracingWarning


@pytest.mark.parametrize("fn, text", [(for_loop, "for i in"), (while_loop, "while k <"), (loop_with_break, "for i in")])
def test_unrolled_loop_warns_once_at_the_loop_line(threshold, fn, text):
    caught = recorded(ag.function(fn), np.float32(1))
    assert [w.category for w in caught] == [ag.TracingWarning]
    (w,) = caught
    assert str(w.message).startswith(UNROLLED + " 100 iterations while tracing")
    assert "make it a tensor" in str(w.message) and "rt.range" in str(w.message)
    assert (w.filename, w.lineno) == (__file__, line_of(fn, text))


def test_results_are_unchanged_by_counting(threshold):
    ag.set_unroll_warning_threshold(0)
    with pytest.warns(ag.TracingWarning, match=UNROLLED + " 0 iterations"):
        assert ag.function(for_loop)(np.float32(1)) == np.float32(151)
        assert ag.function(loop_with_break)(np.float32(0)) == np.float32(500)


def test_up_to_the_threshold_no_warning(threshold):
    assert recorded(ag.function(short_loop), np.float32(1)) == []


def test_python_loops_outside_a_trace_never_count(threshold):
    assert recorded(ag.convert(for_loop, always_converted=True), 1.0) == []
    assert recorded(ag.convert(while_loop, always_converted=True), 1.0) == []


def test_a_tensor_loop_does_not_warn(threshold):
    def staged(x, n):
        for i in range(n):
            x = x + 1.0
        return x

    assert recorded(ag.function(staged), np.float32(0), np.int32(1000)) == []


def test_one_warning_per_site_across_traces(threshold):
    f = ag.function(for_loop)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        f(np.float32(1))
        f(np.float64(1))  # a second trace: same site, no second warning
    assert [w.lineno for w in caught if w.category is ag.TracingWarning] == [line_of(for_loop, "for i in")]


def test_threshold_is_configurable(threshold):
    assert ag.set_unroll_warning_threshold(3) == 100
    caught = recorded(ag.function(short_loop), np.float32(1))
    assert [str(w.message).startswith(UNROLLED + " 3 iterations") for w in caught] == [True]
    ag.set_unroll_warning_threshold(None)
    assert recorded(ag.function(for_loop), np.float32(1)) == []
    with pytest.raises(ValueError, match="non-negative int or None"):
        ag.set_unroll_warning_threshold(-1)


def test_documented_filter_silences_only_the_unroll_warning(threshold):
    def both(x):
        print("tracing", 1)
        for i in range(200):
            x = x + 1.0
        return x

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        warnings.filterwarnings("ignore", category=ag.TracingWarning, message="a Python loop unrolled")
        ag.function(both)(np.float32(0))
    assert [w.lineno for w in caught if w.category is ag.TracingWarning] == [line_of(both, "print(")]


def test_plain_print_while_tracing_warns_at_its_line(capsys):
    def noisy(x):
        print("tracing with", 3)
        return x + 1.0

    caught = recorded(ag.function(noisy), np.float32(1))
    assert [w.category for w in caught] == [ag.TracingWarning]
    assert caught[0].lineno == line_of(noisy, "print(") and caught[0].filename == __file__
    assert inspect.cleandoc(str(caught[0].message)).startswith("print() with no tensor arguments")
    assert "rt.print(...)" in str(caught[0].message)
    assert capsys.readouterr().out == "tracing with 3\n"


def test_print_of_tensors_or_outside_a_trace_does_not_warn(capsys):
    def shows(x):
        print("x is", x)
        return x

    assert recorded(ag.function(shows), np.float32(2)) == []
    assert recorded(ag.convert(shows, always_converted=True), 2.0) == []
    with pytest.warns(ag.TracingWarning, match=PRINTED):
        ag.function(lambda x: (print("lambda"), x)[1], autograph=True)(np.float32(0))


def test_the_filters_the_readme_documents_silence_both(threshold):
    import pathlib
    import re

    readme = (pathlib.Path(__file__).resolve().parent.parent / "README.md").read_text()
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "ag.TracingWarning" in b]

    def both(x):
        print("tracing", 1)
        for i in range(200):
            x = x + 1.0
        return x

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        exec(block, {"ag": ag})
        ag.function(both)(np.float32(0))
    assert [w for w in caught if w.category is ag.TracingWarning] == []
