"""Ops the JAX backend lowers that once fell back to numpy (runtime/backends/jax/checks.py).

Each case runs on the numpy interpreter and on the JAX backend without a
fallback warning, and the results (values, dtypes) or the errors (type and
message) must be equal.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autograph as ag

pytest.importorskip("jax", reason="the JAX backend needs JAX: pip install autograph[jax]")


def lowered(fn, *args):
    """``ag.function(fn, backend="jax")(*args)``, failing on any fallback warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ag.AutoGraphWarning)
        return ag.function(fn, backend="jax")(*args)


def assert_same(a, b):
    assert type(a) is type(b), (type(a), type(b))
    assert np.asarray(a).dtype == np.asarray(b).dtype
    np.testing.assert_array_equal(a, b)


def interpreter_error(fn, *args):
    try:
        ag.function(fn)(*args)
    except Exception as error:  # noqa: BLE001 - any type: it is compared with JAX's
        return error
    pytest.fail("the interpreter raised nothing")


def in_place_python_ints(x, i, n):
    k = 0
    while k < n:
        x[i] += 200  # wraps around in uint8, as numpy computes it
        x[:i] -= 5
        x[i - 1] *= 3
        x[0] //= 0  # numpy: 0 (and a warning XLA cannot give)
        x[1] %= 7
        x[2] <<= 2
        x[i] ^= 6
        k += 1
    return x


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "int16"])
def test_in_place_item_assignment_of_a_python_int_into_an_integer_array(dtype):
    x = np.arange(1, 5).astype(dtype)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = ag.function(in_place_python_ints)(x, np.int32(2), np.int32(3))
    assert_same(expected, lowered(in_place_python_ints, x, np.int32(2), np.int32(3)))
    assert_same(ag.function(in_place_python_ints)(x, np.int32(1), np.int32(0)),
                lowered(in_place_python_ints, x, np.int32(1), np.int32(0)))


def add_big(x, i):
    x[i] += 3000000000
    return x


def assign_big(x, i):
    x[i] = 3000000000
    return x


@pytest.mark.parametrize("fn", [add_big, assign_big])
def test_a_python_int_that_does_not_fit_raises_numpy_s_overflow_error(fn):
    x = np.arange(3, dtype=np.int32)
    expected = interpreter_error(fn, x, np.int32(1))
    assert type(expected) is OverflowError and "out of bounds for int32" in str(expected)
    with pytest.raises(OverflowError) as info:
        lowered(fn, x, np.int32(1))
    assert str(info.value) == str(expected)
    assert_same(ag.function(fn)(x.astype(np.int64), np.int32(1)), lowered(fn, x.astype(np.int64), np.int32(1)))


def test_an_in_place_python_int_at_an_index_out_of_range_raises_index_error():
    x = np.arange(3, dtype=np.int32)
    expected = interpreter_error(add_big, x.astype(np.int64), np.int32(5))
    with pytest.raises(IndexError) as info:
        lowered(add_big, x.astype(np.int64), np.int32(5))
    assert str(info.value) == str(expected)


def grows_in_a_loop(v, n):
    acc = []
    i = 0
    while i < n:
        acc.append(v[i])
        i += 1
    return acc


def grows_in_a_branch(v, n):
    acc = [v[0]]
    if n > 1:
        acc.append(v[1])
    return acc


@pytest.mark.parametrize("fn, construct, line, shapes", [
    (grows_in_a_loop, "While", 3, "(0,) or (1,) before and after an iteration"),
    (grows_in_a_branch, "If", 2, "(2,) or (1,) in its two branches"),
])
def test_a_staged_list_of_unknown_length_falls_back_naming_the_op_and_the_shapes(fn, construct, line, shapes):
    v, n = np.array([1.5, 2.5, 3.5], np.float32), np.int32(2)
    with pytest.warns(ag.AutoGraphWarning) as record:
        got = ag.function(fn, backend="jax")(v, n)
    (message,) = [str(w.message) for w in record if "backend='jax' cannot run" in str(w.message)]
    assert f"({construct} op " in message
    assert f"test_jax_lowering.py:{fn.__code__.co_firstlineno + line} cannot be lowered" in message
    assert f"has shape {shapes}; XLA needs one static shape" in message
    assert_same(ag.function(fn)(v, n), got)
