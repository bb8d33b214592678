"""``x[key] = v`` and ``x[key] op= v`` on tensors: numpy's semantics in every execution mode.

Each case runs the plain function on numpy values (the expected result or
error) and ``ag.function`` of it in the three modes (interpreter,
``optimize=False``, ``jit_compile=True``).  Errors are the ones numpy
raises, when the graph runs, with the user's statement and ``file:line``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from modes import check, check_python_error, check_raises, i32


def store(x, i, v):
    x[i] = v
    return x


def add_at(x, i, v):
    x[i] += v
    return x


def zero_between(x, a, b):
    x[a:b] = 0
    return x


def add_from(x, a):
    x[a:] += 5
    return x


def store_2d(x, i, j, v):
    x[i, j] = v
    return x


def store_row(x, i, v):
    x[i] = v
    return x


def mask_store(x, t):
    x[x > t] = -1
    return x


def store_in_loop(x, n):
    for i in range(n):
        x[i] = i * 10
    return x


@pytest.mark.parametrize("i", [0, 2, -1, -3])
def test_a_tensor_index_stores_like_numpy(i):
    check(store, i32([1, 2, 3]), i32(i), i32(7))


def test_a_float_into_an_int_array_is_cast_as_numpy_casts():
    check(store, i32([1, 2, 3]), i32(1), 2.7)  # Python keeps int32: [1, 2, 3]
    check(store, i32([1, 2, 3]), i32(1), np.float32(-2.7))
    check(add_at, i32([1, 2, 3]), i32(0), 2.7)  # x[0] + 2.7 is a float64 scalar, stored as int32 3


@pytest.mark.parametrize("i", [3, -4, 100])
def test_an_index_out_of_range_is_an_index_error_when_the_graph_runs(i):
    check_python_error(store, i32([1, 2, 3]), i32(i), i32(7), exc=IndexError, match=r"`x\[i\] = v` at .*test_item_assignment.py:\d+: index")


def test_an_augmented_update_out_of_range_is_an_index_error():
    check_python_error(add_at, i32([1, 2, 3]), i32(5), i32(1), exc=IndexError, match=r"`x\[i\] \+= v` at .*:\d+")


def test_a_value_of_the_wrong_shape_is_numpys_value_error():
    x = np.zeros((2, 3), np.float32)
    check_python_error(store_row, x, i32(0), np.ones(2, np.float32), exc=ValueError, match="could not broadcast")
    check(store_row, x, i32(1), np.ones(3, np.float32))
    check(store_row, x, i32(1), np.float32(4))  # a scalar fills the row, as in numpy


def test_python_ints_that_do_not_fit_are_overflow_errors():
    x = np.zeros(3, np.int8)
    check_python_error(store, x, i32(0), 1000, exc=OverflowError, match="Python integer 1000 out of bounds for int8")
    check_python_error(add_at, x, i32(0), 1000, exc=OverflowError, match="out of bounds for int8")
    check(store, x, i32(0), 100)


def test_numpy_values_into_a_narrower_dtype_follow_numpy():
    x = np.zeros(3, np.int8)
    # numpy refuses a numpy scalar that does not fit, and casts an array (wrapping)
    check_python_error(store, x, i32(0), np.int32(1000), exc=OverflowError, match="out of bounds for int8")
    check(zero_between_with, x, i32(0), i32(1), np.array([1000, 7]))  # arrays are cast unsafely: -24 and 7


def zero_between_with(x, a, b, v):
    x[a:b + 1] = v
    return x


def test_a_computed_numpy_scalar_that_does_not_fit_is_an_overflow_error():
    def scaled_store(x, i, v):
        x[i] = v * 100  # an np.int32 of 1000: numpy refuses it for int8
        return x

    check_python_error(scaled_store, np.zeros(3, np.int8), i32(0), i32(10), exc=OverflowError, match="out of bounds")
    check(scaled_store, np.zeros(3, np.int8), i32(0), i32(1))


def test_nan_into_an_int_array_is_numpys_value_error():
    check_python_error(store, i32([1, 2]), i32(0), float("nan"), exc=ValueError, match="cannot convert float NaN")


@pytest.mark.parametrize("a, b", [(1, 3), (-2, 10), (4, 1), (0, 0)])
def test_slice_assignment_with_tensor_bounds(a, b):
    check(zero_between, np.arange(6), i32(a), i32(b))


@pytest.mark.parametrize("a", [0, 4, -1, 9])
def test_augmented_slice_assignment(a):
    check(add_from, np.arange(6, dtype=np.int32), i32(a))


def test_augmented_slice_assignment_keeps_numpys_casting_rule():
    def add_float(x, a):
        x[a:] += 2.5  # an in-place ufunc on a view: numpy refuses float64 -> int32 ('same_kind')
        return x

    check_python_error(add_float, np.arange(4, dtype=np.int32), i32(1), exc=TypeError, match="same_kind")


def test_two_indices_and_a_mask():
    check(store_2d, np.zeros((2, 3), np.float32), i32(1), i32(-1), np.float32(5))
    check_python_error(store_2d, np.zeros((2, 3)), i32(2), i32(0), 1.0, exc=IndexError, match="x\\[i, j\\] = v")
    check(mask_store, np.arange(6), np.int64(2))


def test_item_assignment_in_a_tensor_loop():
    check(store_in_loop, np.zeros(5, np.int32), i32(3))
    check_python_error(store_in_loop, np.zeros(2, np.int32), i32(3), exc=IndexError, match=r"`x\[i\] = i \* 10`")


def test_an_index_into_a_branch_not_taken_does_not_fail():
    def guarded(x, i):
        if i < 3:
            x[i] = 9
        return x

    check(guarded, i32([1, 2, 3]), i32(1))
    check(guarded, i32([1, 2, 3]), i32(7))  # Python never runs x[7] = 9


def test_a_float_index_is_numpys_index_error_at_trace_time():
    with pytest.raises(IndexError):
        store(i32([1, 2]), np.float32(0), i32(1))
    with pytest.raises(IndexError, match=r"an index at .*test_item_assignment.py:\d+ is the float32\[\] tensor"):
        ag.function(store)(i32([1, 2]), np.float32(0), i32(1))


def test_a_set_item_graph_saves_and_loads():
    cf = ag.function(zero_between).get_concrete_function(i32([1, 2, 3, 4]), i32(1), i32(3))
    doc = json.loads(json.dumps(cf.graph.as_graph_def()))
    graph = rt.Graph.from_graph_def(doc)
    (out,) = rt.run_graph(graph, [i32([1, 2, 3, 4]), i32(1), i32(3)])
    assert out.tolist() == [1, 0, 0, 4]


# -- staged lists ---------------------------------------------------------------------


def set_in_staged_list(n, i, v):
    acc = []
    for k in range(n):
        acc.append(k)
    acc[i] = v
    return acc[0], acc[1], acc[2]


def test_an_item_of_a_staged_list_is_replaced():
    check(set_in_staged_list, i32(3), i32(1), i32(7), check_dtype=False)
    check_python_error(set_in_staged_list, i32(3), i32(3), i32(7), exc=IndexError, match="staged list")


def test_a_float_into_a_staged_list_of_ints_is_refused():
    check_raises(set_in_staged_list, i32(3), i32(1), 2.5, match="holds int32 elements")


def test_a_tensor_key_of_a_dict_is_refused():
    def keyed(x, k):
        d = {}
        d[k] = x
        return d

    check_raises(keyed, np.float32(1), i32(2), match=r"`d\[k\] = x` at .*test_item_assignment.py:\d+: a symbolic tensor used as a key of a dict")


# -- del x[i] ---------------------------------------------------------------------------


def deleted_from_staged_list(n, i):
    acc = []
    for k in range(n):
        acc.append(k * 10)
    del acc[i]
    return len(acc), acc[0], acc[-1]


@pytest.mark.parametrize("i", [0, 1, -1, -3])
def test_del_of_an_item_of_a_staged_list(i):
    check(deleted_from_staged_list, i32(4), i32(i), check_dtype=False)


def test_del_with_a_python_index_and_in_a_tensor_loop():
    def f(n):
        acc = []
        for k in range(n):
            acc.append(k)
        del acc[-1]
        del acc[0]
        return len(acc), acc[0]

    check(f, i32(4), check_dtype=False)


def test_del_out_of_range_is_pythons_index_error():
    check_python_error(deleted_from_staged_list, i32(2), i32(2), exc=IndexError, match="list index out of range")


def test_del_of_a_slice_of_a_staged_list_is_refused():
    def f(n):
        acc = []
        for k in range(n):
            acc.append(k)
        del acc[1:]
        return len(acc)

    check_raises(f, i32(3), match=r"only one item at a time can be deleted from a staged list")


def test_del_of_an_array_element_is_numpys_value_error():
    def f(x):
        del x[0]
        return x

    check_python_error(f, np.ones(3, np.float32), exc=ValueError, match="cannot delete array elements")


def test_del_of_python_containers_is_unchanged():
    def f(x):
        d = {"a": 1, "b": 2}
        del d["a"]
        l = [1, 2, 3]
        del l[1:]
        return x + len(d) + len(l)

    check(f, np.float32(1))


# -- several targets, and a numpy array of the function's own ------------------------------------

def swap_first_two(a):
    a[0], a[1] = a[1], a[0]
    return a


def chained_store(a):
    a[0] = a[1] = a[2]
    return a


def swap_at(a, i):
    a[i], a[i + 1] = a[i + 1], a[i]
    return a


def starred_store(a):
    a[0], *rest = [7.0, 8.0, 9.0]
    return a, rest


def targets_in_order(a):
    i = 0
    a[i], i = 5.0, 2  # a[0] is stored before i changes
    return a, i


def bubble_sort(a, n):
    for i in range(n - 1):
        for j in range(n - 1 - i):
            if a[j] > a[j + 1]:
                a[j], a[j + 1] = a[j + 1], a[j]
    return a


def for_target_item(a):
    out = np.zeros(2, np.float32)
    for out[1] in a:
        out[0] = out[0] + out[1]
    return out


def store_into_a_local_array(x, i):
    buf = np.zeros(3, np.float32)
    buf[0] = x
    buf[i] += x
    return buf


@pytest.mark.parametrize("f, args", [
    (swap_first_two, (np.array([3.0, 1.0, 2.0], np.float32),)),
    (chained_store, (np.array([3.0, 1.0, 2.0], np.float32),)),
    (swap_at, (np.array([3.0, 1.0, 2.0], np.float32), i32(1))),
    (starred_store, (np.array([3.0, 1.0, 2.0]),)),
    (targets_in_order, (np.array([0.0, 0.0, 0.0]),)),
    (bubble_sort, (np.array([3.0, 1.0, 2.0, 0.0], np.float32), i32(4))),
    (store_into_a_local_array, (np.float32(2.0), i32(2))),
    (for_target_item, (np.array([3.0, 1.0, 2.0], np.float32),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_items_of_several_targets_and_of_local_arrays_are_stored_as_python_does(f, args):
    check(f, *args)


def store_into_an_aliased_array(x):
    buf = np.zeros(2, np.float32)
    view = buf
    buf[0] = x
    return view


def store_into_a_view(x):
    buf = np.zeros(4, np.float32)
    part = buf[1:]
    part[0] = x
    return buf


@pytest.mark.parametrize("f, alias", [(store_into_an_aliased_array, "view"),
                                      (store_into_a_view, "the array it is a view of")])
def test_a_tensor_stored_into_a_numpy_array_another_name_reaches_is_refused(f, alias):
    check_raises(f, np.float32(3.0), match=rf"storing a tensor into a numpy array makes the name a tensor .* but "
                                           rf"'{alias}' also reaches the array")
