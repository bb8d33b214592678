"""Recursion whose base case a tensor decides: a short TracingError naming the function, in every mode."""

from __future__ import annotations

import traceback

import numpy as np
import pytest

import autograph as ag
from modes import check, i32, modes


def total(n):
    if n <= 0:
        return 0
    return n + total(n - 1)


def test_recursion_with_a_tensor_base_case_is_refused_naming_the_function():
    assert total(3) == 6
    for mode, g in modes(total):
        with pytest.raises(ag.TracingError, match=r"the function 'total' recursed until Python's recursion limit "
                                                  r"while tracing the if at .*test_tensor_recursion.py:\d+.*"
                                                  r"Write 'total' as a loop") as info:
            g(i32(3))
        assert len(traceback.extract_tb(info.value.__traceback__)) < 20, mode


def scaled(x, depth):
    if depth == 0:
        return x
    if x > 0:
        return scaled(x - 1, depth - 1) * 2
    return x


@pytest.mark.parametrize("x", [-1, 2, 5])
def test_recursion_bounded_by_a_python_value_still_traces(x):
    check(scaled, i32(x), 3)


def _fib_expression(k):
    return k if k < 2 else _fib_expression(k - 1) + _fib_expression(k - 2)


def test_a_base_case_in_a_conditional_expression_is_refused_naming_the_function():
    with pytest.raises(ag.TracingError, match=r"the function '_fib_expression' recursed until Python's recursion "
                                              r"limit while tracing the conditional expression `\.\.\. if k < 2"):
        ag.function(lambda x: _fib_expression(x))(np.int32(5))
