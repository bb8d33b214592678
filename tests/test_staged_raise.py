"""A ``raise`` under a tensor condition raises when the graph runs that path, and only then.

Python values keep Python's semantics (the raise happens at once); in a
traced branch of a tensor ``if`` the raise becomes an op that raises the
user's exception type, with its arguments' values, when the branch runs.
"""

from __future__ import annotations

import numpy as np
import pytest

import autograph as ag
from modes import check, i32, modes


def checked_double(n):
    if n < 0:
        raise ValueError("n must be >= 0")
    return n * 2


def negative_with_value(n):
    if n < 0:
        raise ValueError("negative:", n)
    else:
        y = n + 1
    return y


def first_negative(xs):
    s = np.float32(0)
    for x in xs:
        if x < 0:
            raise ValueError("bad element", x)
        s += x
    return s


def nested_python_condition(n, strict):
    if n < 0:
        if strict:
            raise KeyError("negative and strict")
        n = -n
    return n


def python_value_on_the_other_path(n):
    if n < 0:
        raise ValueError("neg")
    else:
        s = "ok"
    return s


def raise_in_loop_with_return(n):
    i = 0
    while i < n:
        if i > 10:
            raise RuntimeError("too many")
        if i * i > n:
            return i
        i += 1
    return -1


def raise_from(n):
    if n > 3:
        raise OverflowError("too big") from None
    return n


class CodeError(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


def custom_exception(n):
    if n < 0:
        raise CodeError(n)
    return n


def _raises_in_every_mode(f, args, exc, args_expected):
    with pytest.raises(exc) as python:
        f(*args)
    assert python.value.args == args_expected
    for mode, g in modes(f):
        with pytest.raises(exc) as staged:
            g(*args)
        assert type(staged.value) is exc, mode
        assert staged.value.args == args_expected, mode
        assert [type(a) for a in staged.value.args] == [type(a) for a in args_expected], mode


@pytest.mark.parametrize("n", [0, 3])
def test_the_path_without_the_raise_runs(n):
    check(checked_double, i32(n))
    check(negative_with_value, i32(n))
    check(raise_from, i32(n))


def test_the_path_with_the_raise_raises_the_users_exception_when_the_graph_runs():
    _raises_in_every_mode(checked_double, (i32(-1),), ValueError, ("n must be >= 0",))


def test_tensor_arguments_of_the_exception_are_their_values():
    _raises_in_every_mode(negative_with_value, (i32(-2),), ValueError, ("negative:", np.int32(-2)))
    _raises_in_every_mode(first_negative, (np.array([1, -2.5], np.float32),), ValueError,
                          ("bad element", np.float32(-2.5)))


def test_one_trace_serves_both_paths():
    for mode, g in modes(checked_double):
        assert g(i32(4)) == 8
        with pytest.raises(ValueError, match="n must be >= 0"):
            g(i32(-4))
        assert g(i32(5)) == 10
        assert g.tracing_count == 1, mode


def test_a_raise_in_a_tensor_loop():
    check(first_negative, np.array([1, 2], np.float32))
    check(raise_in_loop_with_return, i32(30))
    _raises_in_every_mode(raise_in_loop_with_return, (i32(300),), RuntimeError, ("too many",))


def test_a_python_condition_inside_a_tensor_branch():
    check(nested_python_condition, i32(-1), False)
    _raises_in_every_mode(nested_python_condition, (i32(-1), True), KeyError, ("negative and strict",))


def test_the_other_paths_python_value_is_kept():
    check(python_value_on_the_other_path, i32(2))


def test_raise_from_keeps_the_cause():
    for mode, g in modes(raise_from):
        with pytest.raises(OverflowError, match="too big") as info:
            g(i32(5))
        assert info.value.__suppress_context__ and info.value.__cause__ is None, mode


def test_a_user_exception_is_built_from_the_values():
    for mode, g in modes(custom_exception):
        with pytest.raises(CodeError) as info:
            g(i32(-4))
        assert info.value.code == -4 and type(info.value.code) is np.int32, mode


def formatted_message(n):
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    return n


def test_a_message_formatting_a_tensor_is_refused():
    assert formatted_message(3) == 3
    for mode, g in modes(formatted_message):
        with pytest.warns(ag.TracingWarning), pytest.raises(
            ag.TracingError, match=r"the message of the `raise ValueError\(...\)` at .*test_staged_raise.py:\d+ "
                                   r"formats a symbolic tensor while tracing .*Pass the tensor itself"):
            g(i32(3))


def both_raise(n):
    if n < 0:
        raise ValueError("neg")
    else:
        raise KeyError("pos")


def test_both_branches_raising_raises_the_taken_branchs_exception():
    _raises_in_every_mode(both_raise, (i32(-1),), ValueError, ("neg",))
    _raises_in_every_mode(both_raise, (i32(1),), KeyError, ("pos",))


def guarded_then_both_raise(n, x):
    if n > 5:
        raise OverflowError("first")
    if x < 0:
        raise ValueError("neg")
    else:
        raise KeyError("pos")
    return n  # never reached


def in_a_loop_both_raise(n):
    i = 0
    while i < n:
        i += 1
        if i > 2:
            raise ValueError("late", i)
        else:
            raise KeyError("early", i)
    return i


def test_an_if_that_always_raises_comes_after_earlier_raises_and_may_be_unreached():
    _raises_in_every_mode(guarded_then_both_raise, (i32(6), i32(-1)), OverflowError, ("first",))
    _raises_in_every_mode(guarded_then_both_raise, (i32(1), i32(-1)), ValueError, ("neg",))
    check(in_a_loop_both_raise, i32(0))
    _raises_in_every_mode(in_a_loop_both_raise, (i32(4),), KeyError, ("early", np.int32(1)))


def caught(n):
    try:
        if n < 0:
            raise ValueError("neg")
    except ValueError:
        return 0
    return n


def test_a_raise_inside_try_is_python_for_python_values_and_refused_under_a_tensor():
    code = ag.to_code(caught)
    assert "with ag__.python_try(lambda: (ValueError,), 'try'):" in code and "ag__.caught()" in code
    assert ag.convert(caught, always_converted=True)(-1) == 0
    for _, g in modes(caught):  # the handler would run only while tracing (tests/test_staged_raise_exceptions.py)
        with pytest.raises(ag.TracingError, match=r"under a tensor condition inside a try whose handler catches it"):
            g(i32(1))


def test_python_values_raise_at_once():
    converted = ag.convert(checked_double, always_converted=True)
    with pytest.raises(ValueError, match="n must be >= 0"):
        converted(-1)
    assert converted(2) == 4


def fail(message, value):
    raise ValueError(message, value)


def checked_by_a_helper(n):
    if n < 0:
        fail("negative", n)
    return n + 1


def test_a_helper_raising_in_a_tensor_branch_is_staged():
    check(checked_by_a_helper, i32(2))
    _raises_in_every_mode(checked_by_a_helper, (i32(-3),), ValueError, ("negative", np.int32(-3)))


def raise_in_a_loop_inside_a_branch(n, x, strict):
    if n > 0:
        for v in x:
            if strict:
                raise ValueError("strict")
            n = n + v
    return n


def test_a_raise_in_a_tensor_loop_body_raises_only_if_an_iteration_runs():
    check(raise_in_a_loop_inside_a_branch, i32(1), np.arange(3, dtype=np.int32), False)
    check(raise_in_a_loop_inside_a_branch, i32(1), np.zeros(0, dtype=np.int32), True)
    check(raise_in_a_loop_inside_a_branch, i32(0), np.arange(3, dtype=np.int32), True)
    _raises_in_every_mode(raise_in_a_loop_inside_a_branch, (i32(1), np.arange(3, dtype=np.int32), True),
                          ValueError, ("strict",))


def raise_in_loop_body(n, v):
    s = 0
    for x in v:
        s += x
        if n > 1:  # a Python number: the body always raises once it runs
            raise KeyError("body", n)
    return s


def test_a_python_condition_raise_in_a_tensor_loop_body():
    check(raise_in_loop_body, 3, np.zeros(0, dtype=np.int32))
    check(raise_in_loop_body, 0, np.arange(3, dtype=np.int32))
    _raises_in_every_mode(raise_in_loop_body, (3, np.arange(3, dtype=np.int32)), KeyError, ("body", 3))


def _exits(x):
    if x > 0:
        raise SystemExit(x * 2)
    return x


def _file_missing(x):
    if x > 0:
        raise OSError(2, "No such file", "a.txt")
    return x


@pytest.mark.parametrize("f, fields", [(_exits, {"code": 4}), (_file_missing, {"errno": 2, "filename": "a.txt"})])
def test_a_staged_raise_keeps_what_the_builtin_exception_sets(f, fields):
    # SystemExit.code, OSError.filename: set by the builtin __init__, not kept in the instance dict
    for g in (f, ag.function(f), ag.function(f, jit_compile=True)):
        with pytest.raises((SystemExit, OSError)) as info:
            g(np.int32(2))
        assert {k: getattr(info.value, k) for k in fields} == fields


def _store_then_raise(a, n, v):
    if 0 >= n - n:  # a tensor if the optimizer finds always true, and inlines
        v[0] += a
    raise ValueError("unlucky")


def test_an_error_before_a_raise_in_an_inlined_branch_comes_first():
    # fuzz seed 9211981: inlining the If dropped the raise's wait for the branch's failing store
    from autograph import runtime as rt

    sig = [rt.TensorSpec((), "float32"), rt.TensorSpec((), "int32"), rt.TensorSpec((None,), "float32")]
    for options in ({}, {"optimize": False}, {"jit_compile": True}):
        with pytest.raises(IndexError, match=r"index 0 is out of bounds"):
            ag.function(_store_then_raise, input_signature=sig, **options)(np.float32(1), np.int32(0), np.zeros(0, np.float32))
        with pytest.raises(ValueError, match="unlucky"):
            ag.function(_store_then_raise, input_signature=sig, **options)(np.float32(1), np.int32(0), np.zeros(2, np.float32))


def _raise_in_an_if_in_an_inlined_branch(a, b, n):
    if (a - a) <= 5:  # always true: the optimizer inlines the branch
        if a <= 1:
            raise ValueError("unlucky")
    return a


def _print_in_an_if_in_an_inlined_branch(a):
    if (a - a) <= 5:
        if a <= 1:
            print("small", a)
    return a


def test_an_effect_in_an_if_inside_an_inlined_branch_still_runs(capsys):
    # fuzz seed 778264: the graph's stateful chain ended at an op of the inlined branch that merely
    # may raise (a Const), not at the If holding the raise, which was then never run
    for options in ({}, {"optimize": False}, {"jit_compile": True}):
        g = ag.function(_raise_in_an_if_in_an_inlined_branch, **options)
        with pytest.raises(ValueError, match="unlucky"):
            g(np.int32(0), np.int32(5), np.int32(0))
        assert g(np.int32(3), np.int32(5), np.int32(0)) == 3
        ag.function(_print_in_an_if_in_an_inlined_branch, **options)(np.int32(1))
        assert capsys.readouterr().out == "small 1\n"
