"""A tensor if, conditional expression or and/or merging a numpy value with a Python number of
another kind: Python keeps each path's type, so the merge is refused rather than widened.

A Python number beside a strong value of its kind or a wider one takes the strong dtype (NEP 50:
``0`` beside a float32 is float32); a Python float beside an int or bool tensor, or a Python int
beside a bool tensor, would make that tensor's path another dtype (``np.int32(3)`` coming back
as ``np.float64(3.0)``, an int64 beyond 2**53 rounded), so it is an ``ag.TracingError`` naming
the variable, in every mode.
"""

from __future__ import annotations

import numpy as np
import pytest

from modes import check, check_raises


def one_sided_if(n):
    r = n
    if n <= 0:
        r = 0.5
    return r


def ternary(n):
    return n if n > 0 else 0.5


def or_default(n):
    return n or 0.5


def early_return(n):
    if n > 0:
        return n
    return 0.0


def bool_or_int(n):
    ok = n > 0
    if n < -5:
        ok = 0
    return ok


@pytest.mark.parametrize("f, arg, name", [
    (one_sided_if, np.int32(3), "r"),
    (one_sided_if, np.int64(2 ** 53 + 1), "r"),
    (ternary, np.int32(-3), "value"),
    (or_default, np.int16(0), "result"),
    (early_return, np.uint8(3), "the return value"),
    (bool_or_int, np.int32(3), "ok"),
])
def test_a_number_that_would_change_the_tensors_dtype_is_refused(f, arg, name):
    f(arg)  # Python: each path keeps its own type
    check_raises(f, arg, match=rf"'{name}' is \w+ in the (true|false) branch but the Python (float|int) \S+ in the "
                               r"other branch of .*test_branch_number_kinds.py:\d+; one value for both would make")


def float_tensor_with_python_numbers(x):
    r = x
    if x < 0:
        r = 0
    elif x > 10:
        r = 2.5
    return r


def int_tensor_with_python_int(n):
    return n if n > 0 else -1


@pytest.mark.parametrize("arg", [np.float32(3.0), np.float32(20.0)])
def test_a_number_the_tensors_dtype_holds_takes_it(arg):
    check(float_tensor_with_python_numbers, arg)


@pytest.mark.parametrize("arg", [np.int32(-4), np.int32(4)])
def test_an_int_beside_an_int_tensor_takes_its_dtype(arg):
    check(int_tensor_with_python_int, arg)


def flag_is_true(x, n):
    done = False
    for i in range(n):
        if x > i:
            done = True
    if done is True:
        return 1
    return 0


def flag_is_not_false(x):
    ok = False
    if x > 0:
        ok = True
    return 2 if ok is not False else 3


def int_is_true(x):
    k = 0
    if x > 0:
        k = 1
    return k is True


def numpy_bool_is_true(x):
    return (x > 0) is True


@pytest.mark.parametrize("f, args", [
    (flag_is_true, (np.float32(5.0), np.int32(3))), (flag_is_true, (np.float32(-5.0), np.int32(3))),
    (flag_is_not_false, (np.float32(1.0),)), (flag_is_not_false, (np.float32(-1.0),)),
    (int_is_true, (np.float32(1.0),)), (numpy_bool_is_true, (np.float32(1.0),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_is_true_of_a_python_bool_made_by_a_tensor_statement_is_its_value(f, args):
    check(f, *args)


def bool_or_int_by_path(n):
    ok = False
    if n > 0:
        ok = 1
    return "yes" if ok is False else "no"


def test_a_python_bool_on_one_path_and_an_int_on_the_other_is_refused():
    check_raises(bool_or_int_by_path, np.int32(3), match=r"'ok' is a Python bool in the false branch but the Python "
                                                         r"int 1 in the other branch of the if at")


def big_float_on_one_path(x):
    r = x
    if x < 0:
        r = 1e10
    return r


def max_with_a_big_float(x):
    return max(x, 1e10)


@pytest.mark.parametrize("f, name", [(big_float_on_one_path, "r"), (max_with_a_big_float, r"the operand of max\(\)")])
def test_a_python_float_a_float16_would_make_infinite_is_refused(f, name):
    check_raises(f, np.float16(-1.0), match=rf"'{name}' is the Python float 10000000000.0 .* where it is float16 .* "
                                            r"which cannot hold it \(it would be inf\)")
