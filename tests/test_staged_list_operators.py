"""Python's operators on a staged list mean what they mean on a list (``runtime/ops/list_operators.py``).

A list appended to in a tensor loop is carried as one tensor of its
elements; ``l * 2`` must still repeat it and ``l + [x]`` concatenate, not
compute element by element.  What a staged list cannot do as a list is an
error (Python's ``TypeError`` where Python raises one, else a
``TracingError``), never another value.  Each function runs unconverted and
through ``ag.function`` in every execution mode.
"""

from __future__ import annotations

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from modes import check, check_raises, i32


def filled(n):
    acc = []
    for i in range(n):
        acc.append(i * 10)
    return acc


def repeated(n):
    acc = filled(n)
    twice, none, once = acc * 2, acc * 0, 1 * acc
    return len(twice), twice[-1], len(none), len(once), len(3 * acc)


def concatenated(n):
    acc = filled(n)
    more = acc + [7, 8]
    both = acc + acc
    front = [1] + acc
    return len(more), more[-1], len(both), both[n], len(front), front[0], len(acc + [])


def numpy_operands(n):
    acc = [1]
    for i in range(n):
        acc.append(i)
    # numpy ints repeat a list (they are indices); numpy's + takes the list as an array (of Python ints:
    # int64; a list of numpy values and Python numbers is refused there, tests/test_staged_list_operands.py)
    return len(acc * np.int32(3)), len(np.int32(2) * acc), np.int32(2) + acc, acc + np.float32(0.5)


def compared_with_numbers(n):
    acc = filled(n)
    return acc == 3, acc != 3


def truth_of_lists(n):
    acc = filled(n)
    empty = 1 if acc else 0
    negated = 0 if not acc else 1
    return empty, negated


def slice_and_update_stay_lists(n):
    acc = filled(n)
    tail = acc[1:]
    acc[0] = 5
    return len(tail * 2), len(acc * 2), acc[0]


def staged_in_one_branch_only(a, n):
    acc = [a]
    if a > 0:
        for i in range(n):
            acc.append(a + i)
    return len(acc), acc[-1]


def staged_in_a_nested_tensor_if(a, b):
    acc = [a]
    if a > 0:
        pass
    elif b > 0:
        acc.append(b)
    return len(acc), (acc * 2)[-1]


@pytest.mark.parametrize("n", [0, 1, 3])
def test_repetition(n):
    if n:
        check(repeated, i32(n), check_dtype=False)


@pytest.mark.parametrize("n", [1, 3])
def test_concatenation(n):
    check(concatenated, i32(n), check_dtype=False)


def test_numpy_operands_as_python_decides():
    check(numpy_operands, i32(2))


def test_comparison_with_a_number_is_python_s():
    check(compared_with_numbers, i32(2))


@pytest.mark.parametrize("n", [0, 2])
def test_truth_is_not_empty(n):
    check(truth_of_lists, i32(n))


def test_slices_and_item_updates_stay_lists():
    check(slice_and_update_stay_lists, i32(3), check_dtype=False)


@pytest.mark.parametrize("a", [-1, 2])
def test_a_list_staged_in_one_branch_only(a):
    check(staged_in_one_branch_only, i32(a), i32(3), check_dtype=False)


@pytest.mark.parametrize("a, b", [(1, 1), (-1, 2), (-1, -2)])
def test_a_list_staged_in_a_nested_tensor_if(a, b):
    check(staged_in_a_nested_tensor_if, i32(a), i32(b), check_dtype=False)


def compared_with_a_list(n):
    acc = filled(n)
    return acc == [0, 10]


def ordered_with_a_list(n):
    acc = filled(n)
    return acc < [5]


def repeated_by_a_tensor(n):
    acc = filled(n)
    return len(acc * n)


def test_list_comparisons_are_tracing_errors():
    check_raises(compared_with_a_list, i32(2), match=r"comparing the staged list .* with a list \(==\)")
    check_raises(ordered_with_a_list, i32(2), match=r"with a list \(<\)")


def test_repeating_by_a_tensor_count_is_a_tracing_error():
    check_raises(repeated_by_a_tensor, i32(2), match="repeating the staged list .* by a tensor count")


def added_to_a_number(n):
    return filled(n) + 1


def multiplied_by_a_float(n):
    return filled(n) * 2.0


def negated(n):
    return -filled(n)


def ordered_with_a_number(n):
    return filled(n) < 3


@pytest.mark.parametrize("f, message", [
    (added_to_a_number, r'can only concatenate list \(not "int"\) to list'),
    (multiplied_by_a_float, "can't multiply sequence by non-int of type 'float'"),
    (negated, "bad operand type for unary -: 'list'"),
    (ordered_with_a_number, "'<' not supported between instances of 'list' and 'int'"),
])
def test_what_python_refuses_is_python_s_type_error(f, message):
    with pytest.raises(TypeError, match=message):
        f(2)
    check_raises(f, i32(2), match=message, exc=TypeError)



def extended_in_a_loop(n):
    acc = []
    for i in range(n):
        acc.extend([i, i * 2])
    return len(acc), acc[-1] if n > 0 else -1


def extended_by_rows(m):
    acc = [m[0]]
    for row in m:
        if rt.reduce_sum(row) > 0:
            acc.extend(rt.reshape(row, (1, 2)))
    return len(acc)


def test_extend_in_tensor_loops():
    check(extended_in_a_loop, i32(3), check_dtype=False)
    check(extended_in_a_loop, i32(0), check_dtype=False)
    check(extended_by_rows, np.array([[1.0, 2.0], [-3.0, 1.0], [2.0, 2.0]], np.float32), check_dtype=False)


def reversed_staged_list(n):
    acc = filled(n)
    acc.reverse()
    return acc


def test_other_list_methods_on_a_staged_list_name_it():
    check_raises(reversed_staged_list, i32(2), exc=AttributeError,
                 match=r"no attribute 'reverse': the staged list 'acc' of the for loop at .* not \.reverse\(\)")


def multiplied_by_a_float_argument(n, x):
    return filled(n) * x


def test_repeating_by_a_float_tensor_is_python_s_type_error():
    with pytest.raises(TypeError, match="can't multiply sequence by non-int of type 'numpy.float32'"):
        multiplied_by_a_float_argument(2, np.float32(2))
    check_raises(multiplied_by_a_float_argument, i32(2), np.float32(2), exc=TypeError,
                 match="can't multiply sequence by non-int of type 'numpy.float32'")


def numbers_concatenated(n, x):
    acc = filled(n)  # Python ints only: a weakly typed staged list
    more = acc + [1.5]  # still Python numbers only
    joined = [x] + acc  # a float32 item: the Python ints take its dtype (NEP 50)
    return len(more), more[-1] * x, len(joined), joined[-1] * x


def test_lists_of_python_numbers_concatenate_weakly():
    check(numbers_concatenated, i32(3), np.float32(2.0))  # (4, 3.0, 4, 40.0)
    graph = ag.function(numbers_concatenated).get_concrete_function(
        rt.TensorSpec((), "int32"), rt.TensorSpec((), "float32")).graph
    assert [t.dtype.name for t in graph.outputs[1::2]] == ["float32", "float32"]  # weak items times x


def numbers_concatenated_with_int8(n, x):
    acc = [1000]
    for i in range(n):
        acc.append(300)
    both = acc + [x]  # an int8 list joins Python ints: they must not wrap
    return both[0], both[1], both[-1], len(both)


def test_python_numbers_concatenated_with_int8_that_cannot_hold_them_are_an_error():
    # Python: (1000, 300, 1, 4); each item keeps its type, which one int8 list cannot: refused where an
    # item is read (list_operators.check_items_readable), naming the list
    with pytest.raises(ag.TracingError, match="the staged list 'acc' .* holds Python numbers beside int8 values, "
                                              "and an item of it is read"):
        ag.function(numbers_concatenated_with_int8)(i32(2), np.int8(1))
