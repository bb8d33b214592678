"""Review of the converter work on walrus, staged raise, comprehensions and return roles.

Each case is a program a user could write whose traced result (or error) differed from
plain Python's, in every execution mode: the interpreter, ``optimize=False`` and
``jit_compile=True`` (``modes.modes``), and ``ag.convert`` on Python values.
"""

from __future__ import annotations

import contextlib
import re

import numpy as np
import pytest

import autograph as ag
from modes import check, i32, modes


def _raises_as_python(f, *args):
    """Every mode raises Python's exception: the same type, message (str) and attributes."""
    with pytest.raises(Exception) as expected:
        f(*args)
    want = expected.value
    runs = [("ag.convert", ag.convert(f, always_converted=True))] + list(modes(f))
    for name, g in runs:
        with pytest.raises(type(want)) as got:
            g(*args)
        assert type(got.value) is type(want), name
        assert str(got.value) == str(want), f"{name}: {got.value!r} vs {want!r}"
        assert _attributes(got.value) == _attributes(want), name


def _attributes(error):
    return {k: np.asarray(v).tolist() for k, v in vars(error).items() if not k.startswith("__")}


# -- staged raise: the exception the graph raises is the one the user's code made ------------

class CodedError(Exception):
    """An exception whose __init__ arguments are not its args."""

    def __init__(self, code, msg="bad"):
        super().__init__(f"{msg}: {code}")
        self.code = code


class ValueCarrier(Exception):
    """An exception carrying a tensor in its args and in an attribute, with a one-argument __init__."""

    def __init__(self, value):
        super().__init__("value out of range", value)
        self.value = value


def raise_coded(x):
    if x < 0:
        raise CodedError(3, msg="negative")
    return x


def raise_carrier(x):
    if x < 0:
        raise ValueCarrier(x * 2)
    return x


def raise_carrier_in_loop(n):
    s = np.int32(0)
    for i in range(n):
        s += i
        if s > 5:
            raise ValueCarrier(s)
    return s


@pytest.mark.parametrize("f, x", [(raise_coded, -1), (raise_carrier, -4)])
def test_staged_exception_is_the_one_made_while_tracing(f, x):
    _raises_as_python(f, i32(x))
    check(f, i32(-x))


def test_staged_exception_carries_tensor_attributes():
    _raises_as_python(raise_carrier_in_loop, i32(5))
    check(raise_carrier_in_loop, i32(3))


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
        with pytest.raises(ag.TracingError, match=r"the chained comparison at .*test_review_converters.py:\d+ "
                                                  r"is decided by a tensor.*binds 'k'"):
            g(i32(3))


@pytest.mark.parametrize("n", [0, 3, 6])
def test_walrus_in_an_if_test_inside_a_tensor_loop(n):
    check(if_test_walrus_read_in_loop, i32(n))
    check(if_test_walrus_then_break, i32(n))


# -- try/except around a tensor condition: its handler runs only while tracing ---------------------

def try_around_tensor_if(x):
    try:
        if x < 0:
            raise ValueError("neg")
        y = x
    except ValueError:
        y = -1
    return y


def checked(v):
    if v > 3:
        raise ValueError("big")
    return v


def try_around_call(x):
    try:
        y = checked(x)
    except Exception:
        y = -1
    return y


def try_around_failing_trace(x):
    try:
        if x > 0:
            y = [1, 2][5]
        else:
            y = 0
    except IndexError:
        y = -1
    return y


def try_inside_branch(x):
    if x > 0:
        try:
            raise KeyError("k")
        except KeyError:
            y = x * 2
    else:
        y = x
    return y


def try_that_does_not_catch(x):
    try:
        y = checked(x)
    except KeyError:
        y = -1
    return y


def try_in_loop_body(n):
    s = 0
    for i in range(n):
        try:
            if i > 1:
                raise ValueError("late")
        except KeyError:
            s -= 1
        s += i
    return s


@pytest.mark.parametrize("f", [try_around_tensor_if, try_around_call])
def test_a_handler_around_a_staged_raise_is_refused(f):
    assert f(-2) == -1 if f is try_around_tensor_if else f(5) == -1  # Python: the handler runs
    for x in (-2, 5):
        for _, g in modes(f):
            with pytest.raises(ag.TracingError, match=r"the `raise ValueError\(...\)` at .*test_review_converters.py:"
                                                      r"\d+ is under a tensor condition inside a try whose handler"):
                g(i32(x))


def test_a_handler_catching_what_tracing_a_branch_raised_is_refused():
    for _, g in modes(try_around_failing_trace):
        with pytest.raises(ag.TracingError, match=r"the `except` clause at .*test_review_converters.py:\d+ catches "
                                                  r"IndexError\('list index out of range'\) raised while tracing"):
            g(i32(0))


@pytest.mark.parametrize("x", [-2, 2, 5])
def test_handlers_that_cannot_catch_a_staged_raise_keep_it(x):
    check(try_inside_branch, i32(x))
    if x <= 3:
        check(try_that_does_not_catch, i32(x))
    else:
        _raises_as_python(try_that_does_not_catch, i32(x))
    if x < 3:
        check(try_in_loop_body, i32(2))  # i = 0, 1: none raises
    else:
        _raises_as_python(try_in_loop_body, i32(x))


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


def add_one(v):
    return v + 1


def double(v):
    return v * 2


def comprehension_target_shadows_a_builtin(x):
    return sum([abs(x) for abs in [add_one, double]])


def test_a_comprehension_target_named_like_a_builtin_is_the_target():
    check(comprehension_target_shadows_a_builtin, np.float32(3.0))


class FormattingError(Exception):
    def __init__(self, code):
        super().__init__(f"bad code {code}")


def raise_formatting(x):
    if x < 0:
        raise FormattingError(x)
    return x


def test_an_exception_formatting_a_tensor_in_its_init_is_refused_with_advice():
    for _, g in modes(raise_formatting):
        with pytest.warns(ag.TracingWarning, match="str\\(\\) of the symbolic tensor"), \
                pytest.raises(ag.TracingError, match=r"the message of the `raise FormattingError\(...\)` at "
                                                  r".*test_review_converters.py:\d+ formats a symbolic tensor.*"
                                                  r"keep it in an attribute if the exception's own __init__"):
            g(i32(1))


# -- a with block around a tensor condition: its context manager runs only while tracing ----------

def raise_in_suppressing_with(x):
    y = 0
    with contextlib.suppress(ValueError):
        if x < 0:
            raise ValueError("neg")
        y = x
    return y


def raise_in_plain_with(x):
    y = 0
    with contextlib.nullcontext():
        if x < 0:
            raise ValueError("neg")
        y = x
    return y


@pytest.mark.parametrize("f", [raise_in_suppressing_with, raise_in_plain_with])
def test_a_raise_under_a_tensor_condition_inside_a_with_is_refused(f):
    check(f, 3)  # Python values: Python's with
    for x in (-2, 3):
        for _, g in modes(f):
            with pytest.raises(ag.TracingError, match=r"the `raise ValueError\(...\)` at .*test_review_converters.py:"
                                                      r"\d+ is under a tensor condition inside a with block"):
                g(i32(x))
