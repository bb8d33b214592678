"""The optimizer's ``logical`` pass (``runtime/optimizer/logical_if.py``): the ``If`` a tensor ``and``/``or``
is traced as becomes ``LogicalAnd``/``LogicalOr`` when its lazy operand is cheap, scalar and total, and stays
an ``If`` otherwise; with ``optimize=False`` the ``If`` runs, with the same values."""

from __future__ import annotations

import itertools

import numpy as np

import autograph as ag
from autograph import runtime as rt

F32 = rt.TensorSpec((), "float32")
VEC = rt.TensorSpec((None,), "float32")


def _types(graph) -> list[str]:
    """Op types of ``graph`` and of every function of its library (which its sub-graphs share)."""
    types = [op.type for op in graph.operations]
    for name in sorted(graph.library):
        types.extend(op.type for op in graph.library[name].operations)
    return types


def _both(fn, *specs):
    """``fn`` as ``ag.function`` optimized and not, and their concrete functions for ``specs``."""
    optimized, plain = ag.function(fn), ag.function(fn, optimize=False)
    return optimized, plain, optimized.get_concrete_function(*specs), plain.get_concrete_function(*specs)


def cheap(x, y):
    return (x > 0 and y > 0) or not x < -5


def in_a_loop_condition(x, n):
    i = 0.0
    while i < n and x > 0:
        x = x - 1.0
        i += 1.0
    return x, i


def guarded_read(x, v):
    return x > 0 and v[0] > 0  # v[0] may fail: it runs only when x > 0


def test_cheap_operands_become_logical_ops_and_keep_their_values():
    optimized, plain, cf, cf_plain = _both(cheap, F32, F32)
    assert "If" not in _types(cf.execution_graph)
    assert {"LogicalAnd", "LogicalOr"} <= set(_types(cf.execution_graph))
    assert _types(cf_plain.execution_graph).count("If") == 2  # as traced
    for x, y in itertools.product([-7.0, -3.0, 0.0, 2.0], [-1.0, 0.0, 4.0]):
        expected = (x > 0 and y > 0) or not x < -5
        args = (np.float32(x), np.float32(y))
        assert optimized(*args) == expected and plain(*args) == expected


def test_a_loop_condition_is_rewritten_inside_the_cond_graph():
    optimized, plain, cf, _ = _both(in_a_loop_condition, F32, F32)
    assert "If" not in _types(cf.execution_graph) and "LogicalAnd" in _types(cf.execution_graph)
    for x, n in [(3.0, 5.0), (5.0, 2.0), (-1.0, 4.0)]:
        args = (np.float32(x), np.float32(n))
        assert optimized(*args) == plain(*args) == in_a_loop_condition(x, n)


def test_an_operand_that_may_fail_stays_in_an_if():
    optimized, plain, cf, _ = _both(guarded_read, F32, VEC)
    assert "If" in _types(cf.execution_graph) and "LogicalAnd" not in _types(cf.execution_graph)
    empty = np.zeros((0,), np.float32)
    assert optimized(np.float32(-1), empty) == plain(np.float32(-1), empty) == False  # noqa: E712
    assert optimized(np.float32(1), np.float32([2])) == plain(np.float32(1), np.float32([2])) == True  # noqa: E712


def test_an_and_of_numbers_is_no_logical_op():
    # ``x and x + 1`` gives a number, not a bool: no logical op computes it (lower_if may still lower it)
    optimized, plain, cf, _ = _both(lambda x: x and x + 1, rt.TensorSpec((), "int32"))
    assert "LogicalAnd" not in _types(cf.execution_graph)
    assert optimized(np.int32(0)) == plain(np.int32(0)) == 0
    assert optimized(np.int32(2)) == plain(np.int32(2)) == 3
