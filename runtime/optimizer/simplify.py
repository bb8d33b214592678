"""Arithmetic simplification: algebraic identities that remove ops.

Before / after::

    %y = Mul(%x, %one) ; %z = Neg(%y) ; %w = Neg(%z) ; %c = Cast(%w) float32->float32
    %c is %x

Rules by op type (``RULES``); ops without a rule are kept.  A rule only
replaces an op by a tensor of exactly the op's dtype and static shape, so
broadcasting (``x + zeros((2, 3))`` with ``x`` of shape ``[3]``) and type
promotion (``int32 * 1.0``) are never lost.  Identities that do not hold in
floating point are limited to exact types (``x - x`` only for integers and
booleans: ``inf - inf`` is NaN), or to the constant that keeps them
(``x + (-0.0)``: ``x + 0.0`` turns ``-0.0`` into ``0.0``).
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import dtypes, shapes
from autograph.runtime.optimizer import graph_util
from autograph.runtime.optimizer.rewrite import rewrite


def _same(x, out) -> bool:
    """``x`` can stand for ``out``: same dtype, the same static shape, weakly typed alike (the
    weak flags of the ops reading it follow from it)."""
    return x.dtype == out.dtype and x.shape is not None and x.shape == out.shape and x.weak == out.weak


def _is(tensor, scalar) -> bool:
    """``tensor`` is a constant whose every element equals ``scalar``."""
    value = graph_util.const_value(tensor)
    return value is not None and value.size > 0 and bool(np.all(value == scalar))


def _is_zero(tensor, negative: bool) -> bool:
    """``tensor`` is a constant zero that leaves any value unchanged when added (``negative``) or
    subtracted: in floating point only ``-0.0`` is the sum's identity (``-0.0 + 0.0`` is ``0.0``)
    and ``+0.0`` the difference's."""
    value = graph_util.const_value(tensor)
    if value is None or value.size == 0 or not bool(np.all(value == 0)):
        return False
    return not np.issubdtype(value.dtype, np.inexact) or bool(np.all(np.signbit(value) == negative))


def _identity_element(left=None, right=None):
    """Rule for ``x op e -> x`` (``right``) and ``e op x -> x`` (``left``)."""

    def rule(rw, op):
        a, b = op.inputs[:2]
        out = op.outputs[0]
        if right is not None and _is(b, right) and _same(a, out):
            return [a]
        if left is not None and _is(a, left) and _same(b, out):
            return [b]
        return None

    return rule


def _add(rw, op):
    """``x + 0 -> x`` and ``0 + x -> x`` (``-0.0`` for floats)."""
    a, b = op.inputs
    out = op.outputs[0]
    if _is_zero(b, negative=True) and _same(a, out):
        return [a]
    if _is_zero(a, negative=True) and _same(b, out):
        return [b]
    return None


def _sub(rw, op):
    a, b = op.inputs
    out = op.outputs[0]
    if _is_zero(b, negative=False) and _same(a, out):
        return [a]
    exact = dtypes.is_integer(out.dtype) or dtypes.is_bool(out.dtype)
    if a is b and exact and shapes.is_fully_defined(out.shape):
        return [rw.const(np.zeros(out.shape, out.dtype), out)]
    return None


def _involution(rw, op):
    """``f(f(x)) -> x`` for ``Neg`` and ``LogicalNot``."""
    inner = op.inputs[0].op
    if inner.type == op.type and not graph_util.is_stateful(inner) and _same(inner.inputs[0], op.outputs[0]):
        return [inner.inputs[0]]
    return None


def _idempotent(rw, op):
    """``f(f(x)) -> f(x)`` for ``Abs``."""
    inner = op.inputs[0].op
    if inner.type == op.type and op.inputs[0].dtype == op.outputs[0].dtype:
        return [op.inputs[0]]
    return None


def _cast(rw, op):
    """``Cast`` to the dtype the value already has."""
    x, out = op.inputs[0], op.outputs[0]
    return [x] if x.dtype == out.dtype and x.shape == out.shape and x.weak == out.weak else None


def _reshape(rw, op):
    """``Reshape`` to the (fully known) shape the value already has."""
    x = op.inputs[0]
    return [x] if _same(x, op.outputs[0]) and shapes.is_fully_defined(x.shape) else None


def _identity(rw, op):
    if op.control_inputs or graph_util.is_stateful(op):
        return None
    return [op.inputs[0]]


def _select(rw, op):
    cond, a, b = op.inputs
    out = op.outputs[0]
    if _is(cond, True) and _same(a, out):
        return [a]
    if _is(cond, False) and _same(b, out):
        return [b]
    return None


RULES = {
    "Add": _add,
    "Sub": _sub,
    "Mul": _identity_element(left=1, right=1),
    "RealDiv": _identity_element(right=1),
    "Pow": _identity_element(right=1),
    "LogicalAnd": _identity_element(left=True, right=True),
    "LogicalOr": _identity_element(left=False, right=False),
    "Neg": _involution,
    "LogicalNot": _involution,
    "Abs": _idempotent,
    "Cast": _cast,
    "Reshape": _reshape,
    "Identity": _identity,
    "Select": _select,
}


def run(graph) -> bool:
    """Applies the algebraic identities of ``RULES`` to ``graph``; True if it changed."""
    return rewrite(graph, RULES)
