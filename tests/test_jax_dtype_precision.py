"""backend="jax" computes each op in the dtype numpy computes it in (runtime/backends/jax/kernels.py: OPERANDS).

JAX promotes differently from numpy (``int32 / int32`` and ``sqrt(int32)``
in float32, ``int16 + float16`` in float16, ``int64 < uint64`` in float64)
and XLA rewrites a division by a constant or a broadcast scalar into a
multiplication by its rounded reciprocal; each case here runs on the numpy
interpreter and on the JAX backend (no fallback), and the results must be
equal exactly: the same type, dtype, values and signs of zeros.  Ops whose
value comes from a libm (``exp``, ``sin``, ``**`` of floats) differ by an
ulp between numpy and XLA: their dtypes are compared exactly and their
values to 2 ulps.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.ops.conversions import round_

jax = pytest.importorskip("jax", reason="the JAX backend needs JAX: pip install autograph[jax]")

INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
FLOATS = ["float16", "float32", "float64"]


def lowered(fn, *args):
    """``ag.function(fn, backend="jax")(*args)``, failing on any fallback warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ag.AutoGraphWarning)
        return ag.function(fn, backend="jax")(*args)


def both(fn, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return ag.function(fn)(*args), lowered(fn, *args)


def assert_same(a, b):
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
        return
    assert type(a) is type(b), (type(a), type(b))
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_array_equal(a, b, strict=True)
    if a.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


def values(dtype, positive=False):
    """Values spread over ``dtype``'s range (no zeros when ``positive``; no subnormals: XLA on CPU
    flushes them to zero)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        picks = [info.max, info.max - 1, info.max // 3, 1000003, 65537, 255, 7, 3, 1]
        if not positive:
            picks += [0, -1, -7, -1000, -(2**31) + 5, info.min + 1, info.min]
        return np.array([v for v in picks if info.min <= v <= info.max], dtype)
    picks = [7.0, 1.0 / 3.0, 2.0**53 + 2, 1e10 / 7.0, 0.1, 65000.0, 3.0, 1e-3, 12345.678]
    if not positive:
        picks += [-2.5, -7.0, -1e5 / 3.0, 0.0]
    return np.array([v for v in picks if abs(v) <= float(np.finfo(dtype).max)], np.float64).astype(dtype)


def pair(dx, dy):
    x, y = values(dx), values(dy, positive=True)
    n = max(len(x), len(y))
    return np.resize(x, n), np.resize(y, n)


# -- binary arithmetic over every pair of dtypes ---------------------------------------------


def arithmetic(x, y):
    return x + y, x - y, x * y, x / y, x // y, x % y, rt.maximum(x, y), rt.minimum(x, y)


def comparisons(x, y):
    return x < y, x <= y, x > y, x >= y, x == y, x != y


NUMBERS = INTS + FLOATS


@pytest.mark.parametrize("dx, dy", list(itertools.product(NUMBERS, NUMBERS)))
def test_arithmetic_of_two_dtypes_is_numpy_s(dx, dy):
    assert_same(*both(arithmetic, *pair(dx, dy)))


@pytest.mark.parametrize("dx, dy", list(itertools.product(["int64", "uint64", "int32", "float64", "float32"],
                                                          ["int64", "uint64", "float64", "uint32"])))
def test_comparisons_of_two_dtypes_are_exact(dx, dy):
    big = [2**63 - 1, 2**63, 2**64 - 1, 2**53, 2**53 + 1, -(2**63), -1, 0, 3, 2**31]
    x = np.array([v for v in big if np.can_cast(np.min_scalar_type(v), dx) or np.dtype(dx).kind == "f"],
                 dtype=object).astype(dx)
    y = np.resize(np.array([v for v in big if np.can_cast(np.min_scalar_type(v), dy) or np.dtype(dy).kind == "f"],
                           dtype=object).astype(dy), len(x))
    assert_same(*both(comparisons, x, y))
    assert_same(*both(comparisons, y, x))


def bools(x, y):
    return x // y, x % y, x / y, x + y


def test_bool_operands_compute_in_numpy_s_loop():
    x = np.array([True, False, True, False])
    y = np.array([True, True, False, False])
    assert_same(*both(bools, x, y))
    assert_same(*both(bools, x.astype(np.int8) * 100, y))


# -- true division: Python's value, at any dtype and shape ---------------------------------


def divide_by_3(x):
    return x / 3


def divide_by_ten(x):
    return x / 10.0, 7 / x


def python_int_over_3(x):
    return int(x) / 3


def divide(x, y):
    return x / y


@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_division_by_a_constant_is_python_s(dtype):
    x = values(dtype, positive=True)
    assert_same(*both(divide_by_3, x))
    assert_same(*both(divide_by_3, x[1]))
    assert_same(*both(divide_by_ten, x))


def test_the_reported_values():
    assert_same(lowered(divide_by_3, np.int32(7)), np.float64(7 / 3))
    assert_same(lowered(divide_by_3, np.array([1, 2], np.int32)), np.array([1 / 3, 2 / 3]))
    assert_same(lowered(divide, np.int32(7), np.int32(3)), np.float64(7 / 3))
    assert_same(lowered(python_int_over_3, np.int32(7)), np.float64(7 / 3))
    assert_same(lowered(divide_by_3, np.int64(7)), np.float64(7 / 3))
    assert_same(lowered(divide_by_3, np.float64(7.0)), np.float64(7 / 3))
    assert_same(lowered(rounded_2, np.float32(2.675)), np.float32(2.68))


def test_division_of_an_array_by_a_scalar_tensor_is_exact():
    x = np.linspace(1.0, 100.0, 77)
    assert_same(*both(divide, x, np.float64(3.0)))
    assert_same(*both(divide, np.float64(3.0), x))
    assert_same(*both(divide, x.astype(np.float32), np.float32(3.0)))


def divided_in_a_loop(x, n):
    y = x * 0 + 3.0
    i = 0
    while i < n:
        x = x / y + x / 7.0
        i += 1
    return x


def test_division_in_a_loop_is_exact():
    assert_same(*both(divided_in_a_loop, np.array([7.0, 1.1, -5.0]), np.int32(5)))
    assert_same(*both(divided_in_a_loop, np.float32(7.0), np.int32(5)))


# -- floor division and modulo of floats: numpy's values, signed zeros, infinities, NaN ------


def floor_div_mod(x, y):
    return x // y, x % y


@pytest.mark.parametrize("dtype", FLOATS)
def test_floor_division_and_modulo_of_special_floats(dtype):
    special = np.array([7.0, -7.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 5.5, -4.0, 4.0, 0.1, -3.0], dtype)
    x, y = np.repeat(special, len(special)), np.tile(special, len(special))
    assert_same(*both(floor_div_mod, x, y))
    assert_same(*both(floor_div_mod, x, np.asarray(-3.0, dtype)))


# -- unary math of integers: numpy's float dtype ----------------------------------------------


def square_root(x):
    return rt.sqrt(x)


def transcendental(x):
    return rt.exp(x), rt.log(x), rt.sin(x), rt.cos(x), rt.tanh(x)


@pytest.mark.parametrize("dtype", INTS + ["bool"] + FLOATS)
def test_sqrt_is_computed_in_numpy_s_dtype(dtype):
    x = np.array([2, 3, 5, 7, 10, 99, 127, 1], dtype) if dtype != "bool" else np.array([True, False])
    assert_same(*both(square_root, x))
    assert_same(*both(square_root, x[0]))
    if dtype in ("int32", "int64", "uint64"):
        assert_same(lowered(square_root, x), np.sqrt(x))


@pytest.mark.parametrize("dtype", INTS)
def test_transcendentals_of_integers_have_numpy_s_dtype_and_precision(dtype):
    x = np.array([1, 2, 3, 7, 10, 50], dtype)
    for a, b in zip(*both(transcendental, x)):
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, rtol=2 * np.finfo(a.dtype).eps, atol=0)


# -- reductions --------------------------------------------------------------------------------


def means(x):
    return x.mean(), rt.reduce_mean(x, axis=0), rt.reduce_mean(x, axis=1, keepdims=True)


def sums(x):
    return rt.reduce_sum(x), rt.reduce_prod(x, axis=0), rt.cumsum(x, axis=1), rt.reduce_sum(x, axis=1)


@pytest.mark.parametrize("dtype", INTS + ["bool"] + FLOATS)
def test_mean_is_numpy_s(dtype):
    x = np.array([[1, 2, 4], [7, 0, 1], [3, 5, 100]]).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x = x / 4 + 0.5  # sums exact in any order: only the division rounds
    assert_same(*both(means, x))


@pytest.mark.parametrize("dtype", INTS + ["bool"])
def test_sums_and_products_of_small_integers_accumulate_as_numpy(dtype):
    x = np.array([[100, 120, 127], [3, 100, 2], [1, 1, 90]]).astype(dtype)
    assert_same(*both(sums, x))


# -- round to decimals: numpy's scaling, each step in the value's dtype -------------------------


def rounded_2(x):
    return round(x, 2)


def rounded(x):
    return round_(x, 1), round_(x, 2), round_(x, 3), round_(x, -1), round_(x, -2)


@pytest.mark.parametrize("dtype", FLOATS)
def test_round_to_decimals_is_numpy_s(dtype):
    x = np.array([2.675, 1.005, 0.125, -2.5, 0.285, 1.115, 12.345, -0.0049, 155.5, 7.0 / 3.0], dtype)
    assert_same(*both(rounded, x))
    assert_same(*both(rounded_2, x[0]))
    assert_same(lowered(rounded_2, x[0]), np.round(x[0], 2))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "uint64"])
def test_round_of_integers_to_tens(dtype):
    x = values(dtype, positive=np.dtype(dtype).kind == "u")
    info = np.iinfo(dtype)  # (no result out of the dtype's range: numpy leaves that cast to the platform)
    x = x[(x.astype(np.float64) < min(info.max - 100, 2**52)) & (x.astype(np.float64) > max(info.min + 100, -(2**52)))]
    assert_same(*both(rounded, np.concatenate([x, np.array([15, 25, 35, 45, 50, 99], dtype)])))


# -- values of two dtypes put together --------------------------------------------------------


def stacked(x, y):
    return rt.stack([x, y]), rt.concat([x, y], 0)


@pytest.mark.parametrize("dx, dy", [("int16", "float16"), ("int32", "float32"), ("int64", "float64"),
                                    ("uint8", "int8"), ("int64", "uint64")])
def test_stack_and_concat_of_two_dtypes(dx, dy):
    x, y = pair(dx, dy)
    assert_same(*both(stacked, x, y))


# -- the lowered graph as a JAX function ------------------------------------------------------


def test_a_lowered_division_is_exact_under_jit_and_still_vectorizes_and_differentiates():
    from autograph.runtime.backends.jax import jax_function

    graph = ag.function(divide_by_3).get_concrete_function(np.float64(1.0)).execution_graph
    fn = jax_function(graph)
    x = np.arange(1.0, 8.0)
    with jax.enable_x64(True):
        exact = jax.jit(fn)(x)
        batched = jax.jit(jax.vmap(fn))(x)  # (JAX broadcasts the divisor after the lowering: XLA may round)
        grad = jax.grad(fn)(np.float64(1.0))
    np.testing.assert_array_equal(np.asarray(exact), x / 3)
    np.testing.assert_allclose(np.asarray(batched), x / 3, rtol=2 * np.finfo(np.float64).eps)
    assert float(grad) == 1 / 3
