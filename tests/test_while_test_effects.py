"""A tensor ``while`` whose test has effects: they happen as often as in Python, or are refused.

``while_stmt`` evaluates the test once to see whether the loop is staged;
the ``While``'s condition then evaluates it again before the first
iteration.  The first evaluation's ops used to stay in the graph, so a test
with effects had them once more than in Python: ``while v.assign_add(1) < n``
counted one iteration short, a test calling ``rt.print`` printed its first
line twice.  That evaluation is now forgotten (``tracing.values.
discard_since``).  A test that changes Python state (an attribute bumped by
a method it calls) cannot be carried by a loop's condition: a TracingError
naming it, where the change used to happen once, while tracing; so is a
loop variable the test rebinds (through a function with ``nonlocal``), which
the loop's condition cannot carry to the body.  (A walrus in the test is
rotated by the converter: the test binds nothing.)
"""

from __future__ import annotations

import numpy as np
import pytest

import autograph as ag
import autograph.runtime as rt
from modes import MODES

i32 = np.int32
counter = rt.Variable(np.int32(0))


def counted_by_the_test(n):
    i = 0
    while counter.assign_add(1) < n:
        i += 1
    return i


def counted_with_break(n):
    i = 0
    while counter.assign_add(1) < n:
        if i >= 2:
            break
        i += 1
    return i


def bound_by_the_test(n):
    i = 0
    k = -1
    while (k := i * 2) < n:
        i += 1
    return i, k


def check_and_say(i, n):
    rt.print("test", i)
    return i < n


def printed_by_the_test(n):
    i = 0
    while check_and_say(i, n):
        i += 1
    return i


def becomes_staged_after_python_iterations(t):
    x = 0
    while check_and_say(x, 10):  # x is a Python int in the first test, a tensor from the second
        x = x + t
    return x


class Tally:
    def __init__(self):
        self.calls = 0

    def below(self, i, n):
        self.calls += 1
        return i < n


tally = Tally()


def below_by_tally(n):
    i = 0
    while tally.below(i, n):
        i += 1
    return i


def rebound_by_the_test(n):
    i = 0
    k = 0

    def draw():
        nonlocal k
        k = i * 3
        return k < n

    while draw():
        i += 1
        k = k + 0
    return i, k


def rebound_with_effects(n):
    i = 0
    k = 0

    def draw():
        nonlocal k
        k = counter.assign_add(1)
        return k < n

    while draw():
        i += 1
        k = k + 0
    return i, k


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [counted_by_the_test, counted_with_break])
@pytest.mark.parametrize("n", [0, 1, 4])
def test_a_variable_updated_by_the_test_is_updated_as_often_as_in_python(fn, mode, n):
    counter.assign(np.int32(0))
    expected = fn(i32(n)), int(counter.numpy())
    counter.assign(np.int32(0))
    got = ag.function(fn, **MODES[mode])(i32(n))
    assert (int(got), int(counter.numpy())) == expected


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n", [0, 1, 5])
def test_a_variable_bound_by_the_test_keeps_its_first_value(mode, n):
    got = ag.function(bound_by_the_test, **MODES[mode])(i32(n))
    assert tuple(int(v) for v in got) == bound_by_the_test(n)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn, arg", [(printed_by_the_test, i32(2)), (printed_by_the_test, i32(0)),
                                     (becomes_staged_after_python_iterations, i32(4))])
def test_a_test_that_prints_prints_as_often_as_in_python(fn, arg, mode, capsys):
    fn(arg)
    expected = capsys.readouterr().out
    ag.function(fn, **MODES[mode])(arg)
    assert capsys.readouterr().out == expected


@pytest.mark.parametrize("mode", MODES)
def test_a_test_changing_python_state_is_refused_naming_it(mode):
    with pytest.raises(ag.TracingError, match=r"'tally.calls' changed while the condition of the while loop at "
                                              r".*test_while_test_effects.py:\d+ was traced"):
        ag.function(below_by_tally, **MODES[mode])(i32(3))


@pytest.mark.parametrize("mode", MODES)
def test_a_loop_variable_the_test_rebinds_is_refused_naming_it(mode):
    with pytest.raises(ag.TracingError, match=r"the test of the while loop at .*test_while_test_effects.py:\d+ "
                                              r"assigns 'k' \(through a function it calls\)"):
        ag.function(rebound_by_the_test, **MODES[mode])(i32(5))


@pytest.mark.parametrize("mode", MODES)
def test_a_loop_variable_the_test_rebinds_to_an_effect_is_refused_before_the_effect_repeats(mode):
    counter.assign(np.int32(0))
    with pytest.raises(ag.TracingError, match=r"the test of the while loop at .*test_while_test_effects.py:\d+ "
                                              r"assigns 'k' \(through a function it calls\)"):
        ag.function(rebound_with_effects, **MODES[mode])(i32(5))


def anded_test(x, n):
    i = 0
    while i < n and rt.reduce_sum(rt.sin(x)) > 0.5:  # `and` of tensors: an If, its branches in the library
        x = x * 0.9
        i += 1
    return x


def test_the_forgotten_first_test_leaves_no_function_in_the_library():
    graph = ag.function(anded_test).get_concrete_function(np.ones(3, np.float32), i32(5)).graph
    called = set()

    def walk(g):
        for op in g.operations:
            for attr in ("then_branch", "else_branch", "cond", "body"):
                if attr in op.attrs:
                    called.add(op.attrs[attr])
                    walk(graph.library[op.attrs[attr]])

    walk(graph)
    assert set(graph.library) == called
    x = np.ones(3, np.float32)
    np.testing.assert_allclose(ag.function(anded_test)(x, i32(5)), anded_test(x, 5), rtol=1e-6)
