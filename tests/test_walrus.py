"""Walrus (``:=``) in loop tests and under short-circuit operators: Python's bindings in every mode.

A name bound in a ``while`` test is loop state (the test is evaluated into a
variable before the loop and at the end of each iteration); one bound under
``and``/``or``/a conditional expression is branch state of an ``if``.  In a
chained comparison a walrus binds before the links after it; deep in one
whose result a tensor decides, it is refused.
"""

from __future__ import annotations

import pytest

import autograph as ag
from modes import check, check_raises, i32, modes


def while_test_binds(n):
    i = 0
    j = 0
    while (j := i * 2) < n:
        i += 1
    return i, j


def while_test_binds_for_the_body(n):
    i = 0
    s = 0
    while (j := i * 2) < n:
        s += j
        i += 1
    return s, j


def while_test_with_break(n):
    i = 0
    j = -1
    while (j := i * 3) < 100:
        if i >= n:
            break
        i += 1
    return i, j


def while_test_with_continue(n):
    i = 0
    s = 0
    while (j := i + 1) < n:
        i += 1
        if j % 2 == 0:
            continue
        s += j
    return s, j


def while_test_with_return(n):
    i = 0
    while (j := i * 2) < 100:
        if j > n:
            return i, j
        i += 1
    return -1, j


def while_test_and(n):
    i = 0
    k = 0
    while i < n and (k := i * 10) < 35:
        i += 1
    return i, k


def if_test_and(x):
    k = 0
    if x > 0 and (k := x * 2) > 3:
        return k
    return k + 100


def if_test_or(x):
    k = 0
    if x > 5 or (k := x * 2) > 3:
        return k + 1
    return k - 1


def conditional_expression(x):
    k = 0
    y = (k := x + 1) if x > 0 else 0
    return y, k


def returned_and(x):
    k = 1
    return x > 0 and (k := x * 3) > 4, k


@pytest.mark.parametrize(
    "f", [while_test_binds, while_test_binds_for_the_body, while_test_with_break, while_test_with_continue,
          while_test_with_return, while_test_and],
)
@pytest.mark.parametrize("n", [0, 5, 40])
def test_a_walrus_in_a_while_test_is_loop_state(f, n):
    check(f, i32(n))


@pytest.mark.parametrize("f", [if_test_and, if_test_or, conditional_expression, returned_and])
@pytest.mark.parametrize("x", [-2, 1, 3, 7])
def test_a_walrus_under_a_short_circuit_is_branch_state(f, x):
    check(f, i32(x))


def unbound_on_one_path(x):
    if x > 0 and (k := x * 2) > 3:
        return k
    return 0


def test_a_walrus_bound_on_one_path_of_a_tensor_if_names_it():
    assert unbound_on_one_path(3) == 6
    check(unbound_on_one_path, 3)  # Python values: Python's semantics
    check_raises(unbound_on_one_path, i32(3), match=r"'k' must be defined in both branches of the if at "
                                                    r".*test_walrus.py:\d+")


def test_the_while_test_is_evaluated_before_the_loop_and_after_each_iteration():
    code = ag.to_code(while_test_with_break)
    assert code.count("cond_ = (j := (i * 3)) < 100") == 2
    assert "if ag__.not_(break_):" in code or "ag__.not_(break_)" in code


def nested_and(x):
    k = 0
    y = abs(x > 0 and (k := x * 2) > 3)
    return y, k


def nested_conditional(x):
    k = 0
    y = abs((k := x * 2) if x > 0 else -1)
    return y, k


@pytest.mark.parametrize("f", [nested_and, nested_conditional])
@pytest.mark.parametrize("x", [-2, 3])
def test_a_nested_short_circuit_walrus_keeps_python_semantics_on_python_values(f, x):
    check(f, x)


def test_a_nested_short_circuit_walrus_on_a_tensor_is_refused_naming_the_target():
    check_raises(nested_and, i32(3), match=r"the `and` at .*test_walrus.py:\d+ is decided by a tensor, but stays "
                                           r"Python code because a walrus \(:=\) in it binds 'k'.*Assign 'k' in a "
                                           r"statement")
    check_raises(nested_conditional, i32(3), match=r"the conditional expression at .*test_walrus.py:\d+ is "
                                                   r"decided by a tensor.* binds 'k'")


def comprehension_filter(x):
    return [y for v in [1, 2, 3] if (y := v * x) > 2]


def test_a_walrus_in_a_comprehension_filter():
    check(comprehension_filter, 2)
    check_raises(comprehension_filter, i32(2), match=r"the filter of the list comprehension at .*test_walrus.py:"
                                                     r"\d+ is decided by a tensor.* binds 'y'")


# -- walrus in a chained comparison; a walrus in an if test binds before either branch -----------

def chain_walrus_if(x):
    k = 0
    if 0 < (k := x * 2) < 10:
        return 1, k
    return 0, k


def chain_walrus_three_links(x):
    k = -1
    m = -1
    r = -5 < (k := x - 1) < (m := x * x) <= 50
    return r, k, m


def chain_walrus_while(n):
    i = 0
    while 0 <= (j := i * 2) < n:
        i += 1
    return i, j


def chain_walrus_in_call(x):
    k = 0
    y = int(0 < (k := x) < 10)
    return y, k


def if_test_walrus_read_in_loop(n):
    s = 0
    last = 0
    for i in range(n):
        if (t := i * i) > 4:
            s += t
        last = t
    return s, last


def if_test_walrus_then_break(n):
    found = -1
    for i in range(n):
        if (sq := i * i) > 10:
            found = sq
            break
    return found


@pytest.mark.parametrize("x", [-3, 0, 2, 4, 30])
def test_walrus_in_a_chained_comparison(x):
    check(chain_walrus_if, i32(x))
    check(chain_walrus_three_links, i32(x))
    check(chain_walrus_while, i32(x))
    check(chain_walrus_in_call, x)


def test_walrus_deep_in_a_chained_comparison_refuses_a_tensor():
    for _, g in modes(chain_walrus_in_call):
        with pytest.raises(ag.TracingError, match=r"the chained comparison at .*test_walrus.py:\d+ "
                                                  r"is decided by a tensor.*binds 'k'"):
            g(i32(3))


@pytest.mark.parametrize("n", [0, 3, 6])
def test_walrus_in_an_if_test_inside_a_tensor_loop(n):
    check(if_test_walrus_read_in_loop, i32(n))
    check(if_test_walrus_then_break, i32(n))


# -- a walrus read in its own statement: the name is not live before it -------------------------

def walrus_read_in_its_statement(n):
    c = 0
    i = 0
    while i < n:
        c += (t := i + 1) * t
        i += 1
    return c


def walrus_then_and_in_loop(n):
    c = 0
    for i in range(n):
        ok = (t := i * 3) > 2 and t < 10
        if ok:
            c += 1
    return c


def walrus_read_before_bound(n):
    t = 100
    s = 0
    for i in range(n):
        s += t + (t := i)
    return s, t


@pytest.mark.parametrize("n", [0, 3, 6])
def test_walrus_read_in_its_own_statement(n):
    check(walrus_read_in_its_statement, i32(n))
    check(walrus_then_and_in_loop, i32(n))
    check(walrus_read_before_bound, i32(n))
