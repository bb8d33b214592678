"""``pyct/static_analysis/effects.py``: which ``while`` loops only bind names (and may be run again)."""

from __future__ import annotations

import textwrap

import gast
import pytest

from autograph.pyct import anno
from autograph.pyct.static_analysis import effects


def _loops(source):
    tree = effects.annotate(gast.parse(textwrap.dedent(source)))
    return [anno.get(node, anno.EFFECT_FREE) for node in gast.walk(tree) if type(node) is gast.While]


@pytest.mark.parametrize("body", [
    "total = total + x * k\nk += 1\nif total > limit or k > 100:\n    break",
    "a, (b, *c) = b, (a, 1, 2)\ncontinue",
    "y = x[k] if x.shape[0] > k else -x.T[0, 1:k]\npass",
    "if (j := k * 2) > n:\n    return {j: [k], 'r': (1, 2)}",
    "'''a docstring'''\nk: int = k + 1",
])
def test_names_arithmetic_items_and_jumps_are_effect_free(body):
    source = "def f(x, n):\n    while k < n:\n" + textwrap.indent(body, "        ")
    assert _loops(source) == [True]


@pytest.mark.parametrize("body", [
    "k = f(k)",                      # a call
    "print(k)",                      # an expression statement
    "xs[k] = 1",                     # an item store
    "self.n = k",                    # an attribute store
    "k = self.n",                    # an attribute that may be a property
    "del k",
    "nonlocal k\nk = 1",
    "global k\nk = 1",
    "for v in it:\n    k = v",       # may advance an iterator
    "k = [v for v in range(3)]",
    "g = lambda: k",
    "s = f'{k}'",
    "with m:\n    k = 1",
    "try:\n    k = 1\nexcept E:\n    pass",
    "assert k",
])
def test_anything_else_is_an_effect(body):
    source = "def f(x, n):\n    while k < n:\n" + textwrap.indent(body, "        ")
    assert _loops(source) == [False]


def test_the_test_counts_and_nested_loops_are_judged_alone():
    source = """
    def f(n):
        while g(k) < n:
            k += 1
        while k < n:
            while True:
                k += 1
                if k > 3:
                    break
            m.append(k)
    """
    assert _loops(source) == [False, False, True]


def test_the_converter_says_so_in_the_opts():
    import autograph as ag

    def f(n):
        k = 0
        while k < n:
            k += 1
        while k < 2 * n:
            print(k)
            k += 1
        return k

    code = ag.to_code(f)
    assert code.count("'effect_free': True") == 1
