"""Differential test of trace-cache keys: one ``ag.function``, many calls, each as Python computes it.

A Python value passed to an ``ag.function`` is part of the trace: the graph
bakes it in.  The cache key must therefore tell apart whatever the traced
code could tell apart: ``0.0`` from ``-0.0`` (``t / x``), ``True`` from
``1`` from ``1.0`` (``isinstance``), ``{'a': 1, 'b': 2}`` from
``{'b': 2, 'a': 1}`` (iteration order), a tuple from a list.  Hypothesis
draws a sequence of calls to one function, each compared with the plain
Python function on the same arguments, so a call that reuses a wrong
trace gives a different value.  Fixed cases follow: mutable defaults
changed between calls, dict keys and frozensets of numbers of other types.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import autograph as ag

SCALARS = st.sampled_from([0.0, -0.0, 1, True, False, 0, 1.0, 2.5, -1, float("inf"), float("-inf"), float("nan")])


def divide(x, t):
    return t / x


def by_type(x, t):
    tag = 0
    if isinstance(x, bool):
        tag += 1
    if isinstance(x, int):
        tag += 10
    if isinstance(x, float):
        tag += 100
    return t + tag


def digits(d, t):
    out = t
    for key in d:
        out = out * 10 + d[key]
    return out


def kind_of(xs, t):
    return t + (1 if type(xs) is list else 2) + len(xs)


def same(want, got) -> bool:
    want, got = np.asarray(want), np.asarray(got)
    if want.dtype != got.dtype or want.shape != got.shape:
        return False
    return bool(np.all((want == got) | (np.isnan(want) & np.isnan(got)) if want.dtype.kind == "f" else want == got)) \
        and bool(np.all(np.signbit(want) == np.signbit(got)) if want.dtype.kind == "f" else True)


def run_calls(fn, calls):
    traced = ag.function(fn)
    for args in calls:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # divide by zero, retracing
            want = fn(*args)
            got = traced(*args)
        assert same(want, got), f"{fn.__name__}{args!r}: graph {got!r}, Python {want!r}"
    return traced


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.lists(SCALARS, min_size=2, max_size=8))
def test_signed_zero_and_special_floats_get_their_own_traces(xs):
    run_calls(divide, [(x, np.float64(1.0)) for x in xs if x != 0 or isinstance(x, float)])


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.lists(SCALARS, min_size=2, max_size=8))
def test_python_scalar_types_are_told_apart(xs):
    run_calls(by_type, [(x, np.float32(0.5)) for x in xs])


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.lists(st.permutations(["a", "b", "c"]).map(lambda keys: {k: "abc".index(k) + 1 for k in keys}),
                min_size=2, max_size=6))
def test_dict_insertion_order_is_part_of_the_key(dicts):
    run_calls(digits, [(d, np.int64(0)) for d in dicts])


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 3)), min_size=2, max_size=6))
def test_tuple_and_list_arguments_are_told_apart(shapes):
    calls = [((list if as_list else tuple)(range(size)), np.int32(0)) for as_list, size in shapes]
    run_calls(kind_of, calls)


def test_nan_arguments_do_not_retrace_forever():
    traced = run_calls(divide, [(float("nan"), np.float64(1.0))] * 5)
    assert traced.tracing_count == 1
    assert math.isnan(traced(float("nan"), np.float64(2.0)))


# -- fixed cases: a cached trace once gave another value than Python


def _both(fn):
    return fn, ag.function(fn)


def test_a_mutable_default_list_changed_between_calls_retraces():
    default = [1]

    def f(x, items=default):
        return x + len(items)

    python, traced = _both(f)
    x = np.float32(0)
    assert traced(x) == python(x) == 1.0
    default.append(2)  # the cached call's key must not be made of the positional arguments only
    assert traced(x) == python(x) == 2.0
    assert traced.tracing_count == 2


def test_a_mutable_default_dict_changed_between_calls_retraces():
    config = {}

    def f(x, cfg=config):
        return x + cfg.get("scale", 0)

    python, traced = _both(f)
    x = np.float32(1)
    assert traced(x) == python(x) == 1.0
    config["scale"] = 5
    assert traced(x) == python(x) == 6.0


def test_constant_defaults_keep_the_hot_path():
    @ag.function
    def f(x, n=3, name="a", pair=(1, 2.0)):
        return x * n

    x = np.float32(2)
    assert f(x) == 6.0 and f(x) == 6.0
    assert len(f._traces.fast) == 1


@pytest.mark.parametrize("keys", [((1, 2), (1.0, 2), (True, 2)), ((0.0, 1), (-0.0, 1))])
def test_tuple_dict_keys_tell_number_types_and_signed_zero_apart(keys):
    def f(x, d):
        for k in d:
            return x, k[0]

    python, traced = _both(f)
    x = np.float32(0)
    for key in keys:
        got, want = traced(x, {key: 0})[1], python(x, {key: 0})[1]
        assert (type(got), repr(got)) == (type(want), repr(want))


def test_frozenset_static_arguments_tell_member_types_apart():
    def f(x, s):
        return x, next(iter(s))

    python, traced = _both(f)
    x = np.float32(0)
    for members in (frozenset({1}), frozenset({1.0}), frozenset({True})):
        got, want = traced(x, members)[1], python(x, members)[1]
        assert (type(got), got) == (type(want), want)
    assert traced.tracing_count == 3
