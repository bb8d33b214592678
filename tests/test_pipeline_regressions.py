"""Programs that once converted wrongly: converted == original."""

import copy
import linecache

import pytest

import autograph as ag

_counter = 0


def _define(source):
    global _counter
    _counter += 1
    filename = f"<regression-{_counter}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["f"]


def _outcome(function, args):
    try:
        return "value", function(*args)
    except Exception as e:  # noqa: BLE001
        return "raise", type(e).__name__


CASES = {
    # A tuple target modified in the body: its binding comes from `k, v = itr`.
    "tuple_target_modified": (
        """
def f(items):
    out = []
    for k, v in items:
        if v:
            k = k + 1
        out.append(k)
    return out
""",
        [([(1, True), (5, False)],), ([],)],
    ),
    # Shared extra loop tests must be defined outside try/except blocks.
    "extra_test_shared_across_try": (
        """
def f(xs):
    try:
        for x in xs:
            if x == 0:
                return 'zero'
        y = 10 // len(xs)
    except ZeroDivisionError:
        for x in [1, 2]:
            if x == 2:
                return 'handler'
    for x in xs:
        if x > 5:
            return x
    return -1
""",
        [([],), ([1, 0],), ([1, 7],), ([1, 2],)],
    ),
    # A continue flag used in closures hoisted out of the loop body.
    "continue_flag_in_guarded_try": (
        """
def f(n):
    i = 0
    total = 0
    while i < n:
        i += 1
        if i == 2:
            return total
        try:
            if i % 3 == 0:
                continue
            total += i
        except ValueError:
            pass
        total += 100
    return total
""",
        [(0,), (1,), (2,), (5,)],
    ),
    # Dead code after a jump keeps its names local.
    "dead_code_binding": (
        """
def f(xs):
    for x in xs:
        break
        e = x
    return e
""",
        [([1],), ([],)],
    ),
    # Reads of a possibly-unbound variable in a closure raise UnboundLocalError.
    "unbound_read_in_closure": (
        """
def f(xs):
    a = 1 if xs else e
    e = a
    return a
""",
        [([1],), ([],)],
    ),
    # `x += v` reads x before evaluating v.
    "augassign_reads_target_first": (
        """
def f(xs):
    if xs:
        e = xs.pop()
    e += xs[0]
    return e
""",
        [([1, 2],), ([],)],
    ),
    # Recursion through the module globals, not the factory's local name.
    "recursion": (
        """
def f(n):
    if n <= 1:
        return 1
    return n * f(n - 1)
""",
        [(5,)],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_regression(name):
    source, arguments = CASES[name]
    original = _define(source)
    converted = ag.convert(original, always_converted=True)
    for args in arguments:
        expected = _outcome(original, copy.deepcopy(args))
        assert _outcome(converted, copy.deepcopy(args)) == expected, (name, args, ag.to_code(original))
