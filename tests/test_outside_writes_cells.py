"""A ``nonlocal`` variable a helper changes in a tensor statement is found through the frames around it.

``inc`` (``nonlocal k``) is defined in the function, not in the loop body
that reads ``k``: the snapshot sees ``k`` change in the loop body's frame
and must find its cell through ``inc``'s closure in the function's frame
(``outside_writes._cell_of``), making it state; it used to refuse ("'k'
changed ... but it is not a variable of that if"; fuzz seeds 160 and 187
with ``helper_call``).  A helper's own ``k`` is not confused with its
caller's.
"""

from __future__ import annotations

import ctypes
import sys
import warnings

import numpy as np
import pytest

import autograph as ag

MODES = {
    "interpreter": {},
    "unoptimized": {"optimize": False},
    "jit": {"jit_compile": True},
}


def loop_reads_k_helper_changes_it(n):
    k = 1

    def inc(x):
        nonlocal k
        k = (k + x) % 97

    i = 0
    while i < n:
        i += 1
        if k > 50:
            i += 1
        if i > 1:
            inc(i)
    return k, i


def helper_with_its_own_k(n):
    k = 1

    def inc(x):
        nonlocal k
        k = k + x

    if n > 1:
        inc(1)
    return k


def caller_with_another_k(n):
    k = 1
    i = 0
    while i < n:
        i += 1
        if k > 50:
            i += 1
        k = k + 0
    return k, helper_with_its_own_k(n), i


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [loop_reads_k_helper_changes_it, caller_with_another_k])
def test_nonlocal_changed_by_a_helper_is_state(fn, mode):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = ag.function(fn, **MODES[mode])
        for n in (0, 1, 3, 6):
            got, want = traced(np.int32(n)), fn(np.int32(n))
            assert tuple(int(x) for x in got) == tuple(int(x) for x in want), (n, got, want)


# -- a plain local written through its frame (no closure cell): refused, never silently once ---------

def _bump_callers_scale():
    frame = sys._getframe(1)
    while frame.f_code is not uses_scale.__code__ and frame.f_code.co_name != "uses_scale":
        frame = frame.f_back
    frame.f_locals["scale"] += 1  # Python 3.13 (PEP 667): writes through to the variable
    if sys.version_info < (3, 13):
        ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))
    return 0


def uses_scale(n):
    scale = 1  # read by no nested function: a plain local, not a closure cell
    i = 0
    while i < n:
        i += 1 + _bump_callers_scale()
    return i * scale


@pytest.mark.parametrize("mode", MODES)
def test_a_local_written_through_the_frame_by_a_call_is_refused(mode):
    assert uses_scale(np.int32(3)) == 12  # Python: the helper runs at every iteration
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ag.TracingError, match=r"'scale' changed while the body of the while loop at .*"
                                                  r"test_outside_writes_cells.py:\d+ was traced"):
            ag.function(uses_scale, **MODES[mode])(np.int32(3))
