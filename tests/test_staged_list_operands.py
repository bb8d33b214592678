"""A staged list of Python numbers used as an array operand next to numpy values.

A list appended to in a tensor loop or branch is staged as one tensor; a
list of Python numbers only is weakly typed (``runtime/tracing/staged_list.py``).
Next to a numpy value, though, numpy converts a Python list to a *strong*
array of its default dtype (``np.asarray([1, 2])`` is int64, ``[1.5]``
float64, ``[True]`` bool), not to a weak scalar's NEP 50 dtype:
``np.uint8(0) + [-2]`` is int64 ``[-2]``, never uint8 ``[254]``
(``runtime/ops/common.py``: ``promote``).  Every mode must give Python's
value and dtype, or Python's error; an empty list (``np.asarray([])`` is
float64) where that changes the result is refused when the graph runs.
"""

from __future__ import annotations

import importlib.util
import operator
import re
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

OPS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow,
    "and": operator.and_, "or": operator.or_, "xor": operator.xor,
    "lshift": operator.lshift, "rshift": operator.rshift,
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
    "eq": operator.eq, "ne": operator.ne,
}

XS = {
    "uint8": np.uint8(3), "int32": np.int32(3), "int64": np.int64(3), "float32": np.float32(3),
    "uint64": np.uint64(7),
    "uint8[4]": np.array([1, 2, 3, 250], np.uint8), "int32[4]": np.array([1, -2, 3, 4], np.int32),
    "int64[4]": np.array([1, -2, 3, 4], np.int64), "float32[4]": np.array([1.5, -2, 3, 4], np.float32),
}


def _make(op, side, elements):
    """A function building a staged list of Python numbers in a tensor loop and combining it with x."""
    def f(x, n):
        numbers = []
        for i in range(n):
            numbers.append(elements(i))
        return op(x, numbers) if side == "xl" else op(numbers, x)
    return f


ELEMENTS = {
    "ints": lambda i: 2 * i - 3,            # [-3, -1, 1, 3]: negative, nonzero
    "small_ints": lambda i: i + 1,          # [1, 2, 3, 4]: for powers and shifts
    "floats": lambda i: i * 0.5 - 0.75,
    "bools": lambda i: i % 2 == 0,
}


def traced(fn, mode, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ag.function(fn, **MODES[mode])(*args)


def plain(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args)


def _same(expected, got, where):
    assert not isinstance(got, (list, tuple)), f"{where}: expected {expected!r}, got {got!r}"
    e, g = np.asarray(expected), np.asarray(got)
    assert e.shape == g.shape, f"{where}: expected {expected!r}, got {got!r}"
    assert g.dtype == e.dtype, f"{where}: expected dtype {e.dtype} ({expected!r}), got {g.dtype} ({got!r})"
    assert np.array_equal(e, g, equal_nan=e.dtype.kind == "f"), f"{where}: expected {expected!r}, got {got!r}"


def compare(fn, mode, *args, empty_refusal=False):
    """Python's value and dtype, or Python's exception type; a refusal is accepted only where named."""
    try:
        expected = plain(fn, *args)
    except Exception as e:  # noqa: BLE001 - Python's error, whatever it is, is what the graph must raise
        with pytest.raises((type(e), ag.TracingError) if isinstance(e, TypeError) else type(e)):
            traced(fn, mode, *args)
        return
    if isinstance(expected, list):  # an integer scalar repeats the list: a tensor count is refused
        with pytest.raises(ag.TracingError, match="repeating .* by a tensor count"):
            traced(fn, mode, *args)
        return
    try:
        got = traced(fn, mode, *args)
    except ValueError as e:
        if empty_refusal and "is empty when the graph runs" in str(e):
            return
        raise
    _same(expected, got, f"{mode}")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("side", ["xl", "lx"])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("kind", ["ints", "floats", "bools"])
def test_a_list_of_python_numbers_is_numpys_array_next_to_a_numpy_value(kind, op, side, mode):
    elements = ELEMENTS["small_ints" if kind == "ints" and op in ("pow", "lshift", "rshift") else kind]
    fn = _make(OPS[op], side, elements)
    for x in XS.values():
        compare(fn, mode, x, np.int32(4))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("x", ["uint8", "int32", "float32", "int32[4]"])
def test_the_reproducer(x, mode):
    def f(x, n):
        l = []
        for i in range(n):
            l.append(i - 2)
        return x + l

    _same(f(XS[x], np.int32(4)), traced(f, mode, XS[x], np.int32(4)), mode)


@pytest.mark.parametrize("mode", MODES)
def test_a_list_of_python_ints_compared_with_a_uint64(mode):
    def f(x, n):
        l = []
        for i in range(n):
            l.append(i - 2)
        return x < l, x == l, l >= x

    expected = f(np.uint64(7), np.int32(4))
    got = traced(f, mode, np.uint64(7), np.int32(4))
    for e, g in zip(expected, got):
        _same(e, g, mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", ["add", "sub", "truediv", "lt", "eq", "and"])
@pytest.mark.parametrize("kind", ["ints", "floats", "bools"])
def test_an_empty_list_gives_pythons_value_or_is_refused_when_the_graph_runs(kind, op, mode):
    fn = _make(OPS[op], "xl", ELEMENTS[kind])
    for x in ("uint8", "int32", "float32"):
        compare(fn, mode, XS[x], np.int32(0), empty_refusal=True)


@pytest.mark.parametrize("mode", MODES)
def test_an_empty_list_of_ints_where_numpy_gives_float64_is_refused_saying_so(mode):
    fn = _make(operator.add, "xl", ELEMENTS["ints"])
    assert plain(fn, np.int32(3), np.int32(0)).dtype == np.float64
    with pytest.raises(ValueError, match=r"the staged list 'numbers' of .* is empty when the graph runs.*"
                                         r"np\.asarray\(\[\]\)"):
        traced(fn, mode, np.int32(3), np.int32(0))
    _same(fn(np.int32(3), np.int32(2)), traced(fn, mode, np.int32(3), np.int32(2)), mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", ["lt", "eq", "ne"])
def test_an_empty_list_compared_is_pythons_empty_bool_array(op, mode):
    fn = _make(OPS[op], "xl", ELEMENTS["ints"])
    _same(fn(np.uint8(3), np.int32(0)), traced(fn, mode, np.uint8(3), np.int32(0)), mode)


def strong_list(x, y, n):
    values = []
    for _ in range(n):
        values.append(y)
    return x + values, x < values


@pytest.mark.parametrize("mode", MODES)
def test_a_list_of_numpy_values_keeps_their_dtype(mode):
    for y in (np.int32(-2), np.int8(-2), np.float32(-2.5)):
        expected = strong_list(np.uint8(3), y, np.int32(3))
        got = traced(strong_list, mode, np.uint8(3), y, np.int32(3))
        for e, g in zip(expected, got):
            _same(e, g, mode)


# -- a list with Python numbers only: Python's list operators ------------------------------------

def _python_ints(n):
    numbers = []
    for i in range(n):
        numbers.append(i - 2)
    return numbers


def with_one(n):
    numbers = _python_ints(n)
    return numbers + 1


def one_with(n):
    numbers = _python_ints(n)
    return 1 - numbers


def compared_with_one(n):
    numbers = _python_ints(n)
    return numbers < 1


def with_counter(n):
    numbers = []
    total = 0
    for i in range(n):
        numbers.append(i)
        total = numbers + i
    return total


def counter_compared(n):
    numbers = []
    same = True
    for i in range(n):
        numbers.append(i)
        same = numbers < i
    return same


def negated(n):
    return -_python_ints(n)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [with_one, one_with, compared_with_one, with_counter, counter_compared, negated],
                         ids=lambda fn: fn.__name__)
def test_a_list_with_python_numbers_only_is_pythons_type_error(fn, mode):
    with pytest.raises(TypeError) as python_error:
        fn(3)
    with pytest.raises((TypeError, ag.TracingError)) as got:
        traced(fn, mode, np.int32(3))
    if isinstance(got.value, ag.TracingError):  # the first trace sees a Python list of tensors
        assert fn in (with_counter, counter_compared) and "symbolic tensor" in str(got.value)
        return
    assert str(got.value).split(":")[0] in str(python_error.value), (got.value, python_error.value)


def equal_to_numbers(n):
    numbers = _python_ints(n)
    found = False
    for i in range(n):
        found = numbers == i
    return numbers == 1, numbers != 1, 2.5 == numbers, found


@pytest.mark.parametrize("mode", MODES)
def test_a_list_equal_to_a_python_number_is_false(mode):
    assert equal_to_numbers(3) == (False, True, False, False)
    got = traced(equal_to_numbers, mode, np.int32(3))
    assert [bool(v) for v in got] == [False, True, False, False]
    assert all(isinstance(v, (bool, np.bool_)) for v in got), got


def repeated_and_joined(n):
    numbers = _python_ints(n)
    return numbers * 2, numbers + numbers


@pytest.mark.parametrize("mode", MODES)
def test_a_list_repeated_or_joined_is_a_list(mode):
    expected = repeated_and_joined(3)
    got = traced(repeated_and_joined, mode, np.int32(3))
    for e, g in zip(expected, got):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))  # a staged list comes back as an array


# -- a list of numpy values and Python numbers: numpy's array joins both kinds ---------------------
#
# ``np.asarray([np.int32(1), 2])`` is int64 and ``[np.float32(1), 2.0]`` float64, where the staged
# list keeps one dtype (int32, float32: NEP 50 for the numbers joining it); and without its Python
# numbers (a loop that ran zero times) the array is int32 again.  One graph cannot give both, so
# such a list used as an array is refused, naming it and the line, wherever numpy's dtype for it is
# not the list's own (an int64 list with Python ints, an int32 list with Python bools keep theirs).

def counter_after_numpy_value(x, n):
    l = [np.int32(1)]
    for i in range(n):
        l.append(i)
    return x + l


def floats_after_numpy_value(x, n):
    l = [np.float32(1)]
    for i in range(n):
        l.append(i * 0.5)
    return x - l


def numpy_values_after_numbers(x, n):
    l = [1, 2]
    for _ in range(n):
        l.append(x)
    return x + l


def numbers_appended_to_a_staged_list(x, n):  # a list staged by one loop, numbers appended by another
    l = []
    for _ in range(n):
        l.append(x)
    y = x < l  # numpy values only, so far: an array of their dtype
    for i in range(n):
        y = x < l  # before the append: the list holds the numbers of earlier iterations
        l.append(i)
    return y


def numbers_in_one_branch(x, n):
    l = [x]
    if n > 2:
        l.append(1)
    else:
        l.append(x)
        l.append(x)
    return x - l


def numbers_concatenated(x, n):
    l = []
    for _ in range(n):
        l.append(x)
    return x + (l + [1])


def numbers_extended_then_popped(x, n):
    l = [1]
    for _ in range(n):
        l.append(x)
    l.extend([5, 6])
    l.pop(0)
    return x == l


MIXED = [counter_after_numpy_value, floats_after_numpy_value, numpy_values_after_numbers,
         numbers_appended_to_a_staged_list, numbers_in_one_branch, numbers_concatenated,
         numbers_extended_then_popped]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", MIXED, ids=lambda fn: fn.__name__)
def test_a_list_of_numpy_values_and_python_numbers_as_an_array_is_refused(fn, mode):
    for x in (np.uint8(200), np.int32(3), np.float32(1.5)):
        for n in (np.int32(0), np.int32(3)):
            expected = plain(fn, x, n)  # Python's answer, which a list of one dtype cannot give for every n
            assert np.asarray(expected).dtype != (x + np.zeros(0, x.dtype)).dtype or n == 0, (fn, x, n)
            with pytest.raises(ag.TracingError) as refusal:
                traced(fn, mode, x, n)
            if "an item of it is read" in str(refusal.value):  # (pop of a uint8 list: list_operators)
                assert re.search(r"the staged list 'l' of .*test_staged_list_operands\.py:\d+ holds Python "
                                 r"numbers beside uint8 values", str(refusal.value)), refusal.value
                continue
            assert re.search(r"the staged list 'l' of .*test_staged_list_operands\.py:\d+ holds \w+ values and "
                             r"Python numbers, used as an array at .*test_staged_list_operands\.py:\d+",
                             str(refusal.value)), refusal.value
            assert "Make its elements one kind" in str(refusal.value), refusal.value


def numbers_joining_int64_and_bools_joining_int32(x, n):
    wide, narrow = [np.int64(5)], [np.int32(5)]
    for i in range(n):
        wide.append(i - 2)
        narrow.append(i > 0)
    return x + wide, x < narrow, x + narrow


@pytest.mark.parametrize("mode", MODES)
def test_a_mixed_list_is_refused_only_where_numpys_dtype_is_not_the_lists(mode):
    for x in (np.uint8(200), np.int32(3), np.float32(1.5)):
        for n in (np.int32(0), np.int32(3)):
            for e, g in zip(numbers_joining_int64_and_bools_joining_int32(x, n),
                            traced(numbers_joining_int64_and_bools_joining_int32, mode, x, n)):
                _same(e, g, f"{mode} ({x!r}, {n!r})")
    with pytest.raises(ag.TracingError, match=r"the staged list 'l' .* holds int32 values and Python numbers.*"
                                              r"an array of both kinds, int64.*rt\.cast\(\.\.\., 'int64'\)"):
        traced(counter_after_numpy_value, mode, np.uint8(200), np.int32(3))


def cast_first(x, n):
    l = [np.int32(1)]
    for i in range(n):
        l.append(i)
    return x + ag.runtime.cast(l, "int64")


@pytest.mark.parametrize("mode", MODES)
def test_the_advice_for_a_mixed_list_works(mode):
    with pytest.raises(ag.TracingError, match=r"rt\.cast\(\.\.\., 'int64'\)"):
        traced(counter_after_numpy_value, mode, np.uint8(200), np.int32(3))
    for n in (np.int32(0), np.int32(3)):
        _same(plain(cast_first, np.uint8(200), n), traced(cast_first, mode, np.uint8(200), n), mode)
