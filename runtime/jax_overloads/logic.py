"""``and``/``or``/``not``, ``assert`` and the builtins on traced values.

``a and b`` with a traced ``a``: Python evaluates ``b`` only when ``a`` is
true.  Under ``jax.jit`` evaluating ``b`` while tracing computes it in the
graph whatever ``a`` is, which is harmless unless ``b`` has an effect (a
``jax.debug.print``, a callback): so ``b`` is evaluated inline, and when two
bools meet the result is ``jnp.logical_and`` -- the program a person writes
by hand.  An effect of ``b`` is found in the equations it added and refused
(it would run for every ``a``).  Outside a jaxpr trace (``jax.grad`` or
``jax.vmap`` without ``jit``), and for operands that are not both bools (the
result is one of the operands, as in Python), the choice is a ``lax.cond``.
"""

from __future__ import annotations

import operator

import jax
import jax.numpy as jnp
from jax import lax
import numpy as np

from autograph.runtime.core.location import construct_at
from autograph.runtime.errors import TracingError
from autograph.runtime.jax_overloads import branches, values


def _is_bool(value) -> bool:
    return type(value) is bool or (values.kind(value) == values.ARRAY and values.aval_of(value).dtype == np.bool_)


def _logical(a, b, construct, combine, take_right_when):
    where = construct_at(construct)
    eqns = values.equations()
    if eqns is None:
        pred = values.predicate(a, where)
        true_fn, false_fn = (b, lambda: a) if take_right_when else (lambda: a, b)
        (value,) = branches.cond(pred, lambda: (true_fn(),), lambda: (false_fn(),), ["the value"], where)
        return value
    start = len(eqns)
    right = b()
    if any(e.effects for e in eqns[start:]):
        raise TracingError(
            f"the right operand of {where} has an effect (a print or a callback) that JAX would run whatever "
            "the left operand is; Python runs it only when it decides the result. Write it as an if statement."
        )
    if _is_bool(a) and _is_bool(right) and values.aval_of(a).shape == ():
        if type(right) is bool:  # a and True is a, a and False is False; a or True is True, a or False is a
            return (a if right else right) if take_right_when else (right if right else a)
        if values.aval_of(right).shape == ():
            return combine(a, right)
    pred = values.predicate(a, where)
    (value,) = branches.cond(pred, lambda: (right if take_right_when else a,),
                             lambda: (a if take_right_when else right,), ["the value"], where)
    return value


def and_(a, b):
    """``a and b()`` for a traced ``a``."""
    return _logical(a, b, "the `and`", lax.bitwise_and, True)


def or_(a, b):
    """``a or b()`` for a traced ``a``."""
    return _logical(a, b, "the `or`", lax.bitwise_or, False)


def not_(a):
    """``not a`` for a traced ``a`` (a scalar: Python's ``not`` gives one truth value)."""
    return lax.bitwise_not(values.predicate(a, construct_at("the `not`")))


def assert_(cond, message=None):
    """``assert cond, message`` on a traced condition: checked when the program runs
    (``jax.experimental.checkify`` is the way to raise from compiled code), so refused here."""
    raise TracingError(
        f"{construct_at('the assert')} checks a traced value, which jax.jit cannot raise on. Use "
        "jax.experimental.checkify.check(...) in its place, or assert on a static value."
    )


def print_(*args, **kwargs):
    """``print(...)`` with a traced argument: ``jax.debug.print`` (prints each time the program runs)."""
    sep, end = kwargs.pop("sep", " "), kwargs.pop("end", "\n")
    if kwargs:
        raise TracingError(f"{construct_at('the print')} passes {sorted(kwargs)} with a traced value; "
                           "jax.debug.print takes only sep and end.")
    for a in args:
        if values.kind(a) != values.ARRAY and any(isinstance(v, jax.core.Tracer) for v in jax.tree_util.tree_leaves(a)):
            raise TracingError(
                f"{construct_at('the print')} prints a {type(a).__name__} holding traced values, whose text "
                "exists only while JAX traces; pass the arrays as separate arguments: print(a, b)"
            )
    parts = ["{}" if values.kind(a) == values.ARRAY else str(a).replace("{", "{{").replace("}", "}}")
             for a in args]
    arrays = [a for a in args if values.kind(a) == values.ARRAY]
    text = sep.join(parts) + ("" if end == "\n" else end)
    jax.debug.print(text, *arrays, ordered=True)


def _refuse_conversion(builtin):
    def refuse(value, *args):
        raise TracingError(
            f"{construct_at(f'the {builtin}()')} converts a traced value to a Python {builtin}, which needs "
            f"its value while JAX traces. Keep it an array ({'x.astype(...)' if builtin != 'bool' else 'x != 0'}), "
            "or mark the argument static (ag.jax.jit(f, static_argnums=...))."
        )

    return refuse


int_ = _refuse_conversion("int")
float_ = _refuse_conversion("float")
bool_ = _refuse_conversion("bool")


def abs_(x):
    return jnp.abs(x)


def len_(x):
    """``len(x)``: the static first dimension."""
    shape = values.aval_of(x).shape
    if not shape:
        raise TracingError(f"{construct_at('the len()')} is given a 0-d array, which has no length.")
    return shape[0]


def _extremum(name, pick, reduce):
    def extremum(*args, **kwargs):
        """``max``/``min`` with a traced argument: ``jnp.maximum``/``minimum`` of the arguments, or the
        reduction of one 1-d array (Python's ``max(v)`` over its items)."""
        if kwargs:
            raise TracingError(f"{construct_at(f'the {name}()')} passes {sorted(kwargs)} with a traced value; "
                               f"use jnp.{reduce.__name__} or jnp.where instead.")
        if len(args) == 1:
            (items,) = args
            if values.kind(items) != values.ARRAY or len(values.aval_of(items).shape) != 1:
                raise TracingError(f"{construct_at(f'the {name}()')} of a traced {values.describe(items)}: Python "
                                   "compares its items as truth values; give it a 1-d array, or use jnp.max/jnp.min.")
            return reduce(items)
        result = args[0]
        for other in args[1:]:
            result = pick(result, other)
        return result

    return extremum


max_ = _extremum("max", jnp.maximum, jnp.max)
min_ = _extremum("min", jnp.minimum, jnp.min)

# an augmented assignment as written -> the binary operator it applies
_BINARY = {
    "+=": operator.add, "-=": operator.sub, "*=": operator.mul, "@=": operator.matmul, "/=": operator.truediv,
    "//=": operator.floordiv, "%=": operator.mod, "**=": operator.pow, "<<=": operator.lshift,
    ">>=": operator.rshift, "&=": operator.and_, "|=": operator.or_, "^=": operator.xor,
}


def aug_setitem(target, index, op, value):
    """``target[index] op value`` on a JAX array: ``target.at[index].set(...)`` (JAX arrays are
    values; converted code rebinds the name with the result)."""
    new = value if op == "=" else _BINARY[op](target[index], value)
    return target.at[index].set(new)
