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
