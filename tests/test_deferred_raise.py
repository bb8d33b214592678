"""An exception the traced code raises after ops that may fail or act is raised when the graph runs, after them."""

from __future__ import annotations

import traceback

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt

MODES = [{}, {"optimize": False}, {"jit_compile": True}]


def read_then_raise(v, k):
    x = v[k % 4]
    if k > -100:  # a Python condition on a Python value: decided while tracing
        raise ValueError("unlucky")
    return x


@pytest.mark.parametrize("options", MODES)
def test_an_index_error_before_a_python_raise_comes_first_as_in_python(options):
    traced = ag.function(read_then_raise, **options)
    short, long = np.array([1, 2], np.int32), np.array([1, 2, 3, 4], np.int32)
    with pytest.raises(IndexError):
        read_then_raise(short, 3)
    with pytest.raises(IndexError, match="out of bounds"):
        traced(short, 3)
    with pytest.raises(ValueError, match="unlucky"):
        traced(long, 3)


def write_then_raise_in_a_branch(v, a):
    if a > 0:  # a tensor condition: the raise is staged in the branch
        v[6 % max(len(v), 1)] = a  # out of bounds for an empty v
        raise ValueError("unlucky")
    return v


@pytest.mark.parametrize("options", MODES)
def test_a_staged_raise_comes_after_the_branchs_earlier_errors(options):
    """The item assignment's result is dead once the branch raises, but its IndexError comes first,
    as in Python (the raise waited only for earlier effects)."""
    traced = ag.function(write_then_raise_in_a_branch, **options)
    with pytest.raises(IndexError):
        write_then_raise_in_a_branch(np.zeros(0, np.float32), np.float32(2.0))
    with pytest.raises(IndexError, match="out of bounds"):
        traced(np.zeros(0, np.float32), np.float32(2.0))
    with pytest.raises(ValueError, match="unlucky"):
        traced(np.zeros(3, np.float32), np.float32(2.0))
    np.testing.assert_array_equal(traced(np.zeros(0, np.float32), np.float32(-1.0)), np.zeros(0, np.float32))



def return_after_a_raise_in_a_loop(n, x):
    for _ in range(n):
        if x > 4:
            break
        raise ValueError("unlucky")
        return 1  # noqa - never runs: the raise comes first
    return 2


@pytest.mark.parametrize("options", MODES)
def test_a_return_after_a_staged_raise_leaves_the_loop_nothing_to_carry(options):
    """The only return of the loop's body follows its raise, so the return value is still unset after an
    iteration: not a value of another kind (fuzz seed 1124005 refused it, naming 'the return value')."""
    traced = ag.function(return_after_a_raise_in_a_loop, **options)
    for n, x in ((3, 5.0), (0, 1.0)):
        assert traced(np.int32(n), np.float32(x)) == return_after_a_raise_in_a_loop(np.int32(n), np.float32(x))
    with pytest.raises(ValueError, match="unlucky"):
        return_after_a_raise_in_a_loop(np.int32(3), np.float32(1.0))
    with pytest.raises(ValueError, match="unlucky"):
        traced(np.int32(3), np.float32(1.0))

def print_then_raise(x):
    rt.print("before", x)
    if x.shape == ():
        raise KeyError("after the print")
    return x


@pytest.mark.parametrize("options", MODES)
def test_effects_before_the_raise_happen_at_every_call(options, capsys):
    traced = ag.function(print_then_raise, **options)
    for value in (1, 2):
        with pytest.raises(KeyError, match="after the print"):
            traced(np.int32(value))
    out = capsys.readouterr().out
    assert "before 1" in out and "before 2" in out


def test_the_error_points_at_the_users_raise():
    traced = ag.function(print_then_raise)
    with pytest.raises(KeyError) as info:
        traced(np.int32(1))
    lines = [frame.line for frame in traceback.extract_tb(info.value.__traceback__)]
    assert 'raise KeyError("after the print")' in lines


def raise_first(x):
    if x.shape == ():
        raise KeyError("nothing before me")
    return x


def test_with_nothing_before_it_the_exception_is_raised_while_tracing():
    traced = ag.function(raise_first)
    with pytest.raises(KeyError, match="nothing before me"):
        traced.get_concrete_function(np.int32(1))


def test_refusals_are_never_deferred():
    def leaks(x):
        rt.print(x)
        for _ in rt.range(x):
            y = x
        return y  # noqa: F821

    with pytest.raises(ag.TracingError):
        ag.function(leaks).get_concrete_function(np.int32(3))
