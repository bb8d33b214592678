"""Python integers a loop or branch made, combined with a narrower integer dtype (issue 16, item 5).

A variable that starts as a Python number stays weakly typed through a
tensor loop or branch (``offset = 0; ... offset += 100``); combined with a
``uint8`` tensor it takes ``uint8`` (NEP 50), and a value out of ``uint8``'s
bounds is, in Python, an ``OverflowError``, never a wrapped number.  The
graph checks it when it runs (an ``Ensure`` raising ``OverflowError``, naming
the value, where it was made and the user's line combining it), in every
execution mode, the JAX backend's too.
"""

from __future__ import annotations

import importlib.util
import inspect
import warnings

import numpy as np
import pytest

import autograph as ag

MODES = {
    "interpreter": {},
    "unoptimized": {"optimize": False},
    "jit": {"jit_compile": True},
}
if importlib.util.find_spec("jax") is not None:  # the optional backend
    MODES["jax"] = {"backend": "jax"}

PX = np.array([10, 20], np.uint8)


def traced(fn, mode, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ag.function(fn, **MODES[mode])(*args)


def loop_offset(px, n):
    offset = 0
    for _ in range(n):
        offset += 100
    return px + offset


def branch_offset(px, n):
    k = 1
    if n > 2:
        k = 300
    return px + k


def loop_negative(px, n):
    k = 0
    i = 0
    while i < n:
        k -= 1
        i += 1
    return px + k


CASES = [loop_offset, branch_offset, loop_negative]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", CASES, ids=[fn.__name__ for fn in CASES])
def test_a_python_integer_out_of_the_partners_bounds_fails_when_the_graph_runs(fn, mode):
    with pytest.raises(OverflowError):
        fn(PX, np.int32(3))
    with pytest.raises(OverflowError, match=r"a Python integer \(the weakly typed int\d+ .*, made at .*"
                                             r"test_weak_overflow.py:\d+\) is combined with a uint8 tensor at "
                                             r".*test_weak_overflow.py:\d+, but is out of uint8's bounds"):
        traced(fn, mode, PX, np.int32(3))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn, n", [(loop_offset, 2), (branch_offset, 1), (loop_negative, 0)],
                         ids=["loop", "branch", "loop_zero_times"])
def test_a_python_integer_within_bounds_gives_pythons_value_and_dtype(fn, n, mode):
    expected = fn(PX, np.int32(n))
    got = traced(fn, mode, PX, np.int32(n))
    assert got.dtype == expected.dtype == np.uint8
    np.testing.assert_array_equal(got, expected)




def negative_counter_plus(x, n):
    i = 0
    for _ in range(n):
        i -= 1
    return x + i


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
def test_a_negative_python_integer_and_an_unsigned_tensor_of_its_width_fail(dtype, mode):
    """-1 cast to uint64 and back is -1 again: the check also looks at the sign, or the sum wraps."""
    x = dtype(7)
    with pytest.raises(OverflowError):
        negative_counter_plus(x, np.int32(2))
    with pytest.raises(OverflowError, match=f"is out of {np.dtype(dtype).name}'s bounds"):
        traced(negative_counter_plus, mode, x, np.int32(2))
    assert traced(negative_counter_plus, mode, x, np.int32(0)) == x  # the counter is 0: it fits

# -- comparisons: exact, as NumPy 2 compares a Python int with any integer dtype ------------------

def compare_constants(px):
    return px < 300, 300 > px, px <= 300, px >= -5, px == 300, px != 300, -5 < px


def compare_counter(x, n):
    i = 0
    for _ in range(n):
        i += 100_000  # out of int16's bounds after one step
    return x < i, i == x, i != x, i >= x


def compare_counter_in_condition(x, n):
    steps = 0
    big = 0
    while big < n:
        big += 40_000
        steps += 1 if x < big else 2
    return steps


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn, args", [
    (compare_constants, (np.uint8(3),)),
    (compare_constants, (PX,)),
    (compare_constants, (np.int8(-128),)),
    (compare_counter, (np.int16(5), np.int32(3))),
    (compare_counter, (np.uint16(60_000), np.int32(1))),
    (compare_counter_in_condition, (np.int16(5), np.int32(100_000))),
], ids=["uint8", "uint8_array", "int8", "int16_counter", "uint16_counter", "counter_in_condition"])
def test_a_python_integer_out_of_bounds_compares_exactly(fn, args, mode):
    """``np.uint8(3) < 300`` is True in Python (no OverflowError: only arithmetic raises), so a
    comparison widens both operands instead of checking that the Python int fits."""
    expected = fn(*args)
    got = traced(fn, mode, *args)
    expected, got = (expected, got) if isinstance(expected, tuple) else ((expected,), (got,))
    assert len(got) == len(expected)
    for e, g in zip(expected, got):
        np.testing.assert_array_equal(g, e)
        assert np.asarray(g).dtype == np.asarray(e).dtype


def counter_compared_with_unsigned(x, n):
    i = 0
    for _ in range(n):
        if x < i:
            n = n + 0
        i += 1
    return i


@pytest.mark.parametrize("mode", MODES)
def test_comparing_a_counter_does_not_change_its_dtype(mode):
    """The widening is no evidence of the counter's dtype: the same counter whatever unsigned
    dtype it is compared with (a cast of the counter itself would have made it int64 next to uint32)."""
    got = {np.dtype(d).name: traced(counter_compared_with_unsigned, mode, d(1), np.int32(3))
           for d in (np.uint8, np.uint16, np.uint32)}
    assert all(int(v) == counter_compared_with_unsigned(np.uint8(1), np.int32(3)) for v in got.values())
    assert len({np.asarray(v).dtype for v in got.values()}) == 1, got


def list_compared(x, n):
    numbers = []
    for i in range(n):
        numbers.append(i - 2)
    return x < numbers


def negative_counter_compared(x, n):
    k = 0
    i = 0
    while i < n:
        k += -1
        i += 1
    return x < k


@pytest.mark.parametrize("mode", MODES)
def test_a_staged_list_of_python_ints_compares_exactly(mode):
    got = traced(list_compared, mode, np.uint32(7), np.int32(4))
    np.testing.assert_array_equal(got, list_compared(np.uint32(7), np.int32(4)))


@pytest.mark.parametrize("mode", MODES)
def test_a_counter_the_graph_cannot_compare_exactly_is_refused_saying_so(mode):
    """A weak int32 counter next to a uint32: no dtype holds both without casting the counter, whose casts
    decide its dtype; the graph refuses a value it cannot compare exactly, and says it is a comparison."""
    assert negative_counter_compared(np.uint32(7), np.int32(1)) == False  # noqa: E712 - numpy's bool
    with pytest.raises(OverflowError, match=r"is compared with a uint32 tensor at .*test_weak_overflow.py:\d+, "
                                             r"but is out of uint32's bounds: Python compares them exactly"):
        traced(negative_counter_compared, mode, np.uint32(7), np.int32(1))
    assert traced(negative_counter_compared, mode, np.uint32(7), np.int32(0)) == False  # noqa: E712

# -- a counter that wraps in its partner's dtype: numpy's warning, at the user's line ------------

def wrapping_sum(x, n):
    s = 0
    for _ in range(n):
        s += x  # int8 + int8: wraps, as numpy scalars do in Python too
    return s


def _line_of(fn, text):
    source, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(source) if text in line)


NUMPY_MODES = [m for m in MODES if m != "jax"]  # (numpy's warnings: the numpy backend's)


@pytest.mark.parametrize("mode", NUMPY_MODES)
def test_an_overflowing_counter_warns_at_the_users_line(mode):
    fn = ag.function(wrapping_sum, **MODES[mode])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = fn(np.int8(100), np.int32(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert got == wrapping_sum(np.int8(100), np.int32(3)) and got.dtype == np.int8  # numpy's wrap
    overflows = [w for w in caught if issubclass(w.category, RuntimeWarning) and "overflow" in str(w.message)]
    assert overflows and all(w.filename == __file__ for w in overflows)
    # the line of the op; jit compiles the loop into one line, so its line is the loop's
    line = _line_of(wrapping_sum, "for _ in range" if mode == "jit" else "s += x")
    assert {w.lineno for w in overflows} == {line}


@pytest.mark.parametrize("mode", NUMPY_MODES)
def test_the_callers_numpy_error_settings_still_apply(mode):
    fn = ag.function(wrapping_sum, **MODES[mode])
    fn(np.int8(1), np.int32(3))  # traced outside the settings
    with np.errstate(over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fn(np.int8(100), np.int32(3)) == np.int8(44)
    with np.errstate(over="raise"), pytest.raises((FloatingPointError, ag.ExecutionError)) as info:
        fn(np.int8(100), np.int32(3))
    assert isinstance(info.value, FloatingPointError) or isinstance(info.value.__cause__, FloatingPointError)
    assert np.geterr()["over"] == "warn"  # and they are the caller's again after the call


def hot_wrapping_loop(x, limit):
    steps = 0
    while x < limit:
        x = x + np.uint8(1)  # wraps at 255 twice: once interpreted, once in the loop tiering compiled
        steps += 1
        if steps > 300:
            break
    return steps


@pytest.mark.parametrize("mode", NUMPY_MODES)
def test_an_overflow_in_a_hot_compiled_loop_warns_at_the_users_line(mode):
    """A hot loop continues in compiled code (exec/tiering.py), whose line updating the loop's variables
    computes several ops: its overflow is the loop's, at the loop's line, never a generated file's."""
    fn = ag.function(hot_wrapping_loop, **MODES[mode])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert fn(np.uint8(250), 1000) == 301
    overflows = [w for w in caught if issubclass(w.category, RuntimeWarning) and "overflow" in str(w.message)]
    assert len(overflows) >= 2 and all(w.filename == __file__ for w in overflows), [
        (w.filename, w.lineno, str(w.message)) for w in overflows]
    lines = {_line_of(hot_wrapping_loop, "while x < limit"), _line_of(hot_wrapping_loop, "x = x + np.uint8(1)")}
    assert {w.lineno for w in overflows} <= lines
