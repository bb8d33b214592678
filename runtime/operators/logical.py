"""Python paths of ``and_``, ``or_``, ``not_`` and ``if_exp``.

Operands that Python evaluates lazily are zero-argument closures here too,
so short-circuit evaluation is preserved: ``and_(lambda: a, lambda: b)``
evaluates ``b`` only if ``a`` is true, and returns the same object Python's
``a and b`` would.  When the first operand (or the condition) turns out to
be a ``Tensor`` the call goes to ``autograph.runtime.control_flow`` with the
same signature; the operand already evaluated is passed as a closure
returning that value, so it is never evaluated twice.
"""

from __future__ import annotations

from autograph.runtime.tensor import Tensor


def and_(a, b):
    """``a() and b()`` with Python semantics for Python values."""
    value = a()
    if value is not True and value is not False and isinstance(value, Tensor):
        from autograph.runtime import control_flow
        return control_flow.and_(lambda: value, b)
    if not value:
        return value
    return b()


def or_(a, b):
    """``a() or b()`` with Python semantics for Python values."""
    value = a()
    if value is not True and value is not False and isinstance(value, Tensor):
        from autograph.runtime import control_flow
        return control_flow.or_(lambda: value, b)
    if value:
        return value
    return b()


def not_(a):
    """``not a``."""
    if a is True:
        return False
    if a is False:
        return True
    if isinstance(a, Tensor):
        from autograph.runtime import control_flow
        return control_flow.not_(a)
    return not a


def if_exp(cond, if_true, if_false, expr_repr):
    """``if_true() if cond else if_false()``; ``expr_repr`` is the condition's source."""
    if cond is True:
        return if_true()
    if cond is False:
        return if_false()
    if isinstance(cond, Tensor):
        from autograph.runtime import control_flow
        return control_flow.if_exp(cond, if_true, if_false, expr_repr)
    if cond:
        return if_true()
    return if_false()
