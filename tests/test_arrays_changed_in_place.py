"""numpy arrays that existed before the traced code and that it changes in place.

Traced code runs once: a store into an array made before a tensor ``if``
or loop (``buf[0] = 1.5`` in one branch) used to land in the array while
both branches were traced, and the graph returned the array with every
branch's stores; a store into an array the function reaches from outside
(a global, an object's attribute) happened once, while tracing, where
numpy makes it at every call.  Now a store through the array's own name in
a body goes through the graph (the name becomes a tensor), and any other
change in place is an ``ag.TracingError`` naming the array, the statement and
the line (``runtime/tracing/locked_arrays.py``).
"""

from __future__ import annotations

import numpy as np
import pytest
from modes import check, check_raises, i32

import autograph as ag


def store_in_a_branch(x):
    buf = np.zeros(3)
    if x > 0:
        buf[0] = 1.5
    return buf


def stores_in_both_branches(x):
    t = np.zeros(3)
    if x > 0:
        t[1] = x
    else:
        t[2] = 7.0
    return t


def histogram(x):
    counts = np.zeros(2, np.int64)
    for i in range(len(x)):
        if x[i] < 0:
            counts[0] += 1
        else:
            counts[1] += 2
    return counts


def mask_until_negative(x):
    mask = np.zeros(4, np.int64)
    for i in range(4):
        if x[i] < 0:
            break
        mask[i] = 1
    return mask


def common_subsequence(a, b):
    t = np.zeros((len(a) + 1, len(b) + 1))
    for i in range(len(a)):
        for j in range(len(b)):
            if a[i] == b[j]:
                t[i + 1, j + 1] = t[i, j] + 1
            else:
                t[i + 1, j + 1] = max(t[i, j + 1], t[i + 1, j])
    return t[len(a), len(b)], t


def made_in_the_function_at_the_top(x):
    buf = np.zeros(3)
    buf[0] = 1.0
    buf += 2.0
    return x + buf


def sliced_by_a_tensor(x, n):
    buf = np.full(4, 2.0, np.float32)
    buf[: n % 4] += 4
    if x > 0:
        buf[n % 4 :] = 1
    return buf


@pytest.mark.parametrize("f, args", [
    (sliced_by_a_tensor, (np.float32(1.0), i32(2))),
    (sliced_by_a_tensor, (np.float32(-1.0), i32(3))),
    (store_in_a_branch, (np.float64(1.0),)),
    (store_in_a_branch, (np.float64(-1.0),)),
    (stores_in_both_branches, (np.float32(2.0),)),
    (stores_in_both_branches, (np.float32(-2.0),)),
    (histogram, (np.array([1.0, -2.0, 3.0]),)),
    (histogram, (np.array([1.0, 2.0, 3.0]),)),
    (mask_until_negative, (np.array([1, 2, -1, 4]),)),
    (mask_until_negative, (np.array([1, 2, 3, 4]),)),
    (common_subsequence, (np.array([1, 2, 3, 2, 4, 1]), np.array([2, 1, 3, 2, 1]))),
    (made_in_the_function_at_the_top, (np.float64(1.0),)),
])
def test_stores_through_the_arrays_name_are_pythons(f, args):
    check(f, *args)


def scaled_in_a_branch(x):
    buf = np.ones(3)
    if x > 0:
        buf *= 2
    return buf


def filled_in_a_loop(x, n):
    buf = np.ones(3)
    i = 0
    while i < n:
        buf.fill(x)
        i += 1
    return buf


class Holder:
    def __init__(self):
        self.a = np.zeros(2)


def through_an_attribute(x, h):
    if x > 0:
        h.a[0] = 1.0
    return h.a


@pytest.mark.parametrize("f, args, path, construct", [
    (scaled_in_a_branch, (np.float64(1.0),), "buf", "if"),
    (filled_in_a_loop, (np.float64(1.0), i32(2)), "buf", "while loop"),
])
def test_other_changes_in_place_in_a_body_are_refused(f, args, path, construct):
    check_raises(f, *args, match=rf"the body of the {construct} at .* changes in place a numpy array made before "
                                 rf"it \('{path}'\)")


def test_a_change_through_an_attribute_in_a_body_is_refused_and_the_array_is_left_as_it_was():
    for mode in ({}, {"optimize": False}, {"jit_compile": True}):
        h = Holder()
        with pytest.raises(ag.TracingError, match=r"changes in place a numpy array made before it \('h.a'\)"):
            ag.function(through_an_attribute, **mode)(np.float64(1.0), h)
        assert h.a.flags.writeable and not h.a.any()


TABLE = np.zeros(3)
FROZEN = np.zeros(2)
FROZEN.flags.writeable = False


def counts_calls_in_a_global(x):
    TABLE[1] += 2
    return x + TABLE[1]


def stores_into_an_argument_object(x, h):
    h.a[1] = x  # a tensor: h.a would hold a symbolic value
    return x


def writes_a_read_only_array(x):
    FROZEN[0] = 1.0
    return x


def test_a_change_to_an_array_reached_from_outside_is_refused():
    with pytest.raises(ag.TracingError, match=r":\d+: function 'counts_calls_in_a_global' .* changes in place a "
                                              r"numpy array it reaches from outside \('TABLE'\).*rt.Variable"):
        ag.function(counts_calls_in_a_global)(np.float64(1.0))
    assert TABLE.flags.writeable and not TABLE.any()
    h = Holder()
    with pytest.raises(ag.TracingError, match=r"reaches from outside \('h.a'\)"):
        ag.function(stores_into_an_argument_object)(np.float64(1.0), h)
    assert h.a.flags.writeable


def test_an_array_read_only_of_its_own_gives_pythons_error():
    with pytest.raises(ValueError, match="read-only"):
        writes_a_read_only_array(1.0)
    with pytest.raises(ValueError, match="read-only"):
        ag.function(writes_a_read_only_array)(np.float64(1.0))
    assert not FROZEN.flags.writeable


def test_under_jax_a_store_in_a_branch_into_an_array_made_before_is_refused():
    jax = pytest.importorskip("jax")
    with pytest.raises(ag.TracingError, match=r"the body of the if at .* numpy array made before it \('buf'\).*jnp"):
        jax.jit(ag.convert(store_in_a_branch))(1.0)
    assert float(ag.convert(store_in_a_branch)(1.0)[0]) == 1.5  # not traced: Python's
