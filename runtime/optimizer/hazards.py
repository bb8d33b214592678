"""Which ops can never raise an error nor emit a warning: what may run where the program did not.

An optimization that runs an op where the program would not have run it --
hoisting it out of a loop that may run zero times, out of a branch -- must
not make the program fail or warn.  Almost every op can do either for some
values: integer ``Pow`` with a negative exponent raises, integer division
or modulo by zero warns, floating-point arithmetic warns on overflow (and
so does integer arithmetic on numpy scalars), ``Sqrt``/``Log`` of negatives,
``Exp`` overflows, casts of NaN, ``Gather``/``StridedSlice`` out of range,
``Reshape``/``Fill``/``Range`` with the wrong values, ``Assert``, broadcasting
of shapes only known at run time.  ``TOTAL`` is the rule table of the few
that cannot, keyed by op type: a predicate on the op (its dtypes and static
shapes) that is true when no input value can make the op raise or warn.
An op type not in the table may fail (the default).  ``WARN_ONLY`` is the
second table: ops that may warn but never raise (``never_raises``), which is
what an op that stays in a loop body must be for an op after it to be
hoisted under the loop's guard (``loop_guard.py``).

::

    never_fails(Less(int32[], int32[]))      # True
    never_fails(Pow(int32[], int32[]))       # False: 2 ** -1 raises
    never_fails(Add(float32[3], float32[3])) # False: overflow warns
    never_fails(Mul(float32[3], Const 0.5))  # True: never larger than its operand
    never_fails(Add(float32[None], ...))     # False (and so for any op: shapes unknown may not broadcast)
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import shapes


def _static(op) -> bool:
    """Every input and output shape is fully known: the shapes were checked when the op was
    built (broadcasting, stacking), so no value at run time can make them disagree."""
    for t in (*op.inputs, *op.outputs):  # (a loop, not all() of a generator: asked of most ops)
        if not shapes.is_fully_defined(t.shape):
            return False
    return True


def _always(op) -> bool:
    return True


def _static_floats(op) -> bool:
    """Sign and magnitude of floats never overflow (``-INT_MIN`` on a numpy integer scalar warns)."""
    return _static(op) and all(t.dtype.kind in "fc" for t in op.inputs)


def _safe_cast(op) -> bool:
    """A cast that no value can overflow or make invalid: from bool, between integers (numpy
    wraps them silently), from integers to a float of 32 bits or more, to a wider float."""
    source, target = np.dtype(op.inputs[0].dtype), np.dtype(op.outputs[0].dtype)
    if source.kind == "b" or source == target:
        return True
    if source.kind in "iu":
        return target.kind in "iu" or (target.kind in "fc" and target.itemsize >= 4)
    if source.kind == "f":
        return (target.kind == "f" and target.itemsize >= source.itemsize) or (
            target.kind == "c" and target.itemsize >= 2 * source.itemsize)
    return source.kind == "c" and target.kind == "c" and target.itemsize >= source.itemsize


def _constant(t):
    """The values of ``t`` if a ``Const`` makes it, else None."""
    return t.op.attrs["value"] if t.op.type == "Const" else None


def _by_constant(op, constant_index, bound) -> bool:
    """Float arithmetic with a finite constant operand (at ``constant_index``; None: either)
    whose values satisfy ``bound(|c|, finfo)``: static shapes, one float dtype throughout."""
    if not _static(op) or any(t.dtype.kind != "f" or t.dtype != op.outputs[0].dtype for t in op.inputs):
        return False
    for index in (0, 1) if constant_index is None else (constant_index,):
        c = _constant(op.inputs[index])
        if c is not None and np.all(np.isfinite(c)) and np.all(bound(np.abs(c), np.finfo(c.dtype))):
            return True
    return False


def _scaled_down(op) -> bool:
    """``x * c`` with ``0 < |c| <= 1``: never larger than ``x`` (``inf * c`` is ``inf``, silently)."""
    return _by_constant(op, None, lambda c, info: (c > 0) & (c <= 1))


def _nudged(op) -> bool:
    """``x + c``, ``x - c``, ``c - x`` with ``|c|`` under half the spacing of the largest float:
    a sum past the largest rounds back to it (``inf + c`` is ``inf``, silently)."""
    return _by_constant(op, None, lambda c, info: c < (info.max - np.nextafter(info.max, 0)) / 2)


def _divided_down(op) -> bool:
    """``x / c`` with ``|c| >= 1``: never larger than ``x``, never a division by zero."""
    return _by_constant(op, 1, lambda c, info: c >= 1)


TOTAL = {
    "Mul": _scaled_down,  # float arithmetic with constants no value can make overflow or invalid
    "Add": _nudged,
    "Sub": _nudged,
    "RealDiv": _divided_down,
    "Identity": _always,
    "Shape": _always,
    "Size": _always,
    "ZerosLike": _always,
    "OnesLike": _always,
    "Cast": _safe_cast,
    "Equal": _static,  # comparisons: NaN compares false, silently
    "NotEqual": _static,
    "Less": _static,
    "LessEqual": _static,
    "Greater": _static,
    "GreaterEqual": _static,
    "Maximum": _static,  # NaN propagates, silently
    "Minimum": _static,
    "LogicalAnd": _static,
    "LogicalOr": _static,
    "LogicalXor": _static,
    "LogicalNot": _static,
    "BitwiseAnd": _static,
    "BitwiseOr": _static,
    "BitwiseXor": _static,
    "Invert": _static,
    "Select": _static,
    "Choose": _always,  # one of two whole values (a bool scalar predicate: its definition checks it)
    "Neg": _static_floats,
    "Abs": _static_floats,
    "Tanh": _static_floats,
}


def never_fails(op) -> bool:
    """True if no input value can make ``op`` raise or warn (``TOTAL``; default: it may)."""
    rule = TOTAL.get(op.type)
    return rule is not None and len(op.outputs) > 0 and rule(op)


def _not_integer_power(op) -> bool:
    return _static(op) and not all(t.dtype.kind in "iu" for t in op.inputs)  # int ** -1 raises


# Ops that at worst warn (numpy's floating-point errors, with its default error handling:
# overflow, invalid value, division by zero) and never raise, by op type.
WARN_ONLY = {
    **dict.fromkeys(("Add", "Sub", "Mul", "RealDiv", "FloorDiv", "FloorMod", "Square", "Exp", "Log", "Sqrt",
                     "Sin", "Cos", "Tanh", "Neg", "Abs", "Sum", "Prod", "Mean"), _static),
    "Pow": _not_integer_power,
    "Cast": _always,
}


def never_raises(op) -> bool:
    """True if no input value can make ``op`` raise (it may warn: ``WARN_ONLY``)."""
    rule = WARN_ONLY.get(op.type)
    return never_fails(op) or (rule is not None and len(op.outputs) > 0 and rule(op))
