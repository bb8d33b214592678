"""Stores into arrays made in the function: numpy changes them in place.

A store (``z[0] = v``, ``z += v``) into a tensor gives a new tensor bound to
the name stored through.  Python's numpy changes the array itself, which
every other name for it, and the array it is a view of (a slice, reshape,
transpose or row), shows: those stores are refused.  In-place operators
keep the array's dtype and shape, as numpy's do.  Every case runs in the
three execution modes (``modes.check``).
"""

from __future__ import annotations

import enum

import numpy as np
import pytest

from modes import check, check_raises, i32

import autograph as ag

V = np.array([1.0, 2.0, 3.0, 4.0])


def second_name(x):
    y = x * 1.0
    z = y
    z[0] = 9.0
    return y


def slice_view(x):
    y = x * 1.0
    z = y[1:3]
    z[0] = 9.0
    return y


def transposed(x):
    y = x.reshape(2, 2) * 1.0
    z = y.T
    z[0] = 1.0
    return y


def rows_of_a_reshape(x):
    y = x * 1.0
    for row in y.reshape(2, 2):
        row[0] = 0.0
    return y


def row_by_tensor_index(x, i):
    y = x.reshape(2, 2) * 1.0
    r = y[i]
    r[1] = 7.0
    return y


def in_place_through_a_second_name(x):
    y = x * 1.0
    z = y
    z += 10.0
    return y


def in_place_through_a_view(x):
    y = x * 1.0
    z = y[0:2]
    z *= 3.0
    return (y * y).sum()


def through_a_dict(x):
    d = {"w": x * 1.0}
    w = d["w"]
    w[0] = 5.0
    return d


@pytest.mark.parametrize("f, args, words", [
    (second_name, (V,), r"'y' and 'z' hold the same array"),
    (slice_view, (V,), r"'y' holds the array it is, or is a view of"),
    (transposed, (V,), r"'y' holds the array it is, or is a view of"),
    (rows_of_a_reshape, (V,), r"`row\[0\] = 0.0` at .*:\d+: .*'y' holds the array it is, or is a view of"),
    (row_by_tensor_index, (V, i32(1)), r"'y' holds the array it is, or is a view of"),
    (in_place_through_a_second_name, (V,), r"'y' and 'z' hold the same array"),
    (in_place_through_a_view, (V,), r"`z \*= 3.0` at .*:\d+: .*'y' holds the array it is, or is a view of"),
    (through_a_dict, (V[:2],), r"'d\['w'\]' and 'w' hold the same array|'w' and 'd\['w'\]' hold the same array"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_store_another_name_would_see_is_refused(f, args, words):
    check_raises(f, *args, match=words + r".*Store through one name")


def buffer_with_a_second_name(x, n):
    buf = np.zeros(4)
    out = buf
    for _ in range(n):
        buf += x  # the loop's variable starts as the array 'out' holds: numpy adds into it
    return out


def loop_variable_with_a_second_name(x, n):
    y = x * 1.0
    z = y
    for i in range(n):
        y[i] = 0.0
    return z


def buffer_alone(x, n):
    buf = np.zeros(4)
    for i in range(n):
        buf += x
        buf[i] = 0.0
    return buf


def test_a_loop_storing_into_its_initial_array_that_another_name_holds_is_refused():
    for f, other, statement in [(buffer_with_a_second_name, "out", r"buf \+= x"),
                                (loop_variable_with_a_second_name, "z", r"y\[i\] = 0.0")]:
        check_raises(f, V, i32(3), match=rf"`{statement}` at .*:\d+: .*'{other}' holds the array it is")
    check(buffer_alone, V, i32(3))


def copied(x):
    y = x * 1.0
    z = y.copy()
    z[0] = 9.0
    z += 1.0
    return y, z


def one_name(x, n):
    y = x * 1.0
    y[0] = 9.0
    y += 1.0
    for i in range(n):
        y[i] = y[i] * 2.0
        y *= 2.0
    return y


def row_read_then_base_stored(x, n):
    y = x.reshape(2, 2) * 1.0
    for i in range(n):
        r = y[i]
        y[i] = r - r.mean()  # r views y, but is not read after the store
    return y


def rebound_slice(x):
    y = x * 1.0
    y = y[1:]  # the old array has no other name
    y[0] = 5.0
    return y


@pytest.mark.parametrize("f, args", [
    (copied, (V,)), (one_name, (V, i32(3))), (row_read_then_base_stored, (V, i32(2))), (rebound_slice, (V,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_stores_no_other_name_sees_are_pythons(f, args):
    check(f, *args)


def test_an_in_place_store_through_an_alias_in_code_without_source_is_refused():
    # no source to convert: the function runs as it is, and its own frame is searched for other names
    namespace = {}
    exec("def f(y):\n    z = y * 1\n    w = z\n    w += 1\n    return z, w\n", namespace)  # noqa: S102
    with pytest.warns(ag.AutoGraphWarning, match="could not convert"), pytest.raises(
        ag.TracingError, match=r"the store at <string>:4: .* 'z' and 'w' hold the same array"
    ):
        ag.function(namespace["f"])(V)


def swap_rows(m):
    m = m * 1
    m[0], m[1] = m[1], m[0]
    return m


def swap_row_copies(m):
    m = m * 1
    m[0], m[1] = m[1].copy(), m[0].copy()
    return m


def swap_elements(v):
    v = v * 1
    v[0], v[1] = v[1], v[0]  # elements are numpy scalars: copies
    return v


def test_swapping_rows_through_views_is_refused():
    # numpy: m[0] = m[1] first, then m[1] = (the view of m[0], now a copy of m[1]): both rows equal
    check_raises(swap_rows, np.array([[1, 2], [3, 4]]), match=r"`m\[0\], m\[1\] = m\[1\], m\[0\]` at .*:\d+: "
                 r"value 2 is a numpy view of the array that target 1 stores into first.*\.copy\(\)")


def test_swapping_copies_or_elements_is_pythons():
    check(swap_row_copies, np.array([[1, 2], [3, 4]]))
    check(swap_elements, np.array([1, 2, 3], np.int32))


def bumped(x, v):
    y = x * 1
    y += v
    return y


@pytest.mark.parametrize("x, v", [
    (np.float32([1, 2]), np.float64([0.1, 0.2])),  # computed in float64, stored as float32
    (np.int8([100, 120]), np.int32([100, 10])),  # int32 sum, stored as int8: wraps as numpy's does
    (np.int32([1, 2]), 3),
    (np.array([True, False]), np.array([False, True])),
    (np.float64([[1, 2], [3, 4]]), np.float64([10, 20])),  # broadcast to the array's own shape
], ids=lambda v: str(getattr(v, "dtype", v)))
def test_in_place_operators_keep_the_arrays_dtype_and_shape(x, v):
    check(bumped, x, v)


def test_in_place_operators_raise_numpys_casting_error():
    check_raises(bumped, np.int32([1, 2]), 1.5, exc=TypeError, match=r"Cannot cast ufunc 'add' output from "
                 r"dtype\('float64'\) to dtype\('int32'\)")

    def halved(x):
        y = x * 1
        y /= 2
        return y

    check_raises(halved, np.int32([1, 2]), exc=TypeError, match=r"Cannot cast ufunc 'divide' output")


def test_in_place_operators_raise_numpys_broadcast_error():
    check_raises(bumped, np.float64([1, 2]), np.ones((2, 2)), exc=ValueError,
                 match=r"non-broadcastable output operand with shape \(2,\) doesn't match the broadcast shape \(2, 2\)")


def test_in_place_operators_on_numbers_rebind():
    def f(x):
        s = x.sum()
        s += 1.5  # a numpy scalar is immutable: a new float64
        return s

    check(f, np.int32([1, 2]))


class Mode(enum.IntEnum):
    TRAIN = 0
    EVAL = 1


def test_an_int_enum_next_to_a_tensor_is_its_number():
    def chosen(mode, x):
        if mode == Mode.EVAL:  # numpy's comparison of the number, not Python's identity fallback
            return x * 2
        return x

    def combined(x):
        return x + Mode.EVAL, x > Mode.TRAIN, x * Mode.EVAL  # an int64, as numpy takes an IntEnum

    check(chosen, np.int32(1), np.float32(3))
    check(chosen, np.int32(0), np.float32(3))
    check(combined, np.float32(3))
    check(combined, np.int8([3, 4]))
