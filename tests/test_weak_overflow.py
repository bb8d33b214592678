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
