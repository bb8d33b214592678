"""Python paths of ``and_``, ``or_``, ``not_`` and ``if_exp``.

Operands that Python evaluates lazily are zero-argument closures here too,
so short-circuit evaluation is preserved: ``and_(a, lambda: b)`` evaluates
``b`` only if ``a`` is true, and returns the same object Python's
``a and b`` would.  (The first operand is always evaluated, so it is passed
as a value.)  When the first operand (or the condition) is a ``Tensor`` the
call goes to ``autograph.runtime.operators.graph_paths``, where both operands of
``and_``/``or_`` are closures: ``graph_paths.and_(lambda: a, b)``.
"""

from __future__ import annotations

import operator

from autograph.runtime.core.tensor import Tensor


def and_(a, b):
    """``a and b()`` with Python semantics for Python values."""
    if a is True:
        return b()
    if a is False:
        return a
    if isinstance(a, Tensor):
        from autograph.runtime.operators import graph_paths
        return graph_paths.and_(lambda: a, b)
    if not a:
        return a
    return b()


def or_(a, b):
    """``a or b()`` with Python semantics for Python values."""
    if a is True:
        return a
    if a is False:
        return b()
    if isinstance(a, Tensor):
        from autograph.runtime.operators import graph_paths
        return graph_paths.or_(lambda: a, b)
    if a:
        return a
    return b()


def not_(a):
    """``not a``."""
    if a is True:
        return False
    if a is False:
        return True
    if isinstance(a, Tensor):
        from autograph.runtime.operators import graph_paths
        return graph_paths.not_(a)
    return not a


def if_exp(cond, if_true, if_false, expr_repr):
    """``if_true() if cond else if_false()``; ``expr_repr`` is the condition's source."""
    if cond is True:
        return if_true()
    if cond is False:
        return if_false()
    if isinstance(cond, Tensor):
        from autograph.runtime.operators import graph_paths
        return graph_paths.if_exp(cond, if_true, if_false, expr_repr)
    if cond:
        return if_true()
    return if_false()


def python_condition(value, construct, targets):
    """``value``, the deciding operand of an ``and``/``or``/conditional expression or chained
    comparison (or the filter of a comprehension) left as written because a walrus in it binds
    ``targets``; a tensor there is refused."""
    if not isinstance(value, Tensor):
        return value
    from autograph.runtime.core.location import construct_at
    from autograph.runtime.errors import TracingError

    names = ", ".join(f"'{t}'" for t in targets)
    raise TracingError(
        f"{construct_at(construct)} is decided by a tensor, but stays Python code because a walrus (:=) "
        f"in it binds {names} in the enclosing scope, which no staged form can do. Assign {names} in a "
        "statement before it (an if test, assignment or return whose whole value is an and/or/if-else or "
        "a chained comparison stages its walrus)."
    )


# a comparison as written -> the function Python calls for it
_COMPARE = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
    "!=": operator.ne, "is": operator.is_, "is not": operator.is_not,
    "in": lambda a, b: a in b, "not in": lambda a, b: a not in b,
}


def compare_chain(left, operators, operands):
    """``left op1 b op2 c ...`` as Python evaluates it: ``operands`` are closures giving
    ``b``, ``c``, ... each evaluated once, only while the links so far are true;
    tensor links join with ``and_`` (staged)."""
    right = operands[0]()
    link = _COMPARE[operators[0]](left, right)
    if len(operators) == 1:
        return link
    return and_(link, lambda: compare_chain(right, operators[1:], operands[1:]))
