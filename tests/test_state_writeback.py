"""Symbolic tensors never stay in the user's objects after a call (issue 16, item 11).

A tensor loop or branch that updates ``obj.total`` binds the loop's result,
a symbolic tensor, to it while tracing; at every call the graph writes the
value it computed back (``runtime/tracing/escapes.py``), so after the call
the attribute holds a numpy value, and a later trace (another signature)
computes from it.  A tensor of a loop body that a call left in an object
is a ``TracingError`` naming the attribute.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt

MODES = {
    "interpreter": {},
    "unoptimized": {"optimize": False},
    "jit": {"jit_compile": True},
}


class Box:
    def __init__(self):
        self.total = 0
        self.cache = {"n": 0.0}
        self.pair = None


def traced(fn, mode):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ag.function(fn, **MODES[mode])


def no_tensor_in(value) -> bool:
    if isinstance(value, rt.Tensor):
        return False
    if isinstance(value, (list, tuple)):
        return all(no_tensor_in(v) for v in value)
    if isinstance(value, dict):
        return all(no_tensor_in(v) for v in value.values())
    return True


@pytest.mark.parametrize("mode", MODES)
def test_an_attribute_a_tensor_loop_updates_holds_the_value_after_the_call(mode):
    box = Box()

    def accumulate(n):
        for i in range(n):
            box.total += i
        return n

    f = traced(accumulate, mode)
    f(np.int32(4))
    assert not isinstance(box.total, rt.Tensor)
    assert box.total == 6
    f(np.int64(3))  # another signature: traced again, from the value the first call wrote
    assert box.total == 6 + 3
    assert f.tracing_count == 2


@pytest.mark.parametrize("mode", MODES)
def test_dict_items_and_tuples_in_objects_are_written_back(mode):
    box = Box()

    def fill(x, n):
        for i in range(n):
            box.cache["n"] = box.cache["n"] + x
        box.pair = (x * 2, "label")
        return x

    traced(fill, mode)(np.float32(1.5), np.int32(2))
    assert no_tensor_in(box.cache) and no_tensor_in(box.pair)
    assert box.cache["n"] == 3.0 and box.cache["n"].dtype == np.float32
    assert box.pair == (np.float32(3.0), "label")


class Meter:
    def __init__(self):
        self.steps = 0

    @ag.function
    def run(self, n):
        while self.steps < n:
            self.steps += 1
        return self.steps


def test_a_methods_self_attribute_is_written_back():
    meter = Meter()
    assert meter.run(np.int32(5)) == 5
    assert not isinstance(meter.steps, rt.Tensor) and meter.steps == 5


@pytest.mark.parametrize("mode", MODES)
def test_an_attribute_set_in_a_branch_holds_the_taken_branchs_value(mode):
    box = Box()

    def choose(x):
        if x > 0:
            box.total = x + 1
        else:
            box.total = x - 1
        return x

    f = traced(choose, mode)
    f(np.int32(3))
    assert box.total == 4
    f(np.int32(-3))
    assert box.total == -4


class Recorder:
    def __init__(self):
        self.last = 0.0

    def record(self, value):
        self.last = value


@pytest.mark.parametrize("mode", MODES)
def test_a_body_tensor_left_in_an_object_by_a_call_is_refused_naming_it(mode):
    recorder = Recorder()

    def loop(x, n):
        def body(i, x):
            recorder.record(x * 2)  # a Python write in a traced body: the tensor escapes it
            return i + 1, x + 1

        return rt.while_loop(lambda i, x: i < n, body, (0, x))[1]

    with pytest.raises(ag.TracingError, match=r"'recorder\.last' holds the symbolic tensor .* \(created at "
                                              r".*test_state_writeback\.py:\d+\) of the sub-graph .*Assign "
                                              r"'recorder\.last' in the body"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ag.function(loop, autograph=False, **MODES[mode])(np.float32(1.0), np.int32(3))


# -- what the traced function reaches from outside: every place is written back ----------------------------------

class Slotted:
    __slots__ = ("v",)

    def __init__(self):
        self.v = 0


class Counter:
    def __init__(self):
        self.v = 0


def _bump_held(objs, x, n):
    for _ in range(n):
        objs[0].v = objs[0].v + x
    return objs[0].v


def _bump_slotted(o, x):
    o.v = o.v + x
    return o.v


@pytest.mark.parametrize("mode", MODES)
def test_objects_in_list_arguments_and_slotted_objects_are_written_back(mode):
    p, s = Counter(), Slotted()
    f, g = traced(_bump_held, mode), traced(_bump_slotted, mode)
    assert (f([p], np.int32(2), np.int32(3)), f([p], np.int32(2), np.int32(3))) == (6, 12)
    assert (g(s, np.int32(2)), g(s, np.int32(2))) == (2, 4)
    assert p.v == 12 and s.v == 4 and not isinstance(p.v, rt.Tensor) and not isinstance(s.v, rt.Tensor)


def _counter_closure():
    c = 0

    def add(x, n):
        nonlocal c
        for _ in range(n):
            c += x
        return c

    return add, lambda: c


@pytest.mark.parametrize("mode", MODES)
def test_a_nonlocal_variable_is_written_back(mode):
    add, read = _counter_closure()
    f = traced(add, mode)
    assert (f(np.int32(1), np.int32(2)), f(np.int32(1), np.int32(2))) == (2, 4)
    assert read() == 4 and type(read()) is np.int32


STATE = __import__("types").ModuleType("user_state")  # a module of the user's, holding state
STATE.total = 0


def _add_to_module(x, n):
    for _ in range(n):
        STATE.total = STATE.total + x
    return STATE.total


@pytest.mark.parametrize("mode", MODES)
def test_a_module_attribute_is_written_back(mode):
    STATE.total = 0
    f = traced(_add_to_module, mode)
    assert (f(np.int32(2), np.int32(2)), f(np.int32(2), np.int32(2))) == (4, 8)
    assert STATE.total == 8 and not isinstance(STATE.total, rt.Tensor)


class History:
    def __init__(self):
        self.hist = None


def _accumulate(o, x):
    if o.hist is None:
        o.hist = x
    else:
        o.hist = o.hist + x
    return o.hist


def _cached(o, x):
    if not hasattr(o, "cache"):
        o.cache = x * 2
    return o.cache


@pytest.mark.parametrize("mode", MODES)
def test_a_place_the_graph_writes_is_traced_again_when_it_changed_kind(mode):
    # the first trace read o.hist as None (and o.cache as missing): the next call must not reuse it
    o, c = History(), History()
    f, g = traced(_accumulate, mode), traced(_cached, mode)
    assert (f(o, np.int32(2)), f(o, np.int32(5))) == (2, 7)
    assert (g(c, np.int32(2)), g(c, np.int32(5))) == (4, 4)


def _counted(o, x):
    if x > 0:
        o.v = o.v + 1
    return x * o.v


@pytest.mark.parametrize("mode", MODES)
def test_a_python_int_written_back_stays_a_python_int(mode):
    # np.int64 there would make the next call's x * o.v float64 instead of float32
    o = Counter()
    f = traced(_counted, mode)
    first, second = f(o, np.float32(1)), f(o, np.float32(1))
    assert (first, second) == (1.0, 2.0) and second.dtype == np.float32 and type(o.v) is int


def _refused_after_update(o, xs, n):
    o.v = o.v + xs[0]
    for i in range(n):
        o.hist.append(xs[i])  # a list held in an attribute cannot grow in a tensor loop: refused
    return o.v


def test_a_refused_trace_leaves_the_objects_as_they_were():
    o = Counter()
    o.hist = []
    with pytest.raises(ag.TracingError, match=r"the list 'o.hist' changes length"):
        ag.function(_refused_after_update)(o, np.float32([1, 2]), np.int32(2))
    assert o.v == 0 and o.hist == []
