"""Aliases of a list that a tensor ``if`` nested in another tensor statement changes.

One level is ``test_aliases.py``: a list reached under two names (``box =
{'r': acc}``, ``o.items = acc``) and grown in a tensor branch is refused,
naming both.  Nested in a tensor ``if``, ``for`` or ``while``, the inner
``if`` works on the copy of the state the enclosing statement traces its
body with, which the user's ``acc`` does not hold: the alias went unseen, so
the inner ``if`` staged ``box['r']`` (an internal ``AttributeError`` at the
next ``box['r'].append``, fuzz seed 1201389), or a body reading ``acc`` saw
the list before the body's changes (a silent wrong value).  Each case here
runs in plain Python, then in every execution mode must be the same refusal
as at one level, naming both names and the inner ``if``'s line.
"""

from __future__ import annotations

import copy
import inspect
import re
import warnings

import numpy as np
import pytest

import autograph as ag

from modes import MODES

ARGS = (np.float32(1), np.int32(2))


class Obj:
    pass


def traced(fn, mode, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ag.function(fn, **MODES[mode])(*copy.deepcopy(args))


def marked_line(fn):
    """The line of ``fn`` marked ``# <- refused``."""
    lines, first = inspect.getsourcelines(fn)
    return next(first + i for i, line in enumerate(lines) if "# <- refused" in line)


def refusal_at_marked_line(fn, mode) -> str:
    """The message of the TracingError tracing ``fn`` raises, checked to name ``fn``'s marked line."""
    with pytest.raises(ag.TracingError) as info:
        traced(fn, mode, *ARGS)
    message = str(info.value)
    assert re.search(rf"test_alias_nesting\.py:{marked_line(fn)}\b", message), message
    return message


def if_in_if_append(a, n):
    acc = [a]
    box = {"r": acc}
    if a > 0:
        if n > 0:  # <- refused
            box["r"].append(a + 1)
        box["r"].append(a + 2)
    return len(acc), acc


def if_in_if_extend_attr(a, n):
    acc = [a]
    o = Obj()
    o.items = acc
    if a > 0:
        if n > 0:  # <- refused
            o.items.extend([a, a])
        o.items.extend([a])
    return len(acc), acc


def if_in_if_pop(a, n):
    acc = [a, a, a]
    box = {"r": acc}
    if a > 0:
        if n > 0:  # <- refused
            box["r"].pop()
        box["r"].pop()
    return len(acc), acc


def if_in_for_append(a, n):
    acc = [a]
    box = {"r": acc}
    for i in range(n):
        if a > 0:  # <- refused
            box["r"].append(a)
    return len(acc), acc


def if_in_for_append_after(a, n):
    acc = [a]
    o = Obj()
    o.items = acc
    for i in range(n):
        if a > 0:  # <- refused
            o.items.append(a)
        o.items.append(a + 1)
    return len(acc), acc


def if_in_while_extend(a, n):
    acc = [a]
    box = {"r": acc}
    j = 0
    while j < n:
        if a > 0:  # <- refused
            box["r"].extend([a, a])
        j += 1
    return len(acc), acc


def if_in_while_pop_attr(a, n):
    acc = [a, a, a, a]
    o = Obj()
    o.items = acc
    j = 0
    while j < n:
        if a > 0:  # <- refused
            o.items.pop()
        j += 1
    return len(acc), acc


def if_in_if_in_for_append(a, n):
    acc = [a]
    box = {"r": acc}
    for i in range(n):
        if a > 0:
            if n > 1:  # <- refused
                box["r"].append(a)
            box["r"].append(a)
    return len(acc), acc


# (function, the path the list grows through, the other name)
GROWN = [
    (if_in_if_append, "box['r']", "acc"),
    (if_in_if_extend_attr, "o.items", "acc"),
    (if_in_if_pop, "box['r']", "acc"),
    (if_in_for_append, "box['r']", "acc"),
    (if_in_for_append_after, "o.items", "acc"),
    (if_in_while_extend, "box['r']", "acc"),
    (if_in_while_pop_attr, "o.items", "acc"),
    (if_in_if_in_for_append, "box['r']", "acc"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn, grown, alias", GROWN, ids=[case[0].__name__ for case in GROWN])
def test_a_list_grown_through_an_alias_in_a_nested_if_is_refused_naming_both(fn, grown, alias, mode):
    fn(*copy.deepcopy(ARGS))  # plain Python runs: 'acc' shows the changes there
    message = refusal_at_marked_line(fn, mode)
    assert f"the list '{grown}' changes length in the if at " in message, message
    assert f"also reached as '{alias}'" in message, message


def item_in_if_in_for_read(a, n):
    acc = [a, a]
    box = {"r": acc}
    s = a
    for i in range(n):  # <- refused (the loop's body reaches the if's, which reads acc)
        if a > 0:
            box["r"][0] = box["r"][0] + 1
            s = s + acc[0]
    return s, acc


def item_in_if_in_while_read_attr(a, n):
    acc = [a, a]
    o = Obj()
    o.items = acc
    s = a
    j = 0
    while j < n:  # <- refused (the loop's body reaches the if's, which reads acc)
        if a > 0:
            o.items[0] = o.items[0] + 1
            s = s + acc[0]
        j += 1
    return s, acc


# (function, the path the if changes the list through, the other name, which the if's body reads)
READ = [
    (item_in_if_in_for_read, "box['r']", "acc"),
    (item_in_if_in_while_read_attr, "o.items", "acc"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn, changed, alias", READ, ids=[case[0].__name__ for case in READ])
def test_a_nested_if_reading_an_alias_of_a_list_it_changes_is_refused(fn, changed, alias, mode):
    assert fn(*copy.deepcopy(ARGS))[0] == 6  # Python: the body reads acc after each change
    message = refusal_at_marked_line(fn, mode)
    assert re.search(rf"'{alias}' is the same list as '{re.escape(changed)}', which the (for|while) loop at ",
                     message), message
    assert f"its body reads '{alias}'" in message, message


def staged_by_inner_if_then_appended(a, n):
    box = {"r": [a]}
    if a > 0:
        if n > 0:  # the staged list
            box["r"].append(a + 1)
        box["r"].append(a + 2)
    return box


@pytest.mark.parametrize("mode", MODES)
def test_appending_through_an_item_to_a_list_an_inner_if_staged_says_how_to_grow_it(mode):
    """No alias: the inner if stages box['r'] (one tensor), which the outer body cannot append to
    through the item; the error says so (it said the staged list 'can be appended to ... but not
    .append()')."""
    assert len(staged_by_inner_if_then_appended(*copy.deepcopy(ARGS))["r"]) == 3
    with pytest.raises(ag.TracingError) as info:  # a refusal (an AttributeError too: hasattr sees no method)
        traced(staged_by_inner_if_then_appended, mode, *ARGS)
    assert isinstance(info.value, AttributeError)
    message = str(info.value)
    assert f"{__file__}:" in message, message
    assert "the staged list 'box['r']' of the if at " in message, message
    assert "can append to it only as a local variable" in message, message
    assert "can be appended to" not in message, message
