"""A function defined inside a tensor ``if`` or loop that updates a variable around it (``nonlocal``).

``def bump(): nonlocal k; k += 1`` written in a loop body, then called
there, changes ``k`` at every iteration in Python.  The converter does not
see ``k`` assigned in the body (the assignment is in ``bump``), so ``k`` is
not the statement's state; the snapshot of the statement
(``runtime/operators/outside_writes.py``) finds it changed after the traced
body, through ``bump``'s closure, and makes it state.  It used to leave out
every variable a function defined in the body assigns, so the change
happened once, while tracing (``f(0)`` gave 1, ``f(4)`` gave 1): a silent
wrong value.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autograph as ag
import autograph.runtime as rt
from modes import MODES

i32 = np.int32


def counter_bumped_in_while(n):
    k = 0
    i = 0
    while i < n:
        def bump():
            nonlocal k
            k += 1
        bump()
        i += 1
    return k


def counter_bumped_in_if(n):
    k = 0
    if n > 0:
        def bump():
            nonlocal k
            k = k + 5
        bump()
    return k


def counter_bumped_in_for(n):
    k = 1
    for i in rt.range(n):
        def scale():
            nonlocal k
            k = k * 2
        scale()
    return k


def bumped_in_if_in_while(n):
    k = 0
    i = 0
    while i < n:
        if i % 2 == 0:
            def bump():
                nonlocal k
                k += 10
            bump()
        i += 1
    return k


def two_variables_one_helper(n):
    total, count = 0, 0
    i = 0
    while i < n:
        def add(v):
            nonlocal total, count
            total += v
            count += 1
        add(i)
        i += 1
    return total, count


def helper_called_on_one_branch(n):
    k = 3
    if n > 2:
        def drop():
            nonlocal k
            k -= 1
        drop()
    else:
        k = k + 100
    return k


def helper_assigns_state_too(n):
    k = 0
    i = 0
    while i < n:
        k = k + 1
        def double():
            nonlocal k
            k = k * 2
        double()
        i += 1
    return k


FUNCTIONS = [
    counter_bumped_in_while,
    counter_bumped_in_if,
    counter_bumped_in_for,
    bumped_in_if_in_while,
    two_variables_one_helper,
    helper_called_on_one_branch,
    helper_assigns_state_too,
]


def _plain(value):
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return int(value)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_a_variable_changed_by_a_function_defined_in_the_body(fn, mode):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = ag.function(fn, **MODES[mode])
        for n in (0, 1, 3, 6):
            assert _plain(traced(i32(n))) == _plain(fn(n)), (fn.__name__, n)


def test_converted_without_tracing_matches_python():
    for fn in FUNCTIONS:
        for n in (0, 1, 4):
            assert _plain(ag.convert(fn)(n)) == _plain(fn(n)), (fn.__name__, n)
