"""When restaging a ``while`` from its first iteration is harmless (``loops.while_stmt``).

The loop's test became traced only after some Python iterations; staging
it from the state before them (``restart_state``) gives one
``lax.while_loop``, as a person writes it, instead of those iterations
traced inline in front of it.  That runs them once more, in the graph, so
it is allowed only if they had no effect but on the loop's own variables:

* the converter found the code binds names and calls, nothing else
  (``pyct/static_analysis/effects.py``; ``opts['effect_free']``, or
  ``opts['effect_free_if_pure']``, a closure giving the callees);
* every callee is a function known to have no effect (below);
* the state before the first iteration holds only values that cannot have
  changed in place (numbers, JAX arrays, tuples of them, ``None``,
  strings): ``x += 1`` on a numpy array, ``xs += [1]`` on a list would have.
"""

from __future__ import annotations

import jax

from autograph.runtime.jax_overloads import values


def harmless(start, here, callees) -> bool:
    """True if the loop may be staged again from ``start`` (the state is ``here`` now)."""
    return _fresh_and_immutable(start, here) and _pure(callees)


# What a loop may call and still be run again: JAX's array functions and methods (``jnp``, ``lax``'s
# operators, ``jax.nn``/``random``/``scipy``, ``x.sum``, ``x.at[i].set``), ``math``, a few builtins.
# Not: ``lax.cond``/loops and the functions taking a user function (which may have an effect),
# ``jax.debug``, callbacks, numpy (``out=``), anything of the user's.
_PURE_MODULES = ("jax.numpy", "jax._src.numpy", "jax.lax", "jax._src.lax.lax", "jax._src.lax.slicing",
                 "jax.nn", "jax._src.nn", "jax.random", "jax._src.random", "jax.scipy", "jax._src.scipy",
                 "jax._src.ops.special", "math")
_TAKES_FUNCTIONS = frozenset({"vectorize", "piecewise", "apply_along_axis", "apply_over_axes", "frompyfunc",
                              "reduce"})
_PURE_BUILTINS = (abs, len, int, float, bool, complex, round, divmod, pow, isinstance)


def _pure(callees) -> bool:
    """True if every function the loop calls is one of those (``callees``: the converter's closure)."""
    if callees is None:
        return True
    try:
        functions = callees()
    except Exception:  # noqa: BLE001 - a callee that cannot be evaluated now is not judged: no restart
        return False
    return all(_pure_function(f) for f in functions)


def _pure_function(function) -> bool:
    if any(function is b for b in _PURE_BUILTINS):
        return True
    module = getattr(function, "__module__", None) or ""
    in_pure_module = any(module == m or module.startswith(m + ".") for m in _PURE_MODULES)
    return in_pure_module and getattr(function, "__name__", "") not in _TAKES_FUNCTIONS


def _fresh_and_immutable(start, here) -> bool:
    """True if ``start`` differs from ``here`` (iterations ran) and holds no value they could have
    changed in place."""
    def immutable(value):
        if isinstance(value, tuple):
            return all(immutable(v) for v in value)
        leaf = values.kind(value)
        if leaf == values.ARRAY:
            return isinstance(value, (jax.Array, jax.core.Tracer))
        return leaf != values.PYTHON or value is None or type(value) is str

    return any(a is not b for a, b in zip(start, here)) and immutable(tuple(start))
