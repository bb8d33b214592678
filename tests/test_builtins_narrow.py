"""max/min/sum next to narrow dtypes, and narrow indices under JAX: Python's value and type, or a refusal.

A Python int beside an int8/uint8/int16/uint16/uint32 tensor is where a
graph's one dtype and Python's answer part ways: Python's ``max(102, a)``
is the int 102 or the int8 ``a``, and what follows wraps only in the second
case.  Each case runs the plain function and ``ag.function`` of it in the
three execution modes; the result must be Python's (value and dtype), or an
``ag.TracingError`` quoting the user's line, saying the dtype would depend
on the values and how to fix it (``runtime/operators/tensor_builtins.py``
``extremum``, ``comprehensions.sum_``).  The JAX backend must not wrap a
narrow index when it checks or normalizes it (``backends/jax/checks.py``).
"""

from __future__ import annotations

import importlib.util
import inspect
import re

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from modes import assert_same, check, check_raises, modes

NARROW = ["int8", "uint8", "int16", "uint16", "uint32"]
WIDE_INTS = ["int32", "int64"]
FLOATS = ["float32", "float64"]
DTYPES = NARROW + WIDE_INTS + FLOATS


def _line(fn, text):
    """``file:line`` of the line of ``fn`` holding ``text``, as a regex."""
    lines, first = inspect.getsourcelines(fn)
    number = first + next(i for i, line in enumerate(lines) if text in line)
    return rf"test_builtins_narrow\.py:{number}\b"


def max_first(a):
    return max(102, a) + 123


def max_second(a):
    return max(a, 102) + 123


def min_first(a):
    return min(5, a) - 10


def min_second(a):
    return min(a, 5) - 10


# -- D: a run-time choice between a Python int and a tensor --------------------------------------


@pytest.mark.parametrize("dtype", NARROW)
@pytest.mark.parametrize("fn, statement", [(max_first, "max(102, a)"), (max_second, "max(a, 102)"),
                                           (min_first, "min(5, a)"), (min_second, "min(a, 5)")])
def test_a_python_int_beside_a_narrow_tensor_is_refused_naming_the_line(fn, statement, dtype):
    which = statement[:3]
    where = _line(fn, statement)
    check_raises(fn, np.dtype(dtype).type(3), match=(
        rf"{which}\(\) at .*{where}: {which}\(\) of an? {dtype} value and a Python int "
        rf"\(`return {re.escape(statement)}.*`\).*its dtype would depend on their values.*"
        rf"{dtype} arithmetic wraps.*Cast the operands to one dtype first"))


@pytest.mark.parametrize("dtype", WIDE_INTS)
@pytest.mark.parametrize("fn", [max_first, max_second, min_first, min_second])
@pytest.mark.parametrize("value", [-2, 3, 200])
def test_a_python_int_beside_an_int32_or_int64_tensor_joins_it(fn, dtype, value):
    check(fn, np.dtype(dtype).type(value))  # Python's value; the Python int joins the tensor's dtype (NEP 50)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn", [max_first, max_second, min_first, min_second])
@pytest.mark.parametrize("value", [-2.5, 3.0, 200.0])
def test_a_python_int_beside_a_float_tensor_takes_its_dtype(fn, dtype, value):
    # Python gives the int where it chooses it; NEP 50 (README): the tensor's dtype, the same value
    x = np.dtype(dtype).type(value)
    expected = fn(x)
    for name, g in modes(fn):
        got = g(x)
        assert got == expected and got.dtype == np.dtype(dtype), (name, got, expected)


def max_point_one(x):
    return max(x, 0.1) * 2


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("value", [0.05, 0.5])
def test_a_python_float_beside_a_float_tensor_is_not_refused(dtype, value):
    x = np.dtype(dtype).type(value)
    expected = np.dtype(dtype).type(max_point_one(x))  # 0.1 * 2 in Python; the tensor's dtype in the graph
    for name, g in modes(max_point_one):
        got = g(x)
        assert got == expected and got.dtype == np.dtype(dtype), (name, got, expected)


def max_of_appended(a, n):
    acc = [5]
    for i in range(n):
        acc.append(a)
    return max(acc) + 123, min(acc) - 10


@pytest.mark.parametrize("dtype", WIDE_INTS)
@pytest.mark.parametrize("n", [0, 1])
@pytest.mark.parametrize("value", [-2, 9])
def test_max_of_a_staged_list_of_python_ints_and_wide_values_is_pythons(dtype, n, value):
    check(max_of_appended, np.dtype(dtype).type(value), np.int32(n))


# -- E: a choice the dtype's bounds decide when tracing -----------------------------------------


def _outside(dtype):
    info = np.iinfo(dtype)
    return int(info.max) + 135, int(info.min) - 7


def extremes(a, high, low):
    return min(high, a), min(a, high), max(low, a), max(a, low), max(high, a), max(a, high), min(low, a), min(a, low)


def min_then_wrap(a):
    return min(237, a) + 1, max(a, -200) - 1


@pytest.mark.parametrize("dtype", NARROW + WIDE_INTS)
@pytest.mark.parametrize("value", ["lowest", "zero", "highest"])
def test_a_python_int_out_of_the_dtypes_bounds_is_compared_exactly(dtype, value):
    info = np.iinfo(dtype)
    x = np.dtype(dtype).type({"lowest": info.min, "zero": 0, "highest": info.max}[value])
    high, low = _outside(dtype)
    fn = lambda a: extremes(a, high, low)  # noqa: E731
    expected = fn(x)
    for name, g in modes(fn):
        for e, got in zip(expected, g(x), strict=True):  # (np.asarray of an int past int64 is an object array)
            assert got == e and (got.dtype == e.dtype if isinstance(e, np.generic) else
                                 isinstance(got, (int, np.integer))), (name, got, e)


@pytest.mark.parametrize("value", [-128, -2, 127])
def test_min_of_an_int_above_an_int8_is_the_int8_and_wraps_as_in_python(value):
    check(min_then_wrap, np.int8(value))


def at_the_bound(a, high):
    return max(high, a), min(-high - 1, a)  # `a > high` never holds: Python keeps the first operand


@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_a_python_int_at_the_dtypes_bound_is_a_choice_known_when_tracing(dtype):
    info = np.iinfo(dtype)
    check(lambda a: at_the_bound(a, int(info.max)), np.dtype(dtype).type(info.max))


def with_nan(a):
    return max(a, float("nan")), max(float("nan"), a), min(a, float("nan")), min(float("nan"), a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_nan_python_float_never_compares(dtype):
    x = np.dtype(dtype).type(3)
    expected = with_nan(x)  # (x, nan, x, nan): the first operand, as nothing compares with NaN
    for name, g in modes(with_nan):
        for e, got in zip(expected, g(x), strict=True):
            if type(e) is float:
                assert np.isnan(got) and np.asarray(got).dtype == np.float64, (name, got)
            else:
                assert got == e and got.dtype == e.dtype, (name, got, e)


# -- F: sum() whose type would depend on the length, or on which items are Python ints ------------


def sum_minus_one(v):
    return (sum(y % 5 for y in v) - 1) % 97


def sum_of_appended(a, n, first=200):
    acc = [first, 100]
    for i in range(n):
        acc.append(a)
    return sum(acc)


UNKNOWN_LENGTH = lambda dtype: [rt.TensorSpec((None,), dtype)]  # noqa: E731


@pytest.mark.parametrize("dtype", NARROW)
@pytest.mark.parametrize("items", [[], [7, 9]])
def test_sum_of_narrow_items_of_unknown_length_is_refused(dtype, items):
    check_raises(sum_minus_one, np.array(items, dtype), input_signature=UNKNOWN_LENGTH(dtype), match=(
        rf"sum\(\) at .*{_line(sum_minus_one, 'sum(')} \(`return \(sum\(y % 5 for y in v\).*`\).*"
        rf"its dtype would depend on its length.*{dtype}.*Cast the items"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_of_a_static_empty_tensor_is_the_start(dtype):
    check(lambda v: sum(v) - 1, np.zeros(0, dtype))


@pytest.mark.parametrize("dtype", NARROW)
def test_sum_of_a_static_tensor_is_in_its_dtype(dtype):
    check(lambda v: sum(v) - 1, np.array([3, 4], dtype))


@pytest.mark.parametrize("dtype", NARROW + WIDE_INTS)
@pytest.mark.parametrize("items", [[], [7, 9]])
def test_sum_of_a_generator_over_a_tensor_of_static_length_is_pythons(dtype, items):
    check(sum_minus_one, np.array(items, dtype))  # one item per row: the comprehension's length is static
    check(lambda v: (len([y for y in v]), sum([y * 2 for y in v]) - 1), np.array(items, dtype))


@pytest.mark.parametrize("dtype", WIDE_INTS + FLOATS)
@pytest.mark.parametrize("items", [[], [7, 9]])
def test_sum_of_wide_items_of_unknown_length_keeps_pythons_value(dtype, items):
    v = np.array(items, dtype)
    expected = sum_minus_one(v)
    for name, g in modes(sum_minus_one, input_signature=UNKNOWN_LENGTH(dtype)):
        got = g(v)
        assert got == expected and got.dtype == np.dtype(dtype), (name, got, expected)


def sum_of_small_appended(a, n):
    acc = [20, 100]  # (ints every narrow dtype holds)
    for i in range(n):
        acc.append(a)
    return sum(acc)


def running_sum_of_items(a, n):
    acc = [125]
    for i in range(n):
        acc.append(a)
    total = 114
    for item in acc:
        total = (total + item) % 97  # 114 + 125 is 239 in Python; an int8 item would wrap
    return total


@pytest.mark.parametrize("dtype", NARROW)
@pytest.mark.parametrize("n", [0, 1])
@pytest.mark.parametrize("fn", [max_of_appended, sum_of_small_appended, running_sum_of_items])
def test_a_staged_list_of_python_ints_and_narrow_values_is_refused(fn, dtype, n):
    """Python keeps each item's type (125 an int, the appended int8 values int8); one staged list of
    one dtype cannot: refused where the list is staged, naming it and how to fix it."""
    check_raises(fn, np.dtype(dtype).type(3), np.int32(n), match=(
        rf"the staged list 'acc' of the for loop at .*{_line(fn, 'for i in range(n)')} holds Python numbers "
        rf"beside {dtype} values, and an item of it is read at .*Make the items one kind"))


def last_times(a, n, first):
    acc = [first]
    for i in range(n):
        acc.append(a)
    return acc[-1] * 100


@pytest.mark.parametrize("dtype", NARROW)
@pytest.mark.parametrize("fn", [sum_of_appended, last_times])
def test_a_staged_list_of_narrow_values_and_an_int_they_cannot_hold_is_refused(dtype, fn):
    """Widened to hold the int, the list's items would lose their wrapping dtype (Python: int8(3) * 100
    wraps to 44; an int64 item gives 300): refused, naming the list and saying how to fix it."""
    big = int(np.iinfo(dtype).max) + 1
    loop = _line(fn, "for i in range(n)")
    check_raises(fn, np.dtype(dtype).type(3), np.int32(2), big, match=(
        rf"the list 'acc' of the for loop at .*{loop} holds the Python int {big} beside {dtype} values, which "
        rf"{dtype} cannot hold.*Start the list from values of one dtype"))


@pytest.mark.parametrize("dtype", WIDE_INTS)
@pytest.mark.parametrize("n", [0, 2])
def test_sum_of_a_staged_list_of_python_ints_and_wide_values_is_pythons(dtype, n):
    check(sum_of_appended, np.dtype(dtype).type(3), np.int32(n))


# -- G: a narrow index under the JAX backend -----------------------------------------------------

HAS_JAX = importlib.util.find_spec("jax") is not None
INDEX_DTYPES = ["int8", "uint8", "int16", "uint16", "uint32", "int32", "int64", "uint64"]


def read(v, a):
    return v[a]


def read_row(v, a):
    return v[a, 0]


def write(v, a):
    v[a] = 7
    return v


def jax_run(fn, *args):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", ag.AutoGraphWarning)  # no quiet fallback to numpy
        return ag.function(fn, backend="jax")(*args)


@pytest.mark.skipif(not HAS_JAX, reason="the JAX backend needs JAX")
@pytest.mark.parametrize("dtype", INDEX_DTYPES)
@pytest.mark.parametrize("fn", [read, read_row, write])
@pytest.mark.parametrize("size, index", [(3, 2), (3, 0), (300, 255), (300, -3), (300, -299)])
def test_a_narrow_index_is_checked_and_normalized_without_wrapping_under_jax(fn, dtype, size, index):
    info = np.iinfo(dtype)
    if not info.min <= index <= info.max:
        pytest.skip(f"{dtype} cannot hold {index}")
    v = np.arange(size, dtype=np.int32).reshape((size, 1) if fn is read_row else (size,))
    a = np.dtype(dtype).type(index)
    assert_same(fn(v.copy(), a), jax_run(fn, v.copy(), a))


@pytest.mark.skipif(not HAS_JAX, reason="the JAX backend needs JAX")
@pytest.mark.parametrize("dtype", ["uint8", "int8", "uint32"])
def test_a_narrow_index_out_of_range_is_pythons_index_error_under_jax(dtype):
    with pytest.raises(IndexError, match="index 3 is out of bounds"):
        jax_run(read, np.arange(3, dtype=np.int32), np.dtype(dtype).type(3))
