"""A Python ``try`` around an op that fails only when the graph runs (``runtime/operators/raises.py``).

While tracing, ``y = x[i]`` inside ``try: ... except IndexError:`` records an
op that raises when the graph runs, outside the ``try``: Python would run the
handler, the graph would raise.  The trace is a ``TracingError`` naming the
``try`` statement, the op and its line, when a handler catches a kind of
error the op may raise (``core/opdef.py``: ``RUN_TIME_ERRORS``); handlers
that cannot catch it, ``try``/``finally``, failures found while tracing and
runs on Python values are left alone.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import autograph as ag
import autograph.runtime as rt
from modes import check, check_raises, modes

i32, f32 = np.int32, np.float32
X = np.arange(5, dtype=f32)


def _line(f, text):
    """``file:line`` of the first line of ``f`` containing ``text``."""
    lines, start = inspect.getsourcelines(f)
    offset = next(k for k, line in enumerate(lines) if text in line)
    return f"{inspect.getsourcefile(f)}:{start + offset}"


def refused(f, *args, op, try_text="try:", op_text):
    """Every mode refuses ``f``: a TracingError naming the try statement, the op and both lines."""
    for name, g in modes(f):
        with pytest.raises(ag.TracingError) as info:
            g(*args)
        message = str(info.value)
        assert "`try` statement at " + _line(f, try_text) in message, (name, message)
        assert f"{op} op at {_line(f, op_text)}" in message, (name, message)
        assert "Check the condition explicitly" in message, (name, message)


# -- the refusal ------------------------------------------------------------------


def caught_index_error(x, i):
    try:
        y = x[i]
    except IndexError:
        y = x[0] * 0 - 1
    return y


def test_an_index_checked_when_the_graph_runs_under_a_handler_of_index_error():
    refused(caught_index_error, X, i32(7), op="CheckIndex", op_text="y = x[i]")
    refused(caught_index_error, X, i32(2), op="CheckIndex", op_text="y = x[i]")  # whatever the value
    with pytest.raises(ag.TracingError, match=r"compare the index with the length"):
        ag.function(caught_index_error)(X, i32(7))


def caught_by_base_class(x, i):
    try:
        y = x[i]
    except LookupError:
        y = x[0]
    return y


def caught_by_exception(x, i):
    try:
        y = x[i]
    except (KeyError, Exception):
        y = x[0]
    return y


def caught_by_bare_except(x, i):
    try:
        y = x[i]
    except:  # noqa: E722
        y = x[0]
    return y


def caught_by_second_handler(x, i):
    try:
        y = x[i]
    except KeyError:
        y = x[1]
    except IndexError:
        y = x[0]
    return y


@pytest.mark.parametrize("f", [caught_by_base_class, caught_by_exception, caught_by_bare_except,
                               caught_by_second_handler])
def test_every_handler_that_would_catch_it(f):
    refused(f, X, i32(7), op="CheckIndex", op_text="y = x[i]")


def gathered(x, idx):
    try:
        y = rt.gather(x, idx)
    except IndexError:
        y = x
    return y


def test_a_gather_of_indices_known_when_the_graph_runs():
    refused(gathered, X, np.array([0, 9], dtype=i32), op="GatherV2", op_text="rt.gather")


def asserted(x):
    try:
        assert x > 0, "x must be positive"
        y = x
    except AssertionError:
        y = -x
    return y


def test_an_assert_on_a_tensor():
    refused(asserted, f32(-1.0), op="Assert", op_text="assert x > 0")


def as_int(x):
    try:
        n = int(x)
    except (ValueError, OverflowError):
        n = 0
    return n


def test_an_int_of_a_float_tensor():
    refused(as_int, f32(np.inf), op="PyInt", op_text="n = int(x)")


def integer_power(x, n):
    try:
        y = x ** n
    except ValueError:
        y = x
    return y


def test_an_integer_power_with_an_exponent_known_when_the_graph_runs():
    refused(integer_power, i32(2), i32(-1), op="Pow", op_text="y = x ** n")


def _fails(v):
    raise ValueError("no")


def python_function(x):
    try:
        y = rt.py_function(_fails, [x], "float32")
    except ValueError:
        y = x
    return y


def test_a_py_function_whose_exceptions_the_handler_catches():
    refused(python_function, f32(1.0), op="PyFunc", op_text="rt.py_function")


def added(x, y):
    try:
        z = x + y
    except ValueError:
        z = x
    return z


def test_a_broadcast_of_shapes_known_only_when_the_graph_runs():
    spec = rt.TensorSpec((None,), "float32")
    for name, g in modes(added, input_signature=[spec, spec]):
        with pytest.raises(ag.TracingError, match=r"`try` statement at .*Add op at"):
            g(np.ones(2, f32), np.ones(3, f32))


def in_a_tensor_branch(x, i):
    try:
        if i > 0:
            y = x[i]
        else:
            y = x[0]
    except IndexError:
        y = x[1]
    return y


def in_a_tensor_loop(x, n):
    total = x[0]
    try:
        for k in range(n):
            total = total + x[k]
    except IndexError:
        total = x[0] * 0
    return total


def try_in_a_loop_body(x, n):
    total = x[0]
    for k in range(n):
        try:
            total = total + x[k]
        except IndexError:
            pass
    return total


def test_ops_of_a_tensor_if_or_loop_traced_inside_the_try():
    refused(in_a_tensor_branch, X, i32(9), op="CheckIndex", op_text="y = x[i]")
    refused(in_a_tensor_loop, X, i32(9), op="CheckIndex", op_text="total + x[k]")
    refused(try_in_a_loop_body, X, i32(9), op="CheckIndex", op_text="total + x[k]")


# -- no refusal ---------------------------------------------------------------------


def other_handler(x, i):
    try:
        y = x[i]
    except (KeyError, ZeroDivisionError):
        y = x[0] * 0 - 1
    return y


def test_a_handler_that_cannot_catch_the_ops_error_is_left_alone():
    check(other_handler, X, i32(2))
    for name, g in modes(other_handler):
        with pytest.raises(IndexError):
            g(X, i32(7))  # neither Python's handler nor the graph catches it


def only_finally(x, i):
    done = 0
    try:
        y = x[i]
    finally:
        done = 1
    return y, done


def test_a_try_with_only_finally_is_left_alone():
    check(only_finally, X, i32(2))
    for name, g in modes(only_finally):
        with pytest.raises(IndexError):
            g(X, i32(7))


def test_an_index_checked_while_tracing_is_caught_as_in_python():
    check(caught_index_error, X, 7)  # a Python int on a static axis: IndexError while tracing
    check(caught_index_error, X, 2)


def cannot_fail(x, y):
    try:
        z = x * 2.0 + y[0] - rt.reduce_sum(y)
    except Exception:
        z = x
    return z


def test_ops_that_cannot_fail_for_any_value_are_left_alone():
    check(cannot_fail, f32(1.5), np.ones(3, f32))


def float_division(x, y):
    try:
        z = x / y
    except ZeroDivisionError:
        z = x
    return z


def test_a_float_division_by_zero_only_warns_as_numpys_does():
    with np.errstate(divide="ignore"):
        check(float_division, f32(1.0), f32(0.0))


def staged_raise(x):
    try:
        if x > 0:
            raise KeyError("positive")
        y = x
    except ValueError:
        y = -x
    return y


def test_a_staged_raise_the_handler_does_not_catch_is_left_alone():
    check(staged_raise, f32(-1.0))
    for name, g in modes(staged_raise):
        with pytest.raises(KeyError):
            g(f32(1.0))


def test_python_values_run_the_try_as_python_does():
    check(caught_index_error, [1.0, 2.0], 7)
    check(caught_index_error, [1.0, 2.0], 1)
    converted = ag.convert(caught_index_error)
    assert converted(X, i32(7)) == -1.0  # numpy values, no trace: Python's try
    assert converted(X, i32(3)) == 3.0


@ag.function
def _traced_index(x, i):
    return x[i]


def calls_a_traced_function(x, i):
    try:
        y = _traced_index(x, i)
    except IndexError:
        y = -1.0
    return y


def test_a_try_around_a_call_of_a_traced_function_catches_its_run_time_error():
    converted = ag.convert(calls_a_traced_function)
    assert converted(X, i32(7)) == -1.0  # the graph runs inside the try: its handler catches
    assert converted(X, i32(3)) == 3.0


def test_the_reproducer_of_the_known_gap():
    check_raises(caught_index_error, X, i32(7), match=r"`try` statement")
