"""Tensors answer the unambiguous part of numpy's array interface, with numpy's dtypes.

Every case runs the plain function on numpy values and ``ag.function`` of it
in the three execution modes (interpreter, ``optimize=False``,
``jit_compile=True``).
"""

from __future__ import annotations

import numpy as np
import pytest

import autograph as ag
from modes import check, check_raises, i32

MATRICES = [np.arange(6, dtype=np.int32).reshape(2, 3), np.linspace(-1, 2, 6, dtype=np.float32).reshape(3, 2),
            np.array([[True, False], [True, True]]), np.arange(4, dtype=np.uint8).reshape(2, 2)]


def reductions(x):
    return x.sum(), x.mean(), x.max(), x.min(), x.prod(), x.any(), x.all(), x.argmax()


def reductions_on_axes(x):
    return x.sum(axis=0), x.mean(axis=1, keepdims=True), x.max(axis=-1), x.min(0), x.prod(axis=(0, 1)), x.argmax(axis=1)


@pytest.mark.parametrize("x", MATRICES, ids=lambda x: str(x.dtype))
def test_reductions_have_numpys_dtypes(x):
    check(reductions, x)  # int32.sum() is int64, int .mean() float64, bool .sum() int64, uint8 .sum() uint64
    check(reductions_on_axes, x)


def test_a_reduction_with_a_dtype():
    def f(x):
        return x.sum(dtype=np.float32), x.mean(dtype=np.float64), x.prod(dtype=np.int8)

    check(f, np.arange(1, 5, dtype=np.int32))


def test_a_reduction_with_an_unsupported_argument_is_refused():
    def f(x):
        return x.sum(where=x > 0)

    check_raises(f, np.ones(3, np.float32), match=r"\.sum\(\) of a tensor at .*:\d+ does not take where")


def reshaped(x):
    return (x.astype(np.float32), x.astype("int8"), x.reshape(-1), x.reshape(3, 2), x.reshape((1, 6)), x.T,
            x.transpose(), x.transpose(1, 0), x.transpose((1, 0)), x.size, x.ndim, x.copy())


def test_shape_methods_and_attributes():
    check(reshaped, np.arange(6, dtype=np.int32).reshape(2, 3))


def test_size_of_an_unknown_shape_is_a_python_int_when_the_graph_runs():
    def f(x):
        return x.size * 2

    g = ag.function(f, input_signature=[ag.runtime.TensorSpec((None, 3), "float32")])
    assert g(np.ones((4, 3), np.float32)) == 24


def itemized(x):
    return x.item(), x[0].item(), x.reshape(1).item()


@pytest.mark.parametrize("x", [np.float32([2.5]), np.int32([7]), np.array([True])])
def test_item_gives_the_python_number(x):
    check(itemized, x)


def test_item_of_several_elements_is_numpys_value_error():
    def f(x):
        return x.item()

    check_raises(f, np.ones(3, np.float32), exc=ValueError, match="can only convert an array of size 1")


def test_tolist_is_refused_with_advice():
    def f(x):
        return x.tolist()

    check_raises(f, np.ones(3, np.float32), match=r"\.tolist\(\) of the symbolic tensor .* at .*:\d+: .*call \.tolist\(\) on the result")


def test_copy_is_a_value():
    def f(x):
        y = x.copy()
        y += 1
        return x, y

    check(f, np.ones(3, np.float32))


def shifted(x, s):
    return x << s, x >> s, 1 << s, x << 2, 64 >> s


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64])
def test_shift_operators(dtype):
    check(shifted, np.array([1, 8, 64], dtype), dtype(2))


def test_augmented_shifts():
    def f(x, s):
        x <<= s
        x >>= 1
        return x

    check(f, i32([1, 2, 3]), i32(3))


def test_shift_of_a_float_is_numpys_type_error():
    check_raises(shifted, np.ones(2, np.float32), np.int32(1), exc=TypeError, match="left_shift")


def powered(x, y):
    return x ** y


def test_power_with_a_negative_exponent():
    check(powered, np.float32(2), i32(-2))
    check(powered, i32(2), i32(3))
    with pytest.raises(ValueError):
        powered(i32(2), i32(-1))
    for mode in ({}, {"optimize": False}, {"jit_compile": True}):
        with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
            ag.function(powered, **mode)(i32(2), i32(-1))


def test_power_of_python_ints_made_in_a_loop():
    def f(n):
        i = 0
        for _ in range(n):
            i += 1
        return i ** -1, i ** 2, 2 ** i

    check(f, i32(2))

    def unknown_sign(n, k):
        i = 0
        for _ in range(n):
            i += 1
            k -= 1
        return i ** k

    check(unknown_sign, i32(2), 3)
    with pytest.raises(ValueError, match=r"`x \*\* y` of Python ints at .*:\d+ with a negative y: Python gives a float"):
        ag.function(unknown_sign)(i32(2), 0)  # Python gives 0.25: refused, never another number


def test_methods_of_a_python_number_stand_in_are_pythons():
    def f(n):
        i = 0
        for _ in range(n):
            i += 1
        return i.sum()

    check_raises(f, i32(2), exc=AttributeError, match="'int' object has no attribute 'sum'")


def test_methods_of_a_staged_list_are_a_lists():
    def f(n):
        acc = []
        for i in range(n):
            acc.append(i)
        return acc.sum()

    check_raises(f, i32(2), exc=AttributeError, match="'list' object has no attribute 'sum'")


def test_another_numpy_method_is_an_attribute_error_with_advice():
    def f(x):
        return x.cumprod()

    check_raises(f, np.ones(3, np.float32), exc=AttributeError,
                 match=r"numpy's ndarray.cumprod is not available on a symbolic tensor at .*:\d+ .*rt.py_function")


_RNG = np.random.default_rng(7)
SPREADS = [
    _RNG.normal(3.0, 2.0, (5, 7)).astype(np.float32),
    _RNG.normal(-1.0, 1e3, (4, 3, 6)),
    _RNG.normal(0.5, 0.1, (9000,)).astype(np.float16),  # numpy sums float16 in float16 here (not in float32, as mean)
    _RNG.integers(-50, 50, (6, 5), dtype=np.int32),
    _RNG.integers(0, 250, (3, 4), dtype=np.uint8),
    _RNG.integers(-2**40, 2**40, (10000,), dtype=np.int64),  # buffered float64 sums of integers, as np.mean
    np.array([[True, False, True], [False, False, True]]),
    np.float32(2.5) * np.ones((2, 3), np.float32),
]


def spreads(x):
    return x.var(), x.std(), x.var(ddof=1), x.std(axis=0), x.var(axis=-1, keepdims=True), x.std(axis=0, ddof=1)


@pytest.mark.parametrize("x", SPREADS, ids=lambda x: f"{x.dtype}{x.shape}")
def test_var_and_std_are_numpys_to_the_bit(x):
    check(spreads, x)


def test_var_over_several_axes_and_of_unknown_dimensions():
    def f(x):
        return x.var(axis=(0, 2)), x.std(axis=(1, 2), keepdims=True), x.var(ddof=2)

    x = _RNG.normal(0.0, 3.0, (3, 4, 5)).astype(np.float32)
    check(f, x)
    check(f, x, input_signature=[ag.runtime.TensorSpec((None, 4, None), "float32")])


def test_var_with_no_degrees_of_freedom_is_numpys_inf_or_nan():
    def f(x):
        return x.var(ddof=3), x.std(axis=0, ddof=2)

    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):  # numpy's "Degrees of freedom <= 0"
        check(f, np.float32([[1.0, 2.0], [4.0, 8.0]]))


def test_var_takes_no_dtype_or_out():
    def f(x):
        return x.var(dtype=np.float64)

    check_raises(f, np.ones(3, np.float32), match=r"\.var\(\) of a tensor at .*:\d+ does not take dtype")


def test_var_and_std_have_gradients():
    def loss(x):
        return x.std() + (x * 2.0).var(axis=0, ddof=1).sum()

    x = _RNG.normal(0.0, 1.0, (4, 3))
    grad = ag.grad(loss)(x)
    eps, numeric = 1e-6, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        numeric[i] = (loss(up) - loss(down)) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)


def more_methods(x):
    return (x.argmin(), x.argmin(axis=0), x.argmin(axis=-1), x.ravel(), x.flatten(), x.cumsum(), x.cumsum(axis=1),
            x.clip(1, 4), x.clip(max=2), x.clip(min=3), x.reshape(1, -1).squeeze(), x[None].squeeze(axis=0))


@pytest.mark.parametrize("x", MATRICES[:2] + [MATRICES[3]], ids=lambda x: str(x.dtype))
def test_more_methods_are_numpys(x):
    check(more_methods, x)


def test_argmin_picks_the_first_of_equal_minima_and_nan():
    def f(x):
        return x.argmin(), x[:2].argmin()

    check(f, np.float32([3.0, 1.0, 1.0, np.nan, 1.0]))
    check(f, np.float32([2.0, 1.0, 1.0, 0.5]))


def test_argmin_of_nothing_is_numpys_value_error():
    def f(x):
        return x.argmin()

    check_raises(f, np.ones(0, np.float32), exc=ValueError, match="argmin")


def test_round_dot_and_clip_with_floats():
    def f(x, v):
        return x.round(), x.round(1), x.round(-1), x.dot(x.T), v.dot(v), v.dot(2.0), x.dot(v[:2]), x.clip(0.25, 1.5)

    check(f, np.float32([[1.25, -2.55], [12.5, 0.5]]), np.float64([1.5, -2.0, 3.25]))


def test_dot_of_higher_ranks_is_refused():
    def f(x):
        return x.dot(x)

    check_raises(f, np.ones((2, 2, 2), np.float32), match=r"\.dot\(\) of tensors of rank 3 and 3 at .*:\d+")


def test_clip_needs_a_bound():
    def f(x):
        return x.clip()

    check_raises(f, np.ones(3, np.float32), exc=ValueError, match="One of max or min must be given")


def test_methods_in_a_tensor_loop():
    def normalize(x, n):
        for _ in range(n):
            x = (x - x.mean(axis=0)) / (x.std(axis=0) + 1.0)
        return x, x.argmin(axis=1), x.var()

    check(normalize, _RNG.normal(2.0, 3.0, (6, 3)).astype(np.float32), i32(3))


@pytest.mark.parametrize("x, low, high", [
    (np.int8([1, -5, 100]), 0, 300), (np.int8([1, -5, 100]), -300, 50), (np.uint8([1, 5, 200]), -1, 100),
    (np.int8([1, -5, 100]), None, 300), (np.int32([1, 5, 3]), 1.5, 4.0),
])
def test_clip_ignores_a_python_int_bound_beyond_the_dtype_as_numpy_does(x, low, high):
    check(lambda t: t.clip(low, high), x)


def test_clip_to_a_bound_the_dtype_cannot_hold_is_numpys_overflow_error():
    check_raises(lambda t: t.clip(300, 400), np.int8([1, 2]), exc=OverflowError, match="300")


def test_a_list_of_axes_is_numpys_type_error():
    check_raises(lambda t: t.sum(axis=[0, 1]), np.ones((2, 2), np.float32), exc=TypeError, match="a tuple of axes")
    check_raises(lambda t: t.var(axis=[0]), np.ones((2, 2), np.float32), exc=TypeError, match="a tuple of axes")
