"""Python's builtins on tensors give Python's answer (operand, dtype) or raise Python's error.

Every case runs the plain function and ``ag.function`` of it in the three
execution modes (interpreter, ``optimize=False``, ``jit_compile=True``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autograph as ag
from modes import check, check_python_error, check_raises, i32, modes

f32 = np.float32
NAN = f32("nan")


def max2(a, b):
    return max(a, b)


def min2(a, b):
    return min(a, b)


def max3(a, b, c):
    return max(a, b, c)


def max_of(x):
    return max(x)


def min_of(x):
    return min(x)


def check_same_bits(f, *args):
    """Like ``check``, comparing NaNs and the sign of zeros too (Python's choice of operand)."""
    expected = f(*args)
    for name, g in modes(f):
        got = g(*args)
        assert type(got) is type(expected) and got.dtype == expected.dtype, (name, got, expected)
        assert np.asarray(got).tobytes() == np.asarray(expected).tobytes(), (name, got, expected)


@pytest.mark.parametrize("a, b", [(3, 7.5), (9, 7.5), (NAN, 1), (1, NAN), (NAN, NAN), (-0.0, 0.0), (0.0, -0.0)])
def test_max_and_min_keep_pythons_choice_of_operand(a, b):
    check_same_bits(max2, f32(a), f32(b))
    check_same_bits(min2, f32(a), f32(b))
    check_same_bits(max3, f32(a), f32(b), f32(1))


def test_max_of_ints_and_python_numbers():
    check(max2, i32(3), i32(9))
    check(max2, i32(3), 5)  # a Python int joins the int32: NEP 50
    # Python gives the int 1 here; a Python number takes the tensor's dtype (NEP 50, README): float32 1.0
    assert ag.function(min2)(f32(2.5), 1) == 1 and ag.function(min2)(f32(2.5), 1).dtype == np.float32


def test_max_of_two_dtypes_is_refused_as_its_dtype_would_depend_on_the_values():
    # Python gives the float32 7.5 here and the int32 9 for (9, 7.5): no one graph dtype
    check_raises(max2, i32(3), f32(7.5), match=r"max\(\) at .*test_builtins_semantics.py:\d+: max\(\) of float32 and int32")
    check_raises(min2, i32(3), 2.5, match=r"min\(\) of an int32 value and a Python float")


@pytest.mark.parametrize("x", [[3, 1, 2], [1.0, float("nan"), 5.0], [float("nan"), 1.0], [-1.0, -1.0],
                               [0.0, -0.0], [-0.0, 0.0, -1.0]])
def test_max_of_a_vector_is_the_element_python_finds(x):
    dtype = np.float32 if any(isinstance(v, float) for v in x) else np.int32
    check_same_bits(max_of, np.array(x, dtype))
    check_same_bits(min_of, np.array(x, dtype))


def test_max_of_an_empty_vector_is_pythons_value_error():
    check_python_error(max_of, np.zeros(0, np.float32), exc=ValueError, match=r"max\(\) iterable argument is empty")
    unknown = ag.function(max_of, input_signature=[ag.runtime.TensorSpec((None,), "float32")])
    with pytest.raises(ValueError, match=r"max\(\) at .*:\d+: max\(\) iterable argument is empty"):
        unknown(np.zeros(0, np.float32))  # checked when the graph runs
    assert unknown(np.array([2, 5], np.float32)) == 5


def test_max_of_a_matrix_is_refused():
    check_raises(max_of, np.ones((2, 2), np.float32), match=r"compares its rows as Python bools")


def as_int(x):
    return int(x)


@pytest.mark.parametrize("x", [2.7, -2.7, 0.0, 1e10])
def test_int_of_a_float_truncates(x):
    check(as_int, f32(x))
    check(as_int, np.float64(x))


def test_int_of_inf_and_nan_raise_as_python():
    check_python_error(as_int, f32("inf"), exc=OverflowError, match=r"int\(\) at .*:\d+: cannot convert float infinity")
    check_python_error(as_int, np.float64("-inf"), exc=OverflowError, match="cannot convert float infinity")
    check_python_error(as_int, NAN, exc=ValueError, match="cannot convert float NaN to integer")


def test_int_of_a_float_beyond_int64_is_refused_when_the_graph_runs():
    with pytest.raises(OverflowError, match="does not fit in int64"):
        ag.function(as_int)(np.float64(1e30))  # Python gives a big int; a graph has no unbounded ints


def test_int_of_an_array_is_numpys_type_error():
    check_raises(as_int, np.ones(2, np.float32), exc=TypeError, match="only 0-dimensional arrays")


def rounded(x):
    return round(x)


def rounded_to(x):
    return round(x, 1), round(x, -1)


@pytest.mark.parametrize("x", [2.5, 3.5, -2.5, 2.46, 14.0])
def test_round_gives_pythons_int_and_numpys_dtype_with_digits(x):
    check(rounded, f32(x))  # a Python int: returned as an int64 (README)
    check(rounded_to, f32(x))  # numpy: np.float32
    check(rounded_to, np.float64(x))


def test_round_of_ints_and_of_inf():
    check(rounded, i32(7))
    check(rounded_to, i32(37))
    check_python_error(rounded, f32("inf"), exc=OverflowError, match="cannot convert float infinity")


def test_round_of_a_python_float_with_digits_rounds_as_python():
    def counter_rounded(n):
        x = 0.0
        for _ in range(n):
            x += 2.675
        return round(x, 2)  # Python's correctly rounded 2.67 (numpy's scaling gives 2.68)

    check(counter_rounded, i32(1))


def divided(a, b):
    return divmod(a, b)


@pytest.mark.parametrize("a, b", [(7, 2), (-7, 2), (7, -2)])
def test_divmod_follows_numpy(a, b):
    check(divided, i32(a), i32(b))
    check(divided, f32(a), f32(b))
    check(divided, i32(a), b)


def as_bool(x):
    return bool(x)


def negated(x):
    return not x


@pytest.mark.parametrize("x", [[3], [0.0], np.float32(2), np.float32(0)])
def test_truth_of_one_element_is_numpys(x):
    value = np.asarray(x, np.float32) if isinstance(x, list) else x
    check(as_bool, value)
    check(negated, value)


def test_truth_of_an_ambiguous_array_raises_as_numpy():
    for f in (as_bool, negated):
        check_python_error(f, np.array([1, 2], np.int32), exc=ValueError, match="truth value of an array")
        check_python_error(f, np.zeros(0, np.float32), exc=ValueError, match="truth value of an empty array")


def ranged(a, s):
    t = 0
    for i in range(0, a, s):
        t += i
    return t


@pytest.mark.parametrize("a, s", [(5, 2), (5, -1), (-5, -2), (0, 3)])
def test_range_with_a_tensor_step(a, s):
    check(ranged, i32(a), i32(s))


def test_range_with_a_zero_tensor_step_raises_as_python():
    check_python_error(ranged, i32(5), i32(0), exc=ValueError, match=r"range\(\) arg 3 must not be zero")


def reversed_range(a, b, s):
    out = 0
    for i in reversed(range(a, b, s)):
        out = out * 10 + i
    return out


@pytest.mark.parametrize("a, b, s", [(0, 4, 1), (1, 8, 3), (9, 0, -2), (3, 3, 1), (5, 1, 1)])
def test_reversed_range_with_tensor_bounds(a, b, s):
    check(reversed_range, i32(a), i32(b), i32(s))


def test_reversed_tensor():
    def reversed_rows(x):
        out = x[0] * 0
        for row in reversed(x):
            out = out * 10 + row
        return out

    check(reversed_rows, i32([1, 2, 3]))
    check(reversed_rows, i32([[1, 2], [3, 4]]))


def introspect(x):
    return (isinstance(x, np.ndarray), isinstance(x, np.floating), isinstance(x, (int, np.float32)),
            type(x) is np.float32, type(x) is np.ndarray, type(x).__name__)


@pytest.mark.parametrize("x", [f32(1), np.ones(3, np.float32), i32(2), np.ones((2, 2), np.int32)])
def test_isinstance_and_type_answer_as_numpys_types(x):
    check(introspect, x)


def test_isinstance_of_a_python_number_made_in_a_loop():
    def counter(n):
        i = 0
        for _ in range(n):
            i += 1
        return isinstance(i, int), type(i) is int, isinstance(i, np.integer)

    check(counter, i32(3))


def test_branching_on_isinstance_takes_pythons_branch():
    def f(x):
        if isinstance(x, np.ndarray):
            return x.sum()
        return x * 2

    check(f, np.ones(3, np.float32))
    check(f, f32(4))


def test_str_of_a_tensor_warns_and_points_to_rt_print():
    def f(x):
        label = f"x={x}"
        other = "%s" % x
        del label, other
        return x + 1

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ag.function(f)(f32(1))
    messages = [str(w.message) for w in seen if issubclass(w.category, ag.TracingWarning)]
    assert len(messages) == 2 and all("use rt.print" in m for m in messages), messages
    assert all(w.filename.endswith("test_builtins_semantics.py") for w in seen if issubclass(w.category, ag.TracingWarning))


def test_a_format_spec_of_a_tensor_is_refused():
    def f(x):
        return f"{x:.2f}"

    check_raises(f, f32(1), match=r"the format '\.2f' of the symbolic tensor")


def test_python_numbers_divided_by_zero_raise_as_python():
    def average(n):
        total = 0.0
        count = 0
        for _ in range(n):
            total += 1.5
            count += 1
        return total / count, total // 1, count % 3

    check(average, i32(4))
    check_python_error(average, i32(0), exc=ZeroDivisionError, match=r"float division by zero \(at .*:\d+\)")

    def counted_divmod(n):
        c = 0
        for _ in range(n):
            c += 1
        return divmod(7, c)

    check(counted_divmod, i32(2))
    check_python_error(counted_divmod, i32(0), exc=ZeroDivisionError, match="integer division or modulo by zero")


def test_numpy_values_divided_by_zero_follow_numpy():
    def divided_by(x, y):
        return x / y

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check(divided_by, f32(1), f32(0))  # numpy: inf (with a warning), not an error


# -- a list or tuple times a tensor -------------------------------------------------------------

def repeat_list(n):
    return [0] * n


def repeat_tuple_on_the_right(n):
    return n * (1, 2)


def list_times_float(x):
    return [1, 2] * x


def list_times_vector(v):
    return [1] * v


@pytest.mark.parametrize("f", [repeat_list, repeat_tuple_on_the_right])
def test_a_sequence_repeated_by_an_int_tensor_is_refused(f):
    assert len(f(np.int32(3))) in (3, 6)  # Python repeats: a numpy int scalar is an index
    check_raises(f, np.int32(3), match=r"the (list|tuple) repeated by the tensor n:0 at .*test_builtins_semantics.py:"
                                       r"\d+ would have as many items as n:0 says")


def test_a_sequence_times_a_float_tensor_is_pythons_type_error():
    check_python_error(list_times_float, f32(2.0), exc=TypeError,
                       match="can't multiply sequence by non-int of type 'numpy.float32'")


def test_a_sequence_times_a_vector_broadcasts_as_numpy():
    check(list_times_vector, np.array([2, 3], np.int32))


def list_of_enumerate(v):
    return list(enumerate(v))


def list_of_zip(v):
    return list(zip(v, v))


@pytest.mark.parametrize("f, name", [(list_of_enumerate, "enumerate"), (list_of_zip, "zip")])
def test_enumerate_and_zip_of_a_tensor_outside_a_for_loop_are_refused(f, name):
    check_raises(f, np.arange(3.0, dtype=np.float32),
                 match=rf"{name}\(\) over a tensor at .*test_builtins_semantics.py:\d+ can only be looped over by a "
                       r"`for` loop")


def counter_to_a_fractional_power(n):
    c = 0
    for _ in range(n):
        c -= 1
    return c ** 0.5


def test_a_negative_python_number_to_a_fractional_power_is_refused_where_python_gives_a_complex():
    assert isinstance(counter_to_a_fractional_power(i32(4)), complex)
    check(counter_to_a_fractional_power, i32(0))
    for _, g in modes(counter_to_a_fractional_power):
        with pytest.raises(ValueError, match=r"with a negative x and a fractional y: Python gives a complex number"):
            g(i32(4))


def max_of_a_list_of_tensors(a, b, c):
    return max([a, b, c])


def min_of_a_tuple_of_tensors(a, b):
    return min((a, b))


def test_max_and_min_of_a_list_of_tensors_compare_its_items():
    check_same_bits(max_of_a_list_of_tensors, f32(1.0), f32(3.0), f32(2.0))
    check_same_bits(max_of_a_list_of_tensors, f32(0.0), f32(-0.0), f32(-1.0))
    check(min_of_a_tuple_of_tensors, i32(4), i32(-1))


def divided_by_300(x):
    return x / 300


def divides_300(x):
    return 300 / x


@pytest.mark.parametrize("f, x", [(divided_by_300, np.int8(1)), (divides_300, np.int8(-1)), (divided_by_300, np.uint8(7))])
def test_true_division_of_a_narrow_int_by_a_python_int_it_cannot_hold_is_numpys_float64(f, x):
    check(f, x)


def test_int_and_round_of_a_float16_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check(rounded, np.float16(2.5))
        check(as_int, np.float16(-3.75))


def squared(b):
    return b ** 2, b ** 3, b ** True


@pytest.mark.parametrize("b", [np.True_, np.array([True, False]), np.zeros((2, 0), bool)])
def test_bools_squared_are_numpys_dtype(b):
    # numpy's array ** 2 is np.square: of a bool array, int8 (of a bool scalar, int64; ** 3 is int64)
    check(squared, b)


def positive(b):
    return +b


def rounded(b):
    return round(b)


def counted(b):
    s = 0
    for i in range(b):
        s += 1
    return s


@pytest.mark.parametrize("f, match", [(positive, r"the unary \+ at .*:\d+: ufunc 'positive'"),
                                      (rounded, r"round\(\) at .*:\d+: type numpy.bool doesn't define __round__"),
                                      (counted, r"range\(\) at .*:\d+: 'numpy.bool' object cannot be interpreted")])
def test_numpy_bools_are_refused_where_python_refuses_them(f, match):
    check_python_error(f, np.True_, exc=TypeError, match=match)


def test_a_float_tensor_in_range_is_pythons_type_error():
    check_python_error(counted, np.float32(3.0), exc=TypeError, match=r"'numpy.float32' object cannot be interpreted")


def python_bool_as_a_number(x):
    done = False
    if x > 0:
        done = True
    return +done, round(done), counted(done), done ** 2


def test_a_python_bool_a_tensor_if_made_is_the_int_it_is():
    check(python_bool_as_a_number, i32(3))
    check(python_bool_as_a_number, i32(-1))


def reduced_along_0(x):
    return x.sum(axis=0), x.max(axis=-1), x.min(axis=0), x.prod(axis=0), x.any(axis=0), x.argmax(axis=0)


@pytest.mark.parametrize("x", [np.float32(3.0), np.int32(-2), np.arange(3.0, dtype=np.float32)])
def test_a_scalars_reduction_along_axis_0_is_numpys(x):
    # a numpy scalar's .sum(axis=0) (or -1) reduces nothing; a 0-d tensor stands for one
    check(reduced_along_0, x)


def mean_along_0(x):
    return x.mean(axis=0)


def test_a_scalars_mean_along_axis_0_is_numpys_axis_error():
    check_python_error(mean_along_0, np.float32(3.0), exc=ValueError, match=r"axis 0 is out of range")


def matrix_product(x, y):
    return x @ y


@pytest.mark.parametrize("x, y, names", [(np.float32(2.0), np.float32(3.0), "'numpy.float32' and 'numpy.float32'"),
                                         (np.int32(2), 3.0, "'numpy.int32' and 'float'")])
def test_at_of_two_scalars_is_pythons_type_error(x, y, names):
    check_python_error(matrix_product, x, y, exc=TypeError,
                       match=rf"the @ at .*:\d+: unsupported operand type\(s\) for @: {names}")


def test_at_of_an_array_and_a_scalar_is_numpys_value_error():
    check_python_error(matrix_product, np.arange(2.0), np.float32(3.0), exc=ValueError, match="scalar")
