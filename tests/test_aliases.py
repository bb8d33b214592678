"""Aliases of a list grown in a tensor loop or branch (issue 16, item 1).

A list that a tensor ``for``/``while``/``if`` grows with ``append`` is
staged: one tensor of its elements, bound to the state variable.  Another
name or path for the same Python list (``ys = xs``, ``out = {'r': xs}``,
``items = self.items``) cannot see the new elements, so it is a
``TracingError`` naming both, in every execution mode; a list reached under
one name only, or aliased without being grown, is unaffected.
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

n3 = np.int32(3)


def traced(fn, options, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ag.function(fn, **options)(*args)


def alias_by_name(n):
    xs = []
    ys = xs
    for i in range(n):
        ys.append(i)
    return xs


def alias_in_dict(n):
    results = []
    out = {"r": results}
    for i in range(n):
        results.append(i)
    return out["r"]


def alias_in_while(n):
    xs = [0]
    ys = xs
    i = 0
    while i < n:
        ys.append(i)
        i += 1
    return len(xs)


def alias_in_if(n):
    xs = []
    ys = xs
    if n > 0:
        ys.append(n)
    return xs


class Holder:
    def __init__(self):
        self.items = []


HOLDER = Holder()


def alias_of_attribute(n):
    items = HOLDER.items
    for i in range(n):
        items.append(i)
    return HOLDER.items


STALE = [
    (alias_by_name, "ys", "xs"),
    (alias_in_dict, "results", "out['r']"),
    (alias_in_while, "ys", "xs"),
    (alias_in_if, "ys", "xs"),
    (alias_of_attribute, "items", "HOLDER.items"),
]


def alias_rebound_after(n):
    xs = []
    ys = xs
    for i in range(n):
        ys.append(i)
    xs = ys
    return xs


# Identity cannot see that 'xs' is rebound before it is read again: a refusal, never a wrong value.
STALE.append((alias_rebound_after, "ys", "xs"))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn, grown, alias", STALE, ids=[case[0].__name__ for case in STALE])
def test_a_stale_alias_of_a_staged_list_is_refused_naming_both(fn, grown, alias, mode):
    HOLDER.items = []
    fn(n3)  # plain Python runs: the aliases see the appends there
    HOLDER.items = []
    with pytest.raises(ag.TracingError) as info:
        traced(fn, MODES[mode], n3)
    message = str(info.value)
    assert f"the list '{grown}' changes length in the " in message
    assert f"also reached as '{alias}'" in message
    assert "test_aliases.py:" in message
    assert HOLDER.items == []  # tracing never appended to the user's list


def one_name(n):
    xs = []
    for i in range(n):
        xs.append(i)
    return xs


def alias_not_grown(n):
    xs = [0, 0]
    ys = xs
    for i in range(n):
        ys[0] = ys[0] + i
    return xs


def alias_nested_loop(n):
    out = []
    for j in range(2):
        row = []
        for i in range(n):
            row.append(i + j)
        out.append(len(row))
    return out


SOUND = [one_name, alias_not_grown, alias_nested_loop]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", SOUND, ids=[fn.__name__ for fn in SOUND])
def test_lists_under_one_name_or_not_grown_keep_their_values(fn, mode):
    expected = fn(n3)
    got = traced(fn, MODES[mode], n3)
    if isinstance(got, np.ndarray):  # a staged list comes back as one array of its elements
        got = got.tolist()
    elif isinstance(got, list):
        got = [np.asarray(v).tolist() for v in got]
    assert got == expected


def two_state_paths_one_list(n):
    acc = [0]
    box = {"r": acc}
    i = 0
    while i < n:
        acc[0] = acc[0] + 1
        box["r"][0] = box["r"][0] + 10
        i += 1
    return acc[0]


def branch_reads_the_alias(n):
    acc = [0]
    box = {"r": acc}
    size = 0
    if n > 1:
        box["r"].append(1)
        size = len(acc)
    return size, len(box["r"])


@pytest.mark.parametrize("mode", MODES)
def test_a_loop_whose_state_reaches_one_list_at_two_paths_is_refused(mode):
    assert two_state_paths_one_list(n3) == 33
    with pytest.raises(ag.TracingError, match=r"'acc' and 'box\['r'\]' are the same list before the while loop at "
                                              r".*test_aliases.py:\d+.* Use one name for the list"):
        traced(two_state_paths_one_list, MODES[mode], n3)


@pytest.mark.parametrize("mode", MODES)
def test_a_body_reading_a_state_list_through_another_variable_is_refused(mode):
    assert branch_reads_the_alias(n3) == (2, 2)
    with pytest.raises(ag.TracingError, match=r"'acc' is the same list as 'box\['r'\]', which the if at "
                                              r".*test_aliases.py:\d+ changes, and its body reads 'acc'"):
        traced(branch_reads_the_alias, MODES[mode], n3)


def both_names_grow_in_a_branch(n):
    xs = []
    ys = xs
    if n > 0:
        ys.append(1)
        xs.append(2)
    return xs, ys


@pytest.mark.parametrize("mode", MODES)
def test_two_state_names_of_one_list_a_branch_stages_are_refused(mode):
    assert both_names_grow_in_a_branch(n3) == ([1, 2], [1, 2])
    with pytest.raises(ag.TracingError, match=r"the list '(xs|ys)' changes length in the if at .*test_aliases.py:\d+.* also "
                                              r"reached as '(xs|ys)'"):
        traced(both_names_grow_in_a_branch, MODES[mode], n3)
