"""State changed by a call inside a tensor ``if`` or loop (issue 16, item 2).

Python code in a traced body runs once while tracing, whatever the values;
a change the converter cannot see as the statement's state (a method
setting ``self.n``, a helper setting ``d[k]``, ``nonlocal`` in a helper,
``setattr``, ``set.add``, ``deque.append``) would happen once, or on a
branch that is not taken.  It is undone and refused with a ``TracingError``
naming what changed and the statement (``runtime/operators/outside_writes.py``),
in every execution mode; the same change made part of the state (assigned
in the body itself) gives Python's value.
"""

from __future__ import annotations

import collections
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


def traced(fn, mode, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ag.function(fn, **MODES[mode])(*args)


class Counter:
    def __init__(self, n=0):
        self.n = n

    def bump(self):
        self.n += 1


def put(d, k, v):
    d[k] = v


def method_in_loop(c):
    def f(n):
        for _ in range(n):
            c.bump()
        return c.n

    return f


def method_in_untaken_branch(c):
    def f(n):
        if n > 5:
            c.bump()
        return c.n

    return f


def helper_item_in_loop(d):
    def f(n):
        for i in range(n):
            put(d, "a", i)
        return d["a"]

    return f


def setattr_in_loop(c):
    def f(n):
        for _ in range(n):
            setattr(c, "n", c.n + 1)
        return c.n

    return f


def nonlocal_in_helper(_):
    def f(n):
        count = 0

        def inc():
            nonlocal count
            count += 1

        for _ in range(n):
            inc()
        return count

    return f


def set_add_in_loop(_):
    def f(n):
        seen = set()
        for i in range(n):
            seen.add(1)
        return len(seen)

    return f


def deque_append_in_loop(_):
    def f(n):
        queue = collections.deque()
        for i in range(n):
            queue.append(1)
        return len(queue)

    return f


REFUSED = [
    (method_in_loop, Counter, "'c.n' changed while the body of the for loop at "),
    (method_in_untaken_branch, lambda: Counter(3), "'c.n' changed while the body of the if at "),
    (helper_item_in_loop, lambda: {"a": 0}, "'d['a']' changed while the body of the for loop at "),
    (setattr_in_loop, Counter, "'c.n' changed while the body of the for loop at "),
    (nonlocal_in_helper, lambda: None, "'count' changed while the body of the for loop at "),
    (set_add_in_loop, lambda: None, "the set 'seen' changed while the body of the for loop at "),
    (deque_append_in_loop, lambda: None, "the deque 'queue' changed while the body of the for loop at "),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("make, target, message", REFUSED, ids=[case[0].__name__ for case in REFUSED])
def test_a_change_outside_the_state_is_undone_and_refused(make, target, message, mode):
    make(target())(n3)  # plain Python runs
    obj = target()
    before = None if obj is None else dict(vars(obj)) if hasattr(obj, "__dict__") else dict(obj)
    with pytest.raises(ag.TracingError) as info:
        traced(make(obj), mode, n3)
    text = str(info.value)
    assert message in text and "test_callee_state.py:" in text
    after = None if obj is None else dict(vars(obj)) if hasattr(obj, "__dict__") else dict(obj)
    assert after == before  # tracing left the user's object as it was


def state_changed_by_a_method_too(c):
    def f(n):
        for _ in range(n):
            c.n = c.n + 1  # assigned in the body: c.n is state, and the method's change is seen
            c.bump()
        return c.n

    return f


def fresh_object_in_the_body(_):
    def f(n):
        total = 0
        for _ in range(n):
            c = Counter(1)
            c.bump()
            total += c.n
        return total

    return f


def helper_that_only_reads(c):
    def f(n):
        total = 0
        for _ in range(n):
            total += c.n
        return total

    return f


ACCEPTED = [state_changed_by_a_method_too, fresh_object_in_the_body, helper_that_only_reads]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("make", ACCEPTED, ids=[fn.__name__ for fn in ACCEPTED])
def test_changes_that_are_state_or_inside_the_body_give_pythons_value(make, mode):
    expected = make(Counter(2))(n3)
    assert traced(make(Counter(2)), mode, n3) == expected
