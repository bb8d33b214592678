"""Edges of Python a new user's code reaches: Python's value, Python's error, or a refusal naming the line.

Each case runs the plain function and ``ag.function`` of it in the three
execution modes (interpreter, ``optimize=False``, ``jit_compile=True``):

* a tensor as a dict key or set member (``d.get(x)``, ``x in {1, 2}``) is a
  refusal, never a lookup by identity that misses the number;
* ``int(x)``, ``x.item()`` and ``round(x)`` of an integer tensor are Python's
  unbounded int as far as a graph holds one (int64): no wrap at the tensor's
  own dtype;
* an ``assert`` message holding tensors raises with their values; an
  ``assert`` on an array of several elements is numpy's ``ValueError``;
* an error numpy raises in a kernel (a zero slice step, the max of nothing)
  is an ``ag.ExecutionError`` that is also that error's type;
* a float or bool scalar tensor as an index: numpy's error, or a refusal;
* messages about constructs left to Python in converted code say so.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import autograph as ag
import autograph.runtime as rt
from modes import check, check_python_error, check_raises, load_program, modes

i32, u8, i8, i16 = np.int32, np.uint8, np.int8, np.int16


# -- a tensor as a dict key or set member ---------------------------------------------------------


def dict_get(x):
    d = {1: 10, 2: 20}
    return d.get(x, -1)


def dict_item(x):
    d = {1: 10, 2: 20}
    return d[x]


def set_member(x):
    if x in {1, 2}:
        return 1
    return 0


def dict_of_int(x):
    return {1: "a"}.get(int(x), "z")


@pytest.mark.parametrize("f", [dict_get, dict_item, set_member, dict_of_int])
def test_a_tensor_as_a_key_is_refused_naming_the_line(f):
    assert f(i32(1)) in (10, 1, "a")
    check_raises(f, i32(1), match=r"cannot be a dict key or set member at .*test_python_edges.py:\d+ .* in `")


def test_the_refusal_is_a_type_error_too():
    for _, g in modes(dict_get):
        with pytest.raises(TypeError, match="dict key or set member"):
            g(i32(1))


# -- int(), .item(), round() of integer tensors -------------------------------------------------


def int_plus_one(x):
    return int(x) + 1


def item_minus_ten(x):
    return x.item() - 10


def negated_item(x):
    return -x.item()


def abs_of_int(x):
    return abs(int(x))


def int_times(x):
    return int(x) * 1000


def round_squared(x):
    return round(x) ** 2


def sum_of_ints(v):
    return int(v[0]) + int(v[1])


def int_of(x):
    return int(x)


def int_beside_narrow(x, y):
    return int(x) + y


@pytest.mark.parametrize("f, x", [
    (int_plus_one, u8(255)), (int_plus_one, i32(2**31 - 1)), (int_plus_one, i8(-128)),
    (item_minus_ten, u8(3)), (negated_item, u8(5)), (abs_of_int, i8(-128)), (int_times, i16(100)),
    (round_squared, u8(20)), (sum_of_ints, np.array([200, 100], u8)), (int_of, np.uint64(2**63 - 1)),
])
def test_python_ints_of_integer_tensors_do_not_wrap(f, x):
    expected = check(f, x)
    assert not isinstance(expected, np.generic)  # a Python int


def test_an_int_beside_a_narrow_tensor_keeps_its_dtype():
    assert check(int_beside_narrow, u8(100), i8(20)) == 120  # int8, as NEP 50 gives


def test_an_int_that_a_narrow_tensor_cannot_hold_is_pythons_overflow_error():
    check_python_error(int_beside_narrow, u8(200), i8(1), exc=OverflowError, match="out of int8's bounds")


def test_a_uint64_beyond_int64_is_an_overflow_error():
    check_raises(int_plus_one, np.uint64(2**63), exc=OverflowError, match=r"int\(\) at .*does not fit in int64")


def length_squared(x):
    n = len(x)
    return n * n


def test_len_of_an_unknown_dimension_is_pythons_int_not_an_int32():
    for _, g in modes(length_squared, input_signature=[rt.TensorSpec((None,), "float32")]):
        assert g(np.zeros(50000, np.float32)) == 2500000000


# -- max / min of arrays --------------------------------------------------------------------------


def max2(a, b):
    return max(a, b)


def clip(x, lo, hi):
    return min(max(x, lo), hi)


def relu(x):
    return max(x, 0.0)


def test_max_of_arrays_is_pythons_truth_value_of_their_comparison():
    two = np.array([-1.0, 2.0])
    check_python_error(max2, two, np.array([3.0, 1.0]), exc=ValueError, match=r"max\(\) at .*truth value")
    check(max2, np.array([-1.0]), np.array([3.0]))
    check(max2, np.array([4.0]), np.array([3.0]))
    check(clip, np.array([5.0]), np.array([0.0]), np.array([3.0]))


CONSTANT = np.array([1.0, 5.0])


def max_with_constant(x):
    return max(x, CONSTANT)


def test_max_of_a_tensor_and_a_numpy_array_is_refused():
    check_raises(max_with_constant, np.float64(3.0), match=r"max\(\) of operands of different shapes")


def test_max_of_an_array_and_a_number_is_refused():
    relu(np.array([-1.0]))  # Python returns 0.0 or the array: a shape chosen by the values
    check_raises(relu, np.array([-1.0]), match=r"max\(\) of operands of different shapes .*rt\.maximum")


# -- a variable that is a narrow numpy value on one path and a Python int on another -------------


def int_in_branch(m):
    k = m
    if m > 0:
        k = int(m) + 1
    return k


def constant_in_branch(m):
    k = m
    if m > 0:
        k = 300
    return k


def int_in_loop(m, n):
    k = m
    for _ in range(n):
        k = int(k) + 100
    return k


def same_type_in_branch(m):
    k = m
    if m > 0:
        k = m + np.uint8(1)
    return k


@pytest.mark.parametrize("f, args, where", [
    (int_in_branch, (u8(255),), "in the false branch of the if"),
    (constant_in_branch, (u8(5),), "in the false branch of the if"),
    (int_in_loop, (u8(200), i32(1)), "before the for loop"),
])
def test_a_python_int_beside_a_wrapping_dtype_on_another_path_is_refused(f, args, where):
    f(*args)  # Python: 256, 300, 300 (ints), never a wrapped uint8
    check_raises(f, *args, match=rf"'k' is uint8 {where} at .*:\d+ but a Python int on another path")


def test_one_type_on_every_path_is_pythons():
    check(same_type_in_branch, u8(255))  # uint8 on both paths: wraps, as in Python
    check(same_type_in_branch, u8(0))


# -- assert -------------------------------------------------------------------------------------


# (exec'd from a fake file: pytest rewrites the asserts of a test module, and so their messages)
ASSERTS = load_program("""
def assert_tuple(n):
    assert n > 0, ("bad", n)
    return n


def assert_tensor(n):
    assert n > 0, n
    return n


def assert_nested(n):
    assert n, {"k": [n, 2]}
    return n + 1


def assert_array(v):
    assert v > 0
    return v
""", "assert_tuple").__globals__
assert_tuple, assert_tensor, assert_nested, assert_array = (
    ASSERTS[n] for n in ("assert_tuple", "assert_tensor", "assert_nested", "assert_array"))


@pytest.mark.parametrize("f, bad", [(assert_tuple, i32(-3)), (assert_tensor, i32(-3)), (assert_nested, i32(0))])
def test_an_assert_message_holding_tensors_has_their_values(f, bad):
    with pytest.raises(AssertionError) as python:
        f(bad)
    for name, g in modes(f):
        with pytest.raises(AssertionError) as got:
            g(bad)
        assert got.value.args == python.value.args, name
        assert repr(got.value.args) == repr(python.value.args), name
    check(f, i32(3))


def test_an_assert_on_an_array_of_several_elements_is_numpys_value_error():
    check_python_error(assert_array, np.array([1, 2], i32), exc=ValueError, match="truth value of an array")
    check(assert_array, np.array([1], i32))
    check_raises(assert_array, np.array([0], i32), exc=AssertionError, match="assertion failed at")


# -- numpy's errors in kernels keep their type ----------------------------------------------------


def strided(x, s):
    return x[::s]


def largest(x):
    return x.max()


@pytest.mark.parametrize("f, args, match", [
    (strided, (np.arange(4, dtype=i32), i32(0)), "slice step cannot be zero"),
    (largest, (np.zeros(0, u8),), "zero-size array"),
])
def test_a_kernels_error_is_an_execution_error_of_pythons_type(f, args, match):
    with pytest.raises(ValueError):
        f(*args)
    for name, g in modes(f):
        with pytest.raises(ValueError, match=match) as got:
            g(*args)
        assert isinstance(got.value, ag.ExecutionError), name
        assert isinstance(got.value.original, ValueError)


def test_an_execution_error_takes_no_kind_that_changes_how_it_travels():
    from autograph.runtime.errors import ExecutionError

    for kind in (StopIteration, OSError, RuntimeError):
        error = ExecutionError.of("failed", kind())
        assert type(error) is ExecutionError and not isinstance(error, kind)
    assert str(ExecutionError.of("two\nlines", KeyError("k"))) == "two\nlines"  # not KeyError's repr
    numpy_axis = np.exceptions.AxisError(3, 1)  # a ValueError and an IndexError: the first kind found
    assert isinstance(ExecutionError.of("failed", numpy_axis), ValueError)


def test_an_execution_error_pickles():
    import pickle

    for _, g in modes(strided):
        with pytest.raises(ValueError) as got:
            g(np.arange(4, dtype=i32), i32(0))
        again = pickle.loads(pickle.dumps(got.value))
        assert type(again) is type(got.value) and str(again) == str(got.value)


# -- scalar tensors of other kinds as indices ----------------------------------------------------


def index(x, i):
    return x[i]


def slice_to(x, i):
    return x[1:i]


A = np.array([5, 2, 1], i32)


def test_a_float_index_is_numpys_index_error_naming_the_line():
    check_python_error(index, A, np.float32(1.0), exc=IndexError, match=r"an index at .*:\d+ is the float32")


def test_a_float_slice_bound_is_pythons_type_error_naming_the_line():
    check_python_error(slice_to, A, np.float32(2.0), exc=TypeError, match=r"a slice stop at .*:\d+")


def test_a_bool_scalar_index_is_refused_naming_the_line():
    check_raises(index, A, np.True_, match=r"an index at .*test_python_edges.py:\d+ is the bool\[\] tensor i:0")


TABLE = np.array([10, 20, 30], i32)


def table_lookup(i):
    return TABLE[i] + 1


def table_slice(i):
    return TABLE[i:].sum()


@pytest.mark.parametrize("f", [table_lookup, table_slice])
def test_a_numpy_array_indexed_by_a_tensor_is_refused_with_the_tensor_to_make(f):
    # numpy converts the index while tracing: the message says it is an index, not an np.asarray call
    check_raises(f, i32(1), match=r"a numpy array (or Python list )?indexed by the symbolic tensor i:0 at .*test_python_edges.py:\d+"
                                   r".*rt\.constant\(table\)\[i\]")


def table_tensor_lookup(i):
    return rt.constant(TABLE)[i] + 1


def test_the_tensor_the_refusal_advises_gives_pythons_value():
    check(table_tensor_lookup, i32(2))
    check_python_error(table_tensor_lookup, i32(5), exc=IndexError, match="index 5 is out of bounds")


# -- constructs left to Python in converted code ---------------------------------------------------


def in_tuple(x):
    return x in (1, 2)


def unpack(x):
    a, b = x
    return a - b


def math_sqrt(x):
    return math.sqrt(x)


@pytest.mark.parametrize("f, x, match", [
    (in_tuple, i32(1), r"Python bool is not allowed at .*:\d+ .*where autograph does not stage it"),
    (unpack, np.array([3, 1], i32), r"iterating over a symbolic tensor .*where autograph does not stage it"),
    (math_sqrt, np.float32(4), r"cannot be converted to a Python float at .*:\d+ .*rt\.sqrt"),
])
def test_constructs_left_to_python_are_named_not_called_unconverted(f, x, match):
    f(x)
    check_raises(f, x, match=match)
    with pytest.raises(ag.TracingError) as got:
        ag.function(f)(x)
    assert "did not convert" not in str(got.value)


def test_a_numpy_frame_is_not_the_users_line():
    def fancy(x, i, j):
        x[[i, j]] = 1
        return x

    with pytest.raises(ag.TracingError) as got:
        ag.function(fancy)(A.copy(), i32(0), i32(2))
    assert "test_python_edges.py" in str(got.value) and "fromnumeric" not in str(got.value)
