"""A Python int meeting an integer tensor whose dtype cannot hold it.

Comparisons are exact in Python and NumPy 2, whatever the int's size
(``np.uint8(5) < 300`` is True, ``np.int8(-3) == 1000`` False): a narrow
tensor, or a counter a tensor loop made (a weakly typed int32: counters,
``range`` indices, ``len()`` of a staged list), compared with an int out of
its bounds is decided by the int's sign.  Arithmetic of such a counter with
a Python int past int32 is a Python int: a weak int64 (``s + 2**31``).
Arithmetic of a *strong* narrow tensor with an int out of its bounds is
NEP 50's ``OverflowError`` (``np.uint8(5) + 300``), raised when the graph
computes it and only on the paths that do (``x = a; if n > 0: x = a + 300``
is ``a`` for n == 0), with numpy's message and the user's line, in every
mode: the optimizer must not fold it or move it out of a branch or loop.
"""

from __future__ import annotations

import importlib.util
import operator
import re
import warnings

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt

from modes import check, check_python_error, check_raises, i32

DTYPES = ["int8", "uint8", "int16", "uint16", "uint32", "int32", "int64"]
COMPARISONS = {
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
    "eq": operator.eq, "ne": operator.ne,
}
ARITHMETIC = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "floordiv": operator.floordiv,
    "mod": operator.mod, "and": operator.and_, "or": operator.or_, "xor": operator.xor,
    "lshift": operator.lshift, "rshift": operator.rshift, "pow": operator.pow,
}
ORDERS = ["tensor_first", "int_first"]
INT32 = np.iinfo(np.int32)
# Python ints no weak int32 counter can hold (and two it can, next to them)
PAST_INT32 = (INT32.max + 1, INT32.min - 1, 2**63, -2**70, INT32.max, INT32.min)


def apply_in_order(op, order, value, number):
    return op(value, number) if order == "tensor_first" else op(number, value)


def bounds_of(dtype):
    """Ints just out of ``dtype``'s bounds and far out, and its own bounds (in range)."""
    info = np.iinfo(dtype)
    return (info.max + 1, info.min - 1, 2**70, -2**70, info.max, info.min)


def compare_each(op, order, value, numbers):
    results = []
    for number in numbers:
        results.append(apply_in_order(op, order, value, number))
    return tuple(results)


def python_error(f, *args):
    """The message of the error plain Python raises on ``args``, as a regex."""
    with pytest.raises(Exception) as caught:
        f(*args)
    return re.escape(str(caught.value))


# -- A: comparisons are exact ----------------------------------------------------------------


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("op", COMPARISONS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", ["scalar", "array"])
def test_a_narrow_tensor_compares_exactly_with_an_int_out_of_its_bounds(dtype, op, order, shape):
    compare, numbers = COMPARISONS[op], bounds_of(dtype)

    def f(x):
        return compare_each(compare, order, x, numbers)

    info = np.iinfo(dtype)
    values = np.array([info.min, 0, 5, info.max], dtype)
    check(f, values if shape == "array" else values[2])
    check(f, values[0] if shape == "scalar" else values[::-1])


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("op", COMPARISONS)
def test_a_counter_compares_exactly_with_an_int_out_of_int32(op, order):
    compare = COMPARISONS[op]

    def f(n):
        s = 0
        for _ in range(n):
            s += 1
        return compare_each(compare, order, s, PAST_INT32)

    check(f, i32(3))
    check(f, i32(0))


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("op", COMPARISONS)
def test_a_range_index_compares_exactly_with_an_int_out_of_int32(op, order):
    compare = COMPARISONS[op]

    def f(n):
        hits = 0
        for i in range(n):
            if apply_in_order(compare, order, i, 2**31):
                hits += 1
            if apply_in_order(compare, order, i, -2**31 - 1):
                hits += 10
        return hits

    check(f, i32(3))


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("op", COMPARISONS)
def test_the_len_of_a_staged_list_compares_exactly_with_an_int_out_of_int32(op, order):
    compare = COMPARISONS[op]

    def f(n):
        items = []
        for i in range(n):
            items.append(i)
        return compare_each(compare, order, len(items), PAST_INT32)

    check(f, i32(2))


def loop_counter_plus_big(n):
    s = 0
    for _ in range(n):
        s += 1
    return s + 2**31, 2**31 + s, s * 3_000_000_000, s - 2**40, 3_000_000_000 // (s + 1)


def loop_adding_big(n):
    s = 0
    for _ in range(n):
        s += 2**31  # the counter is a weak int64 from the start
    return s


def loop_index_times_big(n):
    total = 0
    for i in range(n):
        total += i * 3_000_000_000
    return total


def test_a_counter_combined_with_an_int_past_int32_is_pythons_int():
    check(loop_counter_plus_big, i32(3))
    check(loop_counter_plus_big, i32(0))
    check(loop_adding_big, i32(3))
    check(loop_index_times_big, i32(4))


def counter_compared_with(n, step):
    s = 0
    while s < n:
        s += step
    return s


def steps_halving(n):
    steps = 0
    while n > 1:
        n = n // 2
        steps += 3
    return steps


def counter_combined_with(n, a):
    s = 0
    while s < n:
        s = s + a  # a strong narrow value: s becomes one in Python too, and wraps as it does
    return s


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "uint32", "bool"])
def test_a_counter_only_compared_with_a_narrow_value_counts_as_a_python_int(dtype):
    """A counter compared with a value of a dtype that wraps takes no dtype from it: Python keeps it
    an int (120 -> 200, past int8's 127), so the graph counts in the default int dtype."""
    if dtype == "bool":
        check(counter_compared_with, np.True_, 100)
        return
    top = int(np.iinfo(dtype).max)
    check(counter_compared_with, np.dtype(dtype).type(top - 2), top // 3 + 1)  # steps past the dtype's max
    check(steps_halving, np.dtype(dtype).type(top))


def test_a_counter_combined_with_a_narrow_value_takes_its_dtype():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # int8 overflow: Python's own, too
        check(counter_combined_with, np.int8(100), np.int8(60))


def widened_counter_next_to_int8(n, a):
    s = 0
    for _ in range(n):
        s += 1
    return (s + 2**31) + a  # still a Python int: out of int8's bounds, as in Python


def test_a_counter_widened_past_int32_stays_a_python_int():
    check_python_error(widened_counter_next_to_int8, i32(2), np.int8(1), exc=OverflowError, match="int8")


def counter_plus_beyond_int64(n):
    s = 0
    for _ in range(n):
        s += 1
    return s + 2**70


def test_a_counter_combined_with_an_int_beyond_int64_is_refused_naming_the_line():
    line = counter_plus_beyond_int64.__code__.co_firstlineno + 4
    check_raises(counter_plus_beyond_int64, i32(3),
                 match=rf"the Python int {2**70} meets a Python number a loop or branch made .* "
                       rf"at .*test_weak_bounds.py:{line}: .*within int64's bounds")


def range_to_big(n):
    s = 0
    last = 0
    for i in range(n, 2**40, 2**38):
        s += 1
        last = i
    return s, last


def range_past_the_bounds_dtype(a):
    total = 0
    for i in range(a, 300):
        total += i
    return total


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_range_with_a_python_int_bound_its_tensor_bound_cannot_hold_counts_as_python(dtype):
    # Python's range() computes with Python ints: no OverflowError, no wrapped bound
    check(range_to_big, np.dtype(dtype).type(3))
    check(range_past_the_bounds_dtype, np.dtype(dtype).type(250 if dtype != "int8" else 120))


def range_down(a):
    count = 0
    for _ in range(a, -100, -1):
        count += 1
    return count


def range_up_to(a):
    count = 0
    for _ in range(a, 3):
        count += 1
    return count


def range_sum(a):
    total = 0
    for i in range(a):
        total += i
    return total


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_range_whose_span_a_narrow_dtype_cannot_hold_counts_as_python(dtype):
    a = np.dtype(dtype).type(100)
    check(range_down, a if np.dtype(dtype).kind == "i" else np.dtype(dtype).type(0))  # int8: 200 items
    check(range_up_to, np.dtype(dtype).type(5))  # no items (uint32 wrapped 3 - 5 to 2**32 - 2)
    check(range_sum, a)  # 4950: an int8 counter wrapped it


# -- B: arithmetic out of a strong tensor's bounds is Python's OverflowError, where it is computed --


def out_of_bounds(dtype):
    info = np.iinfo(dtype)
    return {"above": info.max + 1, "below": info.min - 1}


@pytest.mark.parametrize("side", ["above", "below"])
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("op", ARITHMETIC)
@pytest.mark.parametrize("dtype", DTYPES)
def test_an_int_out_of_a_tensors_bounds_fails_only_on_the_path_that_computes_it(dtype, op, order, side):
    compute, number = ARITHMETIC[op], out_of_bounds(dtype)[side]

    def in_branch(a, n):
        x = a
        if n > 0:
            x = apply_in_order(compute, order, a, number)
        return x

    def in_loop(a, n):
        x = a
        for _ in range(n):
            x = apply_in_order(compute, order, a, number)  # loop-invariant: must not be hoisted
        return x

    line = apply_in_order.__code__.co_firstlineno + 1  # the user's line computing it
    a = np.dtype(dtype).type(5)
    message = python_error(in_branch, a, i32(1))  # numpy's own: "Python integer 300 out of bounds for uint8"
    for f in (in_branch, in_loop):
        check(f, a, i32(0))
        check(f, np.array([1, 2], dtype), i32(0))
        check_python_error(f, a, i32(2), exc=OverflowError, match=message)
    check_python_error(in_branch, a, i32(1), exc=OverflowError, match=rf"{message}.*test_weak_bounds.py:{line}\b")


def unused_out_of_bounds(a):
    b = a + 1000  # noqa: F841 -- Python raises here even though b is never used
    return a


def test_an_unused_out_of_bounds_result_still_fails():
    check_python_error(unused_out_of_bounds, np.uint8(5), exc=OverflowError, match="out of bounds for uint8")


def out_of_bounds_in_else(a, n):
    if n > 0:
        x = a
    else:
        x = a - 1000
    return x


def test_an_out_of_bounds_int_in_the_else_branch():
    check(out_of_bounds_in_else, np.int8(5), i32(1))
    line = out_of_bounds_in_else.__code__.co_firstlineno + 4
    check_python_error(out_of_bounds_in_else, np.int8(5), i32(0), exc=OverflowError,
                       match=rf"Python integer 1000 out of bounds for int8: .* int8 value a\b.*"
                             rf"test_weak_bounds.py:{line}\b.*rt\.cast")


def test_an_eager_op_raises_numpys_overflow_error():
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for uint8"):
        rt.add(np.uint8(5), 300)
    assert rt.less(np.uint8(5), 300) and not rt.equal(np.int64(5), 2**70)


JAX_MODES = {"jax": {"backend": "jax"}} if importlib.util.find_spec("jax") is not None else {}


@pytest.mark.skipif(not JAX_MODES, reason="JAX is not installed")
def test_the_jax_backend_agrees():
    def f(a, n):
        x = a
        if n > 0:
            x = a + 300
        s = 0
        for _ in range(n):
            s += 1
        return x, a < 300, 1000 == a, s > 2**31, s + 2**31

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = ag.function(f, backend="jax")
        got = g(np.uint8(5), i32(0))
        assert [type(v) for v in got] == [np.uint8, np.bool_, np.bool_, np.bool_, np.int64]
        assert [v.item() for v in got] == [5, True, False, False, 2**31]
        with pytest.raises(OverflowError, match="Python integer 300 out of bounds for uint8"):
            g(np.uint8(5), i32(1))
