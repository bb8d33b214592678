"""``and_``, ``or_``, ``not_`` and ``if_exp``: Python paths beside graph paths.

Operands that Python evaluates lazily are zero-argument closures here too,
so short-circuit evaluation is preserved: ``and_(a, lambda: b)`` evaluates
``b`` only if ``a`` is true, and returns the same object Python's
``a and b`` would.  (The first operand is always evaluated, so it is passed
as a value.)  For a first operand (or condition) that is not plain Python
the overload registry (``operators/dispatch.py``) gives the handler, called
with the same arguments.  The numpy runtime's ``Tensor`` registers the
graph paths here:

* ``if_exp``, ``and_``, ``or_`` emit an ``If`` so the lazy operand runs only
  when Python would evaluate it (the optimizer turns the ``If`` of a bool
  ``and``/``or`` whose lazy operand is a cheap scalar expression that cannot
  fail into ``LogicalAnd``/``LogicalOr``: ``optimizer/logical_if.py``); a
  lazy operand that is a Python bool deciding the result alone
  (``t > 0 and len(l) > 0`` with an empty ``l``) gives that Python bool;
* ``not_`` is ``LogicalNot`` (``a == 0`` for numbers, as Python's truth; a
  staged list is false when empty).
"""

from __future__ import annotations

import operator

import numpy as np

from autograph.runtime import ops
from autograph.runtime.core import dtypes
from autograph.runtime.core.location import construct_at
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.errors import TracingError
from autograph.runtime.operators import container_identity, dispatch, iterables, recursion, tensor_builtins
from autograph.runtime.operators.iterables import is_tensor
from autograph.runtime.ops.list_operators import StagedList
from autograph.runtime.tracing.branches import build_cond


def and_(a, b):
    """``a and b()`` with Python semantics for Python values."""
    if a is True:
        return b()
    if a is False:
        return a
    staged = dispatch.handler_for("and_", a)
    if staged is not None:
        return staged(a, b)
    if not a:
        return a
    return b()


def or_(a, b):
    """``a or b()`` with Python semantics for Python values."""
    if a is True:
        return a
    if a is False:
        return b()
    staged = dispatch.handler_for("or_", a)
    if staged is not None:
        return staged(a, b)
    if a:
        return a
    return b()


def not_(a):
    """``not a``."""
    if a is True:
        return False
    if a is False:
        return True
    staged = dispatch.handler_for("not_", a)
    if staged is not None:
        return staged(a)
    return not a


def if_exp(cond, if_true, if_false, expr_repr):
    """``if_true() if cond else if_false()``; ``expr_repr`` is the condition's source."""
    if cond is True:
        return if_true()
    if cond is False:
        return if_false()
    staged = dispatch.handler_for("if_exp", cond)
    if staged is not None:
        return staged(cond, if_true, if_false, expr_repr)
    if cond:
        return if_true()
    return if_false()


def python_condition(value, construct, targets):
    """``value``, the deciding operand of an ``and``/``or``/conditional expression or chained
    comparison (or the filter of a comprehension) left as written because a walrus in it binds
    ``targets``; a tensor there is refused."""
    if not isinstance(value, Tensor):
        return value
    names = ", ".join(f"'{t}'" for t in targets)
    raise TracingError(
        f"{construct_at(construct)} is decided by a tensor, but stays Python code because a walrus (:=) "
        f"in it binds {names} in the enclosing scope, which no staged form can do. Assign {names} in a "
        "statement before it (an if test, assignment or return whose whole value is an and/or/if-else or "
        "a chained comparison stages its walrus)."
    )


def _is(a, b):
    """``a is b``: a tensor standing for a Python bool (weakly typed) is ``True`` or ``False`` by its
    value; another tensor (a Python int or float, a numpy value) is never either, as in Python."""
    for x, y in ((a, b), (b, a)):
        if isinstance(x, Tensor) and type(y) is bool:
            if x.weak and x.dtype == dtypes.bool_ and x.shape == ():
                return x if y else not_(x)
            return False
    return a is b


# a comparison as written -> the function Python calls for it
_COMPARE = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
    "!=": operator.ne, "is": _is, "is not": lambda a, b: not_(_is(a, b)),
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


def staged_if_exp(cond, if_true, if_false, expr_repr):
    """``if_true() if cond else if_false()`` for a tensor ``cond``: an ``If``."""
    where = construct_at(f"the conditional expression `... if {expr_repr} else ...`")
    true_branch, true_seen = _recording(if_true)
    false_branch, false_seen = _recording(if_false)
    with recursion.guard(if_true, where):  # (``k if k < 2 else fib(k - 1) + fib(k - 2)``)
        (value,) = build_cond(cond, true_branch, false_branch, labels=["value"], where=where)
    return container_identity.picked(true_seen + false_seen, value, where)


def staged_and(value, b):
    """``value and b()`` for a tensor ``value``: ``b`` runs (in an ``If``) only when ``value`` is true."""
    where = construct_at("the `and`")
    right, seen = _recording(b)
    (result,) = build_cond(value, right, lambda: (value,), labels=["result"], where=where)
    if _decided(seen, False, value, result):
        return False
    return result


def staged_or(value, b):
    """``value or b()`` for a tensor ``value``: ``b`` runs (in an ``If``) only when ``value`` is false."""
    where = construct_at("the `or`")
    right, seen = _recording(b)
    (result,) = build_cond(value, lambda: (value,), right, labels=["result"], where=where)
    if _decided(seen, True, value, result):
        return True
    return result


def _recording(b):
    """``b`` as a branch function, and the list of the values it gave while traced."""
    seen = []

    def right():
        v = b()
        seen.append(v)
        return (v,)

    return right, seen


def _decided(seen, constant, value, result) -> bool:
    """True if a bool ``value and b`` (``constant`` False) or ``value or b`` (True) is ``constant``
    whatever ``value`` is, because ``b`` is that Python bool (``t > 0 and len(l) > 0`` with an
    empty ``l``): then the ``If`` just emitted is removed, and an ``if`` on the result runs (and
    traces) one branch only, as in Python.  Otherwise False, and ``result`` stays."""
    if value.dtype != dtypes.bool_ or value.shape != () or not seen:
        return False
    if not all(type(v) in _PYTHON_BOOLS and bool(v) is constant for v in seen):
        return False
    op = result.op
    graph = op.graph
    if op.type != "If" or graph.operations[-1] is not op or graph.last_stateful is op:
        return False  # an If with an effect (a check, a print in ``b``) stays: Python evaluates ``b`` then
    graph.operations.pop()
    for attr in ("then_branch", "else_branch"):
        del graph.library[op.attrs[attr]]
    return True


_PYTHON_BOOLS = (bool, np.bool_)


def staged_not(a):
    """``not a`` for a tensor: ``LogicalNot`` (``a == 0`` for numbers, as Python's truth)."""
    if isinstance(a, StagedList):  # a staged list is false when empty, as a Python list
        return ops.equal(iterables.len_(a), 0)
    if a.shape != ():  # numpy's truth of an array: one element, else its ValueError when the graph runs
        return ops.logical_not(tensor_builtins.bool_(a, "`not`"))
    if a.dtype == dtypes.bool_:
        return ops.logical_not(a)
    return ops.equal(a, 0)


dispatch.register("if_exp", is_tensor, staged_if_exp, backend="numpy")
dispatch.register("and_", is_tensor, staged_and, backend="numpy")
dispatch.register("or_", is_tensor, staged_or, backend="numpy")
dispatch.register("not_", is_tensor, staged_not, backend="numpy")
