"""Indices numpy rejects, and Python ints a tensor loop or `if` carries beyond what a dtype holds, in every mode.

* An index numpy rejects -- a Python float, a numpy float, a string, a 0-d
  float array, alone or in a tuple key, read or assigned -- is numpy's
  ``IndexError``; a float slice bound numpy's ``TypeError``; an index of a
  staged list Python's list ``TypeError``.  Each names the user's line.
* A Python int a tensor loop or ``if`` carries that the dtype it would be
  given cannot hold: a weak counter widens to int64 (``k = 2**62`` counted
  by an int32 ``range``); next to a strongly typed int32 value (NEP 50:
  ``np.int32(1) + 2**40`` is an ``OverflowError``), or beyond int64, it is
  an ``ag.TracingError`` naming the variable and the line -- never an
  internal ``OverflowError`` nor a wrapped value.
"""

from __future__ import annotations

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from modes import check, check_python_error, check_raises, check_value_or_error, i32, modes

f32 = np.float32
NUMPY_INDEX = r"only integers, slices \(`:`\), ellipsis \(`...`\), numpy.newaxis \(`None`\)"


def line_of(f, offset):
    return rf"\S*test_index_and_counter_edges.py:{f.__code__.co_firstlineno + offset}\b"


# -- indices numpy rejects ------------------------------------------------------------------


def float_index(x):
    return x[1.0]


def float_in_tuple(x):
    return x[0, 1.5]


def numpy_float_index(x):
    return x[np.float64(1.0)]


def string_index(x):
    return x["a"]


def float_index_assigned(x):
    x[1.0] = 3.0
    return x


@pytest.mark.parametrize("f", [float_index, float_in_tuple, numpy_float_index, string_index, float_index_assigned])
def test_a_non_integer_index_is_numpys_index_error_naming_the_line(f):
    check_python_error(f, np.arange(6, dtype=f32).reshape(2, 3), exc=IndexError,
                       match=line_of(f, 1) + ".*" + NUMPY_INDEX)


def zero_d_float_array_index(x):
    return x[np.array(1.0)]


def test_a_0d_float_array_index_is_numpys_index_error():
    check_python_error(zero_d_float_array_index, np.arange(3, dtype=f32), exc=IndexError,
                       match=line_of(zero_d_float_array_index, 1) + ".*must be of integer")


def float_start(x):
    return x[1.0:]


def float_stop(x):
    return x[:2.5]


def float_step(x):
    return x[::1.0]


@pytest.mark.parametrize("f", [float_start, float_stop, float_step])
def test_a_float_slice_bound_is_numpys_type_error_naming_the_line(f):
    check_python_error(f, np.arange(4, dtype=f32), exc=TypeError,
                       match=line_of(f, 1) + ".*slice indices must be integers")


def bool_slice_bound(x):
    return x[True:]


def test_a_bool_slice_bound_is_the_int_it_stands_for():
    check(bool_slice_bound, np.arange(4, dtype=f32))


def python_bool_index(x):
    return x[True]


def test_a_python_bool_index_is_refused_as_a_mask_naming_the_line():
    check_raises(python_bool_index, np.arange(3, dtype=f32), match=line_of(python_bool_index, 1) + ".*mask")


def float_index_of_a_staged_list(x, n):
    items = []
    for _ in range(n):
        items.append(x)
    return items[1.0]


def test_a_float_index_of_a_staged_list_is_pythons_type_error():
    check_python_error(float_index_of_a_staged_list, f32(1), i32(3), exc=TypeError,
                       match=line_of(float_index_of_a_staged_list, 4) + ".*list indices must be integers")


def float_tensor_index(x, i):
    return x[i]


def test_a_float_tensor_index_is_still_numpys_index_error():
    check_python_error(float_tensor_index, np.arange(3, dtype=f32), f32(1), exc=IndexError,
                       match=line_of(float_tensor_index, 1))


def integer_indices(x, i):
    return x[1], x[np.int64(0)], x[np.array(2)], x[i], x[1:], x[: np.int32(2)]


def test_integer_indices_still_read_the_items():
    check(integer_indices, np.arange(4, dtype=f32), i32(3))


# -- Python ints a dtype cannot hold ----------------------------------------------------------


def big_counter(k, x):
    for _ in range(x):
        k = k + 1
    return k


def big_while_counter(k, n):
    i = 0
    while i < n:
        k += 1
        i += 1
    return k


def big_compared(k, n):
    while k < n:
        k += 1
    return k


def big_negative_counter(k, n):
    for _ in range(n):
        k -= 1
    return k


@pytest.mark.parametrize("start", [2**62, 2**31, -(2**31) - 1, -(2**62), 2**63 - 4])
def test_a_python_int_counter_starting_beyond_int32_counts_in_int64(start):
    check(big_counter, start, i32(3))
    check(big_while_counter, start, i32(3))
    check(big_negative_counter, start, i32(3))


def test_a_python_int_compared_with_an_int32_bound_beyond_it():
    check(big_compared, 2**40, i32(3))  # the loop never runs: the int comes back


def counter_reset_beyond_int32(k, n):
    for _ in range(n):
        k = 2**40
    return k


def counter_jumping_beyond_int32(n):
    i = 0
    while i < n:
        i = i + 1
        if i > 1:
            i = 2**40
    return i


def test_a_weak_counter_given_an_int_beyond_int32_widens():
    check(counter_reset_beyond_int32, 0, i32(3))
    check(counter_jumping_beyond_int32, i32(3))


def counter_then_big_in_an_if(n):
    s = 0
    for _ in range(n):
        s += 1
    if n > 1:
        s = 2**40
    return s


def test_an_if_merging_a_weak_counter_and_an_int_beyond_int32_widens():
    check(counter_then_big_in_an_if, i32(3))
    check(counter_then_big_in_an_if, i32(1))


def big_combined_with_int32(k, x):
    for _ in range(x):
        k = k + x
    return k


def test_a_start_beyond_the_dtype_of_the_tensors_it_meets_is_refused_naming_it():
    check_raises(big_combined_with_int32, 2**62, i32(3),
                 match=r"'k' is the Python int 4611686018427387904 before the for loop at "
                       + line_of(big_combined_with_int32, 1) + r".*int32 cannot hold it")


def big_on_one_path(c, x):
    if c > 0:
        k = 2**40
    else:
        k = x
    return k


def big_before_the_if(c, x):
    k = 2**40
    if c > 0:
        k = x
    return k


def strong_reset_beyond_int32(k, n):
    for _ in range(n):
        k = 2**40
    return k


@pytest.mark.parametrize("f, offset", [(big_on_one_path, 1), (big_before_the_if, 2)])
def test_an_if_merging_an_int32_and_an_int_beyond_it_is_refused_naming_it(f, offset):
    # NEP 50 makes the merge int32, which cannot hold 2**40 (numpy: np.int32(1) + 2**40 is an OverflowError)
    for c in (i32(1), i32(0)):
        check_raises(f, c, i32(5), match=r"'k' is the Python int 1099511627776 .*" + line_of(f, offset)
                     + r".*int32 cannot hold it")
        check_value_or_error(f, c, i32(5), name_regex="'k'")


def test_a_strong_loop_variable_given_an_int_beyond_its_dtype_is_refused_naming_it():
    check_raises(strong_reset_beyond_int32, i32(0), i32(3),
                 match=r"'k' is the Python int 1099511627776 after an iteration of the for loop at "
                       + line_of(strong_reset_beyond_int32, 1))


def big_if(c):
    k = 0
    if c > 0:
        k = 2**64
    return k


@pytest.mark.parametrize("start", [2**63, 2**64 - 2, 2**70, -(2**63) - 1])
def test_a_python_int_counter_beyond_int64_is_refused_naming_it(start):
    for f in (big_counter, big_while_counter):
        check_raises(f, start, i32(3), match=rf"'k' is the Python int {start} before the \w+ loop at "
                     + line_of(f, 1 if f is big_counter else 2) + ".*int64")
        check_value_or_error(f, start, i32(3), name_regex="'k'")
    check_raises(big_if, i32(1), match=r"'k' is the Python int 18446744073709551616 in the true branch of the if at "
                 + line_of(big_if, 2))


def test_python_ints_within_int32_keep_int32():
    for _, g in modes(big_counter):
        assert g(5, i32(3)).dtype == np.int32


_LOGP = np.log(np.arange(1, 13, dtype=np.float32).reshape(4, 3))
_LABELS = np.array([0, 2, 1, 2])


@pytest.mark.parametrize("pick", [
    lambda x, t: x[np.arange(4), t],  # the log-probability of each label
    lambda x, t: x[t, t % 3],
    lambda x, t: x[[0, -1], [-1, 0]],
    lambda x, t: x[np.arange(4)[:, None], np.array([0, 2])],  # broadcast index arrays
])
def test_several_index_arrays_pick_numpys_points(pick):
    check(pick, _LOGP, _LABELS)


def test_several_index_arrays_raise_numpys_errors():
    with pytest.raises(IndexError):
        ag.function(lambda x, t: x[np.arange(4), t + 1])(_LOGP, _LABELS)  # 3 is out of bounds for axis 1
    with pytest.raises(IndexError, match="shape mismatch: indexing arrays could not be broadcast together"):
        ag.function(lambda x, t: x[np.arange(3), t])(_LOGP, _LABELS)
    with pytest.raises(ag.TracingError, match="several index arrays beside slices"):
        ag.function(lambda x, t: x[t, :, t])(np.zeros((4, 3, 4)), _LABELS)


def test_several_index_arrays_have_a_gradient_and_unknown_dimensions():
    grad = ag.grad(lambda x: x[np.arange(4), _LABELS].sum())(_LOGP.astype(np.float64))
    assert grad.tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0], [0, 0, 1]]
    g = ag.function(lambda x, t: x[np.arange(4), t],
                    input_signature=[rt.TensorSpec((None, 3), "float32"), rt.TensorSpec((None,), "int64")])
    np.testing.assert_array_equal(g(_LOGP, _LABELS), _LOGP[np.arange(4), _LABELS])
