"""Trace-cache keys tell apart whatever the traced Python code could tell apart.

Each case runs the Python function and the traced one on the same
arguments, through both the cached-call hot path (positional arguments)
and the slow path (keywords), and compares.
"""

from __future__ import annotations

import collections
import math
import warnings

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.tracing.function import RetracingWarning


def both_paths(traced, python, *cases):
    """Each case, called positionally then by keyword, twice: the traced result equals Python's."""
    for args in cases:
        for _ in range(2):
            expected = python(*args)
            got = traced(*args)
            assert got == expected or (got != got and expected != expected), (args, got, expected)
            assert type(got) is type(expected), (args, got, expected)
            assert traced(**dict(zip(("x", "y"), args))) == got or got != got


def test_minus_zero_and_zero_are_two_keys():
    def inv(x, y):
        return y / x

    g = ag.function(inv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's divide by zero, as in Python
        both_paths(g, inv, (0.0, np.float64(1)), (-0.0, np.float64(1)))
        assert g(0.0, np.float64(1)) == math.inf and g(-0.0, np.float64(1)) == -math.inf
    assert g.tracing_count == 2


def test_copysign_sees_the_sign_of_a_python_zero():
    def sign(x, y):
        return y * math.copysign(1.0, x)

    both_paths(ag.function(sign), sign, (0.0, np.float32(2)), (-0.0, np.float32(2)))


def test_nan_argument_is_one_key_and_never_retraces():
    def f(x, y):
        return y + 1 if x != x else y - 1

    g = ag.function(f)
    for _ in range(5):
        both_paths(g, f, (math.nan, np.float32(1)))
    assert g.tracing_count == 1
    both_paths(g, f, (-math.nan, np.float32(1)))  # the sign of a NaN is a value copysign can see
    assert g.tracing_count == 2


def test_true_one_and_one_point_zero_are_three_keys():
    def kind(x, y):
        return y * len(type(x).__name__) + (1 if x is True else 0)

    g = ag.function(kind)
    both_paths(g, kind, (True, np.int32(1)), (1, np.int32(1)), (1.0, np.int32(1)))
    assert [g(v, np.int32(1)) for v in (True, 1, 1.0)] == [5, 3, 5]
    assert g.tracing_count == 3


def test_dict_keys_true_and_one_are_two_keys():
    def key_type(d):
        (k,) = d
        return d[k] * (2 if type(k) is bool else 3)

    g = ag.function(key_type)
    assert g({True: np.int32(1)}) == key_type({True: np.int32(1)}) == 2
    assert g({1: np.int32(1)}) == key_type({1: np.int32(1)}) == 3
    assert g({1.0: np.int32(1)}) == 3 and g.tracing_count == 3


def test_dict_insertion_order_is_part_of_the_key():
    def digits(d):
        total = 0
        for k in d:
            total = total * 10 + d[k]
        return total

    g = ag.function(digits)
    for d in ({"b": np.int32(2), "a": np.int32(1)}, {"a": np.int32(1), "b": np.int32(2)}):
        assert g(d) == digits(d)
    assert g({"b": np.int32(2), "a": np.int32(1)}) == 21
    assert g.tracing_count == 2


def test_dict_with_input_signature_must_keep_the_signature_order():
    spec = {"a": rt.TensorSpec((), "int32"), "b": rt.TensorSpec((), "int32")}
    g = ag.function(lambda d: d["a"] * 10 + d["b"], input_signature=[spec])
    assert g({"a": np.int32(1), "b": np.int32(2)}) == 12
    with pytest.raises(TypeError, match=r"argument 'd' must be a dict with keys \['a', 'b'\], in that order.*pass "
                                        r"the keys in the signature's order"):
        g({"b": np.int32(2), "a": np.int32(1)})
    with pytest.raises(TypeError, match=r"pass a dict with exactly those keys"):
        g({"a": np.int32(1)})


def test_tuple_and_list_are_two_keys():
    def f(s):
        return s[0] * (2 if isinstance(s, tuple) else 3)

    g = ag.function(f)
    assert g((np.int32(1),)) == f((np.int32(1),)) == 2
    assert g([np.int32(1)]) == f([np.int32(1)]) == 3
    assert g.tracing_count == 2


def test_namedtuple_types_with_the_same_fields_are_two_keys():
    A = collections.namedtuple("A", "x")
    B = collections.namedtuple("B", "x")

    def f(p):
        return p.x * (2 if isinstance(p, A) else 3)

    g = ag.function(f)
    assert g(A(np.int32(1))) == f(A(np.int32(1))) == 2
    assert g(B(np.int32(1))) == f(B(np.int32(1))) == 3
    assert g(A(np.int32(4))) == 8 and g.tracing_count == 2


def test_dict_subclasses_keep_their_type_and_default_factory():
    def f(d):
        return d["x"] + d["missing"] * 0 if isinstance(d, collections.defaultdict) else d["x"]

    g = ag.function(f)
    dd = collections.defaultdict(lambda: np.int32(5), {"x": np.int32(1)})
    assert g(dd) == f(collections.defaultdict(lambda: np.int32(5), {"x": np.int32(1)})) == 1
    assert g({"x": np.int32(1)}) == 1
    assert g(collections.OrderedDict(x=np.int32(2))) == 2
    assert g.tracing_count == 3


def test_list_subclass_keeps_its_type():
    class Row(list):
        pass

    def f(r):
        return r[0] * (2 if isinstance(r, Row) else 3)

    g = ag.function(f)
    assert g(Row([np.int32(1)])) == f(Row([np.int32(1)])) == 2
    assert g([np.int32(1)]) == 3


def test_python_complex_and_bytes_are_static_constants():
    def f(x, c):
        return x * c.real if isinstance(c, complex) else x * len(c)

    g = ag.function(f)
    assert g(np.float32(2), 3 + 1j) == f(np.float32(2), 3 + 1j) == 6
    assert g(np.float32(2), b"ab") == f(np.float32(2), b"ab") == 4
    assert g(np.float32(2), 3 - 0j) == 6 and g.tracing_count == 3  # -0j is another imaginary part


def test_numpy_values_of_one_spec_share_a_trace_whatever_their_values():
    g = ag.function(lambda x: x + 1)
    for value in (0.0, -0.0, math.nan, 3.5):
        out = g(np.float64(value))
        expected = np.float64(value) + 1
        assert out == expected or (out != out and expected != expected)
    assert g.tracing_count == 1


def test_retracing_warning_names_an_object_argument():
    class Box:
        pass

    g = ag.function(lambda x, box: x)
    with pytest.warns(RetracingWarning, match=r"argument 'box' changed from .*Box object.*pass the same object "
                                                 r"each time, or give its type a __autograph_trace_key__"):
        for _ in range(7):
            g(np.float32(1), Box())


def test_a_frozen_dataclass_is_keyed_by_its_fields_signs_and_types():
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Cfg:
        eps: float

    def f(x, cfg):
        return x / cfg.eps, cfg.eps * 2

    g = ag.function(f)
    # Cfg(0.0) == Cfg(-0.0) and Cfg(1) == Cfg(1.0) in Python, but the traced code tells them apart
    assert g(np.float64(1), Cfg(0.0))[0] == np.inf and g(np.float64(1), Cfg(-0.0))[0] == -np.inf
    assert type(g(np.float64(1), Cfg(1))[1]) is int and type(g(np.float64(1), Cfg(1.0))[1]) is float
