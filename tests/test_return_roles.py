"""The return lowering's value and flag reach the runtime as roles in ``opts``, never by name.

A nested function's return value is ``retval_1`` (the namer avoids names in
use), and a user's variable may be called ``retval_``: the runtime must
treat the first as the return value and the second as an ordinary variable.
"""

from __future__ import annotations

import numpy as np
import pytest

import autograph as ag
from modes import check, i32, modes


def nested_returns(n):
    def helper(m):
        out = []
        for i in range(m):
            if i > 2:
                return len(out), out
            out.append(i)
        return len(out), out

    for i in range(n):
        if i > 5:
            k, out = helper(n)
            return k, out[0]
    k, out = helper(n)
    return k * 10, out[-1]


@pytest.mark.parametrize("n", [2, 4, 8])
def test_a_nested_function_returning_a_grown_list_from_a_tensor_loop(n):
    check(nested_returns, i32(n))


def returns_list_from_helper(n):
    def helper(m):
        out = []
        for i in range(m):
            if i > 2:
                return len(out), out
            out.append(i)
        return len(out), out

    for i in range(n):
        if i > 5:
            return helper(n)
    return helper(n)


def test_the_grown_list_of_a_nested_return_is_staged():
    expected = returns_list_from_helper(4)
    for mode, g in modes(returns_list_from_helper):
        count, out = g(i32(4))
        assert count == expected[0], mode
        np.testing.assert_array_equal(out, np.array(expected[1], dtype=np.int32))


def user_variable_called_retval(n):
    retval_ = 0
    do_return = 0
    i = 0
    while i < n:
        retval_ = retval_ + i
        do_return = do_return + 1
        i += 1
    return retval_, do_return


def test_a_user_variable_called_retval_is_an_ordinary_variable():
    check(user_variable_called_retval, i32(4))


def user_retval_changes_kind(n):
    retval_ = 0
    i = 0
    while i < n:
        retval_ = [1]
        i += 1
    return retval_


def test_messages_name_a_user_variable_called_retval_as_written():
    for mode, g in modes(user_retval_changes_kind):
        with pytest.raises(ag.TracingError, match=r"'retval_' is the Python int 0 before the while loop at "
                                                  r".*test_return_roles.py:\d+"):
            g(i32(3))


def returns_in_tensor_if(x):
    if x > 0:
        return [x]
    return 1


def test_messages_call_the_return_value_by_its_role():
    for mode, g in modes(returns_in_tensor_if):
        with pytest.raises(ag.TracingError, match=r"'the return value' has a different structure in the two "
                                                  r"branches of the if at .*test_return_roles.py:\d+"):
            g(i32(3))


def test_the_converter_names_the_roles_in_the_operator_call():
    code = ag.to_code(returns_list_from_helper)
    assert "{'iterate_names': 'i', 'return_flag': 'do_return_1', 'return_value': 'retval_1'}" in code
    assert "{'iterate_names': 'i', 'return_flag': 'do_return', 'return_value': 'retval_'}" in code
    assert "'return_value'" not in ag.to_code(user_variable_called_retval)
    # an if's roles are a tuple of pairs (one constant): the Python path of an if in a loop builds no dict
    assert ", 1, (('return_value', 'retval_'),))" in ag.to_code(returns_in_tensor_if)


def endless_loop_returns(n):
    i = 0
    while True:
        i += 1
        if i > n:
            return i * 2


def endless_loop_with_break(n):
    i = 0
    while True:
        i += 1
        if i > 10:
            break
        if i > n:
            return i
    return -1


@pytest.mark.parametrize("n", [0, 3])
def test_while_true_whose_only_exits_are_returns(n):
    check(endless_loop_returns, i32(n))


@pytest.mark.parametrize("n", [3, 20])
def test_while_true_with_a_break_may_fall_through(n):
    check(endless_loop_with_break, i32(n))


def test_while_true_without_break_always_returns():
    code = ag.to_code(endless_loop_returns)
    assert "retval_ = ag__.UndefinedReturnValue()" in code
    assert "retval_ = None" not in code


def may_fall_off(n):
    for i in range(n):
        if i > 3:
            return i


def test_a_path_that_ends_without_a_return_is_named_in_the_message():
    assert may_fall_off(6) == 4 and may_fall_off(2) is None
    for mode, g in modes(may_fall_off):
        with pytest.raises(ag.TracingError, match=r"'the return value \(None on a path that ends without a "
                                                  r"return\)' is a weakly typed int32\[\] tensor in the true branch "
                                                  r"but the Python NoneType None in the false branch of the if at "
                                                  r".*test_return_roles.py:\d+"):
            g(i32(6))


def returns_before_binding(x):
    if x > 0:
        if x > 1:
            return x * 10
        y = x
    else:
        y = -x
    return y + 1


def returns_in_a_loop_before_binding(x, n):
    total = x
    for i in range(n):
        if total > 100:
            return total
        step = total * 2
        total = step
    return total


@pytest.mark.parametrize("x", [2.0, 0.5, -3.0])
def test_a_variable_unbound_on_a_path_that_returned_is_not_refused(x):
    # y is bound on every path that reaches its use; on the path that returned nothing reads it
    check(returns_before_binding, np.float32(x))


@pytest.mark.parametrize("n", [0, 3, 12])
def test_a_variable_unbound_where_a_loop_returned(n):
    check(returns_in_a_loop_before_binding, np.float32(1.0), i32(n))
