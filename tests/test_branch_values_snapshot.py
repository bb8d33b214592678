"""A tensor ``if``'s branch values are taken when the branch ends, not after the other branch.

The true branch of ``if a > 5: return a, d`` gives a tuple holding the
user's dict ``d``, which is not the ``if``'s state; a helper called in the
false branch (``put(d, a)``, made state by ``outside_writes``) then writes
the dict in place.  The true branch's value must still show ``d`` as it was
at its end, or it holds a tensor of the false branch's graph (once an
internal "belongs to another graph" error; fuzz seed 39 with ``alias`` and
``helper_call``).
"""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import autograph as ag

MODES = {
    "interpreter": {},
    "unoptimized": {"optimize": False},
    "jit": {"jit_compile": True},
}


def put(d, x):
    d["y"] = d["y"] + x


def returns_dict_another_branch_changes(a, n):
    d = {"x": n, "y": 0}
    if a > 5:
        return a, d
    elif a > 1:
        put(d, a)
    return n, d


def loop_returns_dict_another_branch_changes(a, n):
    d = {"x": n, "y": 0}
    i = 0
    while i < n:
        i += 1
        if a > 5:
            return a, d
        elif a > 1:
            put(d, a)
    return i, d


def _same(got, want):
    assert type(got) is type(want) and len(got) == len(want)
    assert got[0] == want[0]
    assert got[1].keys() == want[1].keys()
    for key in want[1]:
        assert got[1][key] == want[1][key], (key, got, want)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [returns_dict_another_branch_changes, loop_returns_dict_another_branch_changes])
def test_true_branch_value_is_not_changed_by_the_false_branch(fn, mode):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = ag.function(fn, **MODES[mode])
        for a, n in [(3, 2), (7, 1), (0, 4), (2, 0)]:
            args = (np.int32(a), np.int32(n))
            _same(traced(*args), fn(*copy.deepcopy(args)))
