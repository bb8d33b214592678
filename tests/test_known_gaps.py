"""Classes of programs where a graph still differs from Python, found by hand: strict xfails.

Each test states the right behaviour (Python's value, Python's error, or an
``ag.TracingError`` naming the construct and the line) and fails today, for
the reason its ``xfail`` says; whoever fixes a class removes its mark (a
strict xfail that passes fails the suite).  None of these programs is one the
traced fuzzer generates (``tests/fuzz_programs.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

import autograph.runtime as rt
from modes import check, check_value_or_error, modes

i32, f32 = np.int32, np.float32


def deleted_then_assigned_in_branches(x):
    y = x
    del y
    if x > 0:
        y = x + 1
    else:
        y = x - 1
    return y


def test_a_deleted_variable_assigned_in_both_branches():
    check(deleted_then_assigned_in_branches, i32(1))


def caught_index_error(x, i):
    try:
        y = x[i]
    except IndexError:
        y = x[0] * 0 - 1
    return y


def test_a_handler_around_an_op_that_fails_when_the_graph_runs():
    check_value_or_error(caught_index_error, np.arange(5, dtype=f32), i32(7), name_regex=r"try")


def shape_after_growing(x, n):
    y = x
    hits = 0
    for _ in range(n):
        y = rt.concat([y, x], 0)
        if y.shape[0] == 4:
            hits += 1
    return hits


@pytest.mark.xfail(strict=True, reason="a dimension relaxed to unknown in a loop reads as None: `None == 4` is "
                                       "a silent False where Python compares the length")
def test_a_static_shape_read_after_a_loop_relaxed_it():
    check_value_or_error(shape_after_growing, np.arange(2.0), i32(3), name_regex=r"shape")


class Calls:
    def __init__(self):
        self.calls = 0


def count_calls(obj, n):
    for _ in range(n):
        obj.calls += 1
    return obj.calls


def test_an_attribute_the_function_updates_is_read_again_at_the_next_call():
    for _, g in modes(count_calls):
        obj = Calls()
        assert g(obj, i32(3)) == 3
        assert g(obj, i32(2)) == 5


def big_counter(k, x):
    for _ in range(x):
        k = k + 1
    return k


def test_a_counter_starting_beyond_int32():
    check(big_counter, 2**62, i32(3))


def float_index(x):
    return x[1.0]


def test_a_python_float_index_is_numpys_index_error():
    for _, g in modes(float_index):
        with pytest.raises(IndexError, match=r"test_known_gaps.py:\d+"):
            g(np.arange(3, dtype=f32))


def test_the_marked_programs_are_pythons_where_python_runs_them():
    """The plain functions above run (so each xfail is about the graph, not the test)."""
    assert deleted_then_assigned_in_branches(i32(1)) == 2
    assert caught_index_error(np.arange(5, dtype=f32), i32(7)) == -1
    assert shape_after_growing(np.arange(2.0), i32(3)) == 1
    obj = Calls()
    assert count_calls(obj, 3) == 3 and count_calls(obj, 2) == 5
    assert big_counter(2**62, 3) == 2**62 + 3
    with pytest.raises(IndexError):
        float_index(np.arange(3, dtype=f32))
