"""A place the function both reads and writes (``obj.total = obj.total + x``): read again at every call.

The trace reads ``obj.total`` as a constant, and the graph writes the new
value back after each call (``runtime/tracing/escapes.py``).  The concrete
function is kept only while each place it writes back still holds the number
or array it held when traced; otherwise the function is traced again, so each
call starts from the value Python would (the second call of a counter gives 5,
not 2).  A place the function only writes (it held no number before) keeps
one trace.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autograph as ag
import autograph.runtime as rt
from modes import MODES

i32, f32 = np.int32, np.float32


class Box:
    def __init__(self, **values):
        self.__dict__.update(values)


def add_to_total(obj, x):
    obj.total = obj.total + x
    return obj.total


def count_in_loop(obj, n):
    for _ in range(n):
        obj.calls += 1
    return obj.calls


def sgd_step(model, g):
    model.w = model.w - 0.5 * g
    return model.w.sum()


def nested_state(obj, x):
    if x > 0:
        obj.stats.hits = obj.stats.hits + 1
    return obj.stats.hits


def run_both(fn, make_state, args_per_call, mode):
    """The results of each call in Python and traced, each on its own state."""
    python_state, traced_state = make_state(), make_state()
    traced = ag.function(fn, **MODES[mode])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = [fn(python_state, *args) for args in args_per_call]
        got = [traced(traced_state, *args) for args in args_per_call]
    return want, got, python_state, traced_state


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn, make_state, calls", [
    (add_to_total, lambda: Box(total=0), [(i32(2),), (i32(2),), (i32(5),)]),
    (add_to_total, lambda: Box(total=f32(1.5)), [(f32(2.0),), (f32(0.25),)]),
    (count_in_loop, lambda: Box(calls=0), [(i32(3),), (i32(2),), (i32(0),), (i32(4),)]),
    (nested_state, lambda: Box(stats=Box(hits=0)), [(i32(1),), (i32(-1),), (i32(3),)]),
])
def test_each_call_starts_from_the_value_python_would(fn, make_state, calls, mode):
    want, got, _, _ = run_both(fn, make_state, calls, mode)
    assert [np.asarray(v).item() for v in got] == [np.asarray(v).item() for v in want]


@pytest.mark.parametrize("mode", MODES)
def test_an_array_updated_in_place_of_its_attribute_advances(mode):
    make = lambda: Box(w=np.ones(3, dtype=np.float32))  # noqa: E731
    want, got, python_model, traced_model = run_both(sgd_step, make, [(np.full(3, 0.5, f32),)] * 4, mode)
    assert [float(v) for v in got] == [float(v) for v in want]
    np.testing.assert_array_equal(traced_model.w, python_model.w)
    assert traced_model.w.dtype == python_model.w.dtype


def item_counter(state, x):
    state["n"] = state["n"] + x
    return state["n"]


def appends_to_argument(xs, x):
    xs.append(x)
    return len(xs)


def pops_nested(config, x):
    config["layers"].pop()
    return x


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn, argument, kind, path", [
    (item_counter, {"n": 1}, "dict", "state"),
    (appends_to_argument, [1.0], "list", "xs"),
    (pops_nested, {"layers": [1, 2]}, "list", r"config\['layers'\]"),
])
def test_a_list_or_dict_argument_changed_by_the_function_is_refused(fn, argument, kind, path, mode):
    """The graph gets copies of list and dict arguments: the caller's would not change."""
    with pytest.raises(ag.TracingError, match=rf"changed its {kind} argument '{path}'.*Return the new {kind}"):
        ag.function(fn, **MODES[mode])(argument, f32(1.0))


def grows_in_a_tensor_loop(xs, n):
    for i in range(n):
        xs.append(i)
    return len(xs)


def grows_in_a_tensor_if(xs, c):
    if c > 0:
        xs.append(c)
    return c


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn, construct", [(grows_in_a_tensor_loop, "for loop"), (grows_in_a_tensor_if, "if")])
def test_a_list_argument_a_tensor_statement_stages_is_refused(fn, construct, mode):
    """The staged list is the trace's copy of the argument: the caller's list would not grow."""
    with pytest.raises(ag.TracingError, match=rf"'xs' changes length in the {construct} at .*list argument 'xs'"):
        ag.function(fn, **MODES[mode])([i32(0)], i32(2))


def test_a_list_argument_read_and_copied_is_not_refused():
    def extended(xs, x):
        ys = list(xs)
        ys.append(x)
        return sum(ys)

    assert float(ag.function(extended)([f32(1.0), f32(2.0)], f32(3.0))) == 6.0


def write_only(obj, x):
    obj.last = x * 2
    return x


@pytest.mark.parametrize("mode", MODES)
def test_a_place_only_written_keeps_one_trace(mode):
    obj = Box(last=None)
    traced = ag.function(write_only, **MODES[mode])
    for k in range(4):
        traced(obj, f32(k))
        assert obj.last == 2 * k
    assert traced.tracing_count == 1


def test_a_state_that_does_not_change_keeps_one_trace():
    def clamp(obj, x):
        obj.level = min(obj.level, 3)  # a Python value: the same after every call
        return x + obj.level

    obj = Box(level=7)
    traced = ag.function(clamp)
    assert [int(traced(obj, i32(1))) for _ in range(3)] == [4, 4, 4]
    assert traced.tracing_count == 1


def test_the_retracing_warning_names_the_place_and_the_fix():
    obj = Box(total=0)
    traced = ag.function(add_to_total)
    with pytest.warns(rt.RetracingWarning if hasattr(rt, "RetracingWarning") else Warning,
                      match=r"'obj\.total', which the function writes, changed since it was traced.*rt\.Variable"):
        for _ in range(8):
            traced(obj, i32(1))
    assert obj.total == 8
