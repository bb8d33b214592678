"""Comprehensions and generator expressions over tensors are staged loops; over Python iterables
they are Python's (their own scope, laziness, the first iterable evaluated where they stand)."""

from __future__ import annotations

import numpy as np
import pytest

import autograph as ag
from modes import check, check_raises, i32, modes


def f32(v):
    return np.array(v, dtype=np.float32)


def sum_of_squares(x):
    return sum(v * v for v in x)


def squares(x):
    return [v * v for v in x]


def filtered(x):
    return [v * 2 for v in x if v > 1]


def reductions(x):
    acc = [v + 1 for v in x]
    return sum(acc), any(v > 2 for v in x), all(v > -1 for v in x), max(v for v in x), min([v for v in x])


def over_tensor_range(x, n):
    return [v * x for v in range(n)]


def _same_as_python(f, *args):
    """The traced result (a staged list: an array) equals Python's list, item by item and dtype."""
    expected = f(*args)
    for mode, g in modes(f):
        got = g(*args)
        assert isinstance(got, np.ndarray), mode
        np.testing.assert_array_equal(got, np.array(expected))
        if expected:
            assert got.dtype == np.asarray(expected[0]).dtype, mode


def test_a_generator_expression_over_a_tensor_is_a_staged_sum():
    check(sum_of_squares, f32([0, 1, 2, 3]))
    check(sum_of_squares, np.arange(5, dtype=np.int32))


def test_list_comprehensions_over_a_tensor_are_staged_lists():
    _same_as_python(squares, np.arange(3, dtype=np.int32))
    _same_as_python(filtered, np.arange(4, dtype=np.int32))
    _same_as_python(over_tensor_range, np.float32(2), i32(3))


def test_sum_any_all_max_min_of_staged_lists():
    check(reductions, np.arange(4, dtype=np.int32))
    check(reductions, np.array([-3, 1], dtype=np.int32))


def test_sum_adds_left_to_right_as_python_does():
    x = np.array([1e8, 1.0, -1e8, 1.0] * 3, dtype=np.float32)
    check(sum_of_squares, x)
    check(lambda x: sum(x), x)


def test_over_python_iterables_nothing_changes():
    def f(xs, k):
        v = "outer"
        ys = [v * k for v in xs if v]
        gen = (v + 1 for v in xs)
        return ys, v, list(gen), sum(v for v in xs)

    check(f, [1, 0, 2], 3)
    converted = ag.convert(f, always_converted=True)
    assert converted([1, 0, 2], 3) == f([1, 0, 2], 3)


def test_a_generator_stays_lazy_and_calls_iter_at_once():
    def f(xs):
        seen = []
        gen = (seen.append(v) or v for v in xs)
        first = next(gen)
        return first, list(seen)

    assert ag.convert(f, always_converted=True)([5, 6, 7]) == f([5, 6, 7]) == (5, [5])

    def bad(n):
        return (v for v in n)

    with pytest.raises(TypeError, match="'int' object is not iterable"):
        ag.convert(bad, always_converted=True)(3)


def tensor_filter_over_python_list(x):
    return [v * 10 for v in [1, 2, 3] if v > x]


def test_a_tensor_filter_over_a_python_list_stages_the_items():
    expected = tensor_filter_over_python_list(1)
    for mode, g in modes(tensor_filter_over_python_list):
        np.testing.assert_array_equal(g(i32(1)), np.array(expected))


def generator_with_tensor_filter(x):
    return list(v for v in [1, 2, 3] if v > x)


def test_a_generator_with_a_tensor_filter_over_a_python_list_is_refused():
    check_raises(generator_with_tensor_filter, i32(1),
                 match=r"the filter \(`if ...`\) of the generator expression at .*test_comprehensions.py:\d+ is a "
                       r"tensor.*Make it a list comprehension")


def dict_comprehension(x):
    return {v: 1 for v in x}


def two_fors(x):
    return [a * b for a in x for b in x]


def unpacking_target(x):
    return [i * v for i, v in enumerate(x) if v != 1]


def zipped_sum(x, y):
    return sum(a * b for a, b in zip(x, y))


def test_an_unpacking_target_is_unpacked_by_python():
    _same_as_python(unpacking_target, np.arange(4, dtype=np.int32))
    check(zipped_sum, f32([1, 2, 3]), f32([4, 5, 6]))

    def bad(pairs):
        return [a for a, b in pairs]

    with pytest.raises(ValueError, match="unpack"):
        ag.convert(bad, always_converted=True)([(1, 2, 3)])


def test_comprehensions_left_as_written_refuse_a_tensor_naming_it():
    check_raises(dict_comprehension, np.arange(3),
                 match=r"the dict comprehension at .*test_comprehensions.py:\d+ iterates over the tensor x:0.*"
                       r"Write it as a for loop")
    check_raises(two_fors, np.arange(3),
                 match=r"the list comprehension at .*test_comprehensions.py:\d+ iterates over the tensor x:0")


def any_of_rows(x):
    return any(v for v in x)


def test_any_of_array_items_is_refused_as_ambiguous():
    check_raises(any_of_rows, np.ones((2, 3), np.float32),
                 match=r"any\(\) at .*test_comprehensions.py:\d+ of a tensor whose items are arrays")


def test_the_converter_keeps_the_comprehension_scope_in_lambdas():
    code = ag.to_code(filtered)
    assert "ag__.list_comp(x, lambda v: v * 2, lambda v: v > 1)" in code
    assert "ag__.sum(ag__.generator_exp(x, lambda v: v * v, None))" in ag.to_code(sum_of_squares)


def test_closures_in_a_comprehension_see_its_one_variable():
    def f(n):
        late = [lambda: v for v in range(n)]
        lazy = [(v + w for w in range(1)) for v in range(n)]
        return [g() for g in late], [list(g) for g in lazy]

    assert f(3) == ([2, 2, 2], [[2], [2], [2]])
    assert ag.convert(f, always_converted=True)(3) == f(3)


# -- a list comprehension reading a loop's variable: it runs at once, it does not capture it ----

def comprehension_reads_loop_index(x, n):
    s = np.float32(0)
    for i in range(n):
        s += sum([v * i for v in x])
    return s


def python_comprehension_in_tensor_loop(n):
    s = 0
    for i in range(n):
        s += sum([k * i for k in [1, 2]])
    return s


def comprehension_with_unpacking_in_while(x, n):
    s = np.float32(0)
    i = 0
    while i < n:
        s += sum([j * v * i for j, v in enumerate(x)])
        i += 1
    return s


@pytest.mark.parametrize("n", [0, 3])
def test_list_comprehension_in_a_tensor_loop_reads_its_index(n):
    x = np.array([1.0, 2.0], np.float32)
    check(comprehension_reads_loop_index, x, i32(n))
    check(python_comprehension_in_tensor_loop, i32(n))
    check(comprehension_with_unpacking_in_while, x, i32(n))


# -- a generator expression a builtin consumes, in a tensor loop

def generator_sum_reads_loop_index(x, n):
    s = np.float32(0)
    for i in range(n):
        s += sum(v * i for v in x)
    return s


def python_generator_in_tensor_loop(n):
    s = 0
    for i in range(n):
        s += sum(k * i for k in [1, 2])
    return s


@pytest.mark.parametrize("n", [0, 3])
def test_a_generator_a_builtin_consumes_reads_where_it_stands(n):
    check(generator_sum_reads_loop_index, np.array([1.0, 2.0], np.float32), i32(n))
    check(python_generator_in_tensor_loop, i32(n))


# -- a comprehension's target named like a builtin

def add_one(v):
    return v + 1


def double(v):
    return v * 2


def comprehension_target_shadows_a_builtin(x):
    return sum([abs(x) for abs in [add_one, double]])


def test_a_comprehension_target_named_like_a_builtin_is_the_target():
    check(comprehension_target_shadows_a_builtin, np.float32(3.0))
