"""The exception a staged raise raises, and the ``try``/``with`` blocks around one.

The graph raises the exception the user's code made (its type, message and
attributes, tensors among them); a handler or context manager around a raise
under a tensor condition would run only while tracing, so it is refused, naming
the raise and its ``file:line``.  Each case is checked in every execution mode
(``modes.modes``) and through ``ag.convert`` on Python values.  How a raise is
staged at all is tests/test_staged_raise.py.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import autograph as ag
from modes import check, i32, modes


def _raises_as_python(f, *args):
    """Every mode raises Python's exception: the same type, message (str) and attributes."""
    try:
        f(*args)
    except Exception as error:  # noqa: BLE001 - whatever Python raises is the expectation
        want = error
    else:
        pytest.fail(f"{f.__name__}{args!r} raises nothing in Python")
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
            with pytest.raises(ag.TracingError, match=r"the `raise ValueError\(...\)` at .*test_staged_raise_exceptions.py:"
                                                      r"\d+ is under a tensor condition inside a try whose handler"):
                g(i32(x))


def test_a_handler_catching_what_tracing_a_branch_raised_is_refused():
    for _, g in modes(try_around_failing_trace):
        with pytest.raises(ag.TracingError, match=r"the `except` clause at .*test_staged_raise_exceptions.py:\d+ catches "
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
                                                  r".*test_staged_raise_exceptions.py:\d+ formats a symbolic tensor.*"
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


class Unknown:
    """A context manager autograph knows nothing of: its __exit__ may suppress anything."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return False


def raise_in_unknown_with(x):
    y = 0
    with Unknown():
        if x < 0:
            raise ValueError("neg")
        y = x
    return y


@pytest.mark.parametrize("f", [raise_in_suppressing_with, raise_in_unknown_with])
def test_a_raise_under_a_tensor_condition_inside_a_with_that_may_suppress_it_is_refused(f):
    check(f, 3)  # Python values: Python's with
    for x in (-2, 3):
        for _, g in modes(f):
            with pytest.raises(ag.TracingError, match=r"the `raise ValueError\(...\)` at .*test_staged_raise_exceptions.py:"
                                                      r"\d+ is under a tensor condition inside a with block"):
                g(i32(x))


class Declared:
    """A context manager that says it suppresses nothing."""

    __autograph_suppresses__ = ()

    def __enter__(self):
        return "entered"

    def __exit__(self, *exc_info):
        return False


def raise_in_plain_with(x):
    y = 0
    with contextlib.nullcontext():
        if x < 0:
            raise ValueError("neg")
        y = x
    return y


def raise_in_errstate(x):
    y = 0
    with np.errstate(divide="ignore"), Declared() as name:
        if x < 0:
            raise ValueError("neg", name)
        y = x + np.float32(1.0) / x
    return y


def raise_in_suppress_of_another_kind(x):
    y = 0
    with contextlib.suppress(KeyError):
        if x < 0:
            raise ValueError("neg")
        y = x
    return y


@pytest.mark.parametrize("f", [raise_in_plain_with, raise_in_errstate, raise_in_suppress_of_another_kind])
def test_a_raise_inside_a_with_that_cannot_suppress_it_is_staged(f):
    check(f, i32(3))
    _raises_as_python(f, i32(-2))


def suppressed_while_tracing(x):
    y = 0
    with contextlib.suppress(ValueError):
        if x > 0:
            y = int("not a number")
        y = y + 1
    return y


def suppressed_in_a_loop(x, n):
    total = 0.0
    for i in range(n):  # a Python loop: at i = 2 the tensor branch divides by zero while tracing
        with contextlib.suppress(ZeroDivisionError):
            if x > 0:
                total += 1.0 / (i - 2)
            else:
                total += 1.0
    return total


def test_an_error_raised_while_tracing_a_branch_that_a_with_suppresses_is_refused():
    # Python suppresses it only on the inputs that take the branch (x = -1 gives 1); the trace would for all.
    assert suppressed_while_tracing(-1.0) == 1 and suppressed_while_tracing(1.0) == 0
    assert suppressed_in_a_loop(-1.0, 5) == 5.0
    for f, args in ((suppressed_while_tracing, (np.float32(-1.0),)), (suppressed_in_a_loop, (np.float32(-1.0), 5))):
        for _, g in modes(f):
            with pytest.raises(ag.TracingError, match=r"the `with` statement at .*test_staged_raise_exceptions.py:\d+ "
                                                      r"suppresses (ValueError|ZeroDivisionError)\(.* raised while "
                                                      r"tracing a tensor if or loop inside it"):
                g(*args)


def index_in_suppress(xs, i):
    y = -1.0
    with contextlib.suppress(IndexError):
        y = xs[i]
    return y


def division_in_suppress(x, n):
    total = 0.0
    for i in range(n):
        with contextlib.suppress(ZeroDivisionError):
            total += 1.0 / (i - 2)
    return total


def index_in_errstate(xs, i):
    with np.errstate(all="ignore"):
        y = xs[i]
    return y


def test_an_op_that_may_fail_when_the_graph_runs_inside_a_suppress_is_refused():
    xs = np.arange(3.0)
    assert index_in_suppress(xs, 5) == -1.0 and division_in_suppress(0.0, 4) == -0.5
    for f, args, op in ((index_in_suppress, (xs, i32(5)), "CheckIndex"),
                        (division_in_suppress, (np.float32(0.0), i32(4)), "Ensure")):
        for _, g in modes(f):
            with pytest.raises(ag.TracingError, match=rf"the `with` statement at .*test_staged_raise_exceptions.py:\d+ "
                                                      rf"has a context manager that suppresses \w+Error, which the "
                                                      rf"{op} op at .*:\d+ .* inside it may raise only when the graph runs"):
                g(*args)


def test_an_op_that_may_fail_inside_a_manager_that_suppresses_nothing_fails_as_python():
    xs = np.arange(3.0)
    check(index_in_errstate, xs, i32(1))
    for _, g in modes(index_in_errstate):
        with pytest.raises(IndexError, match=r"`y = xs\[i\]` at .*: index 5 is out of bounds for axis 0 with size 3"):
            g(xs, i32(5))


def refusal_inside_suppress(x):
    y = x
    with contextlib.suppress(Exception):
        if x > 0:
            y = [x]  # a list in one branch and a tensor in the other: refused
    return y


def test_a_refusal_is_not_suppressed():
    for _, g in modes(refusal_inside_suppress):
        with pytest.raises(ag.TracingError):
            g(np.float32(1.0))


class Recorder:
    """Records enter and exit (with the kind of error) in LOG; suppresses what it is told to."""

    LOG: list = []

    def __init__(self, name, suppress=False):
        self.name, self.suppress = name, suppress

    def __enter__(self):
        Recorder.LOG.append(f"enter {self.name}")
        return self.name.upper()

    def __exit__(self, kind, error, tb):
        Recorder.LOG.append(f"exit {self.name} {kind.__name__ if kind else None}")
        return self.suppress


def nested_managers(x, fail):
    out = []
    with Recorder("a") as a, Recorder("b", suppress=True) as b:
        out.append(a + b)
        if fail:
            raise KeyError("k")
        out.append("after")
    return out, x


def not_a_manager(x):
    with x:
        pass


def test_the_with_protocol_is_pythons():
    f = ag.convert(nested_managers, always_converted=True)
    for fail in (False, True):
        Recorder.LOG.clear()
        want = nested_managers(1, fail)
        python_log = list(Recorder.LOG)
        Recorder.LOG.clear()
        assert f(1, fail) == want and Recorder.LOG == python_log, (fail, Recorder.LOG, python_log)
    g = ag.convert(not_a_manager, always_converted=True)
    for value in (1, Recorder):
        with pytest.raises(TypeError) as python:
            not_a_manager(value)
        with pytest.raises(TypeError) as converted:
            g(value)
        assert str(converted.value) == str(python.value)


def refusal_in_try(x):
    try:
        v = x.tolist()  # a list needs the values: refused while tracing
    except Exception:
        v = -1.0
    return v


def refusal_in_suppress(x):
    v = -1.0
    with contextlib.suppress(Exception):
        v = x.tolist()
    return v


@pytest.mark.parametrize("f", [refusal_in_try, refusal_in_suppress])
def test_a_refusal_while_tracing_reaches_the_caller_through_the_users_handlers(f):
    assert f(np.float32(2.0)) == 2.0  # Python raises nothing; a handler catching the refusal would give -1.0
    for _, g in modes(f):
        with pytest.raises(ag.TracingError, match=r"\.tolist\(\) of the symbolic tensor"):
            g(np.float32(2.0))


# -- an error Python raises while a branch is traced: raised when the graph runs that branch ------

def missing_key_in_a_branch(n):
    d = {"a": 1}
    if n > 0:
        r = n + d["b"]
    else:
        r = n
    return r


def index_past_a_static_length_in_a_branch(x, n):
    v = np.float32(0.0)
    if n > 0:
        v = x[0]
    return v


def index_past_a_static_length_in_a_loop(x, n):
    s = np.float32(0.0)
    for _ in range(n):
        s += x[10]
    return s


def constant_division_by_zero_in_a_branch(n):
    r = n
    if n > 100:
        r = n + 1 // 0
    return r


def parse_error_in_a_branch(n):
    r = n
    if n > 100:
        r = n + int("abc")
    return r


@pytest.mark.parametrize("f, taken, not_taken", [
    (missing_key_in_a_branch, (i32(3),), (i32(-3),)),
    (index_past_a_static_length_in_a_branch, (np.zeros(0, np.float32), i32(1)), (np.zeros(0, np.float32), i32(0))),
    (index_past_a_static_length_in_a_loop, (np.zeros(3, np.float32), i32(2)), (np.zeros(3, np.float32), i32(0))),
    (constant_division_by_zero_in_a_branch, (i32(300),), (i32(3),)),
    (parse_error_in_a_branch, (i32(300),), (i32(3),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_an_error_python_raises_on_one_path_is_raised_only_there(f, taken, not_taken):
    check(f, *not_taken)
    try:
        f(*taken)
    except Exception as error:  # noqa: BLE001 - Python's error is the expectation
        want = type(error)
    for _, g in modes(f):
        with pytest.raises(want):
            g(*taken)
