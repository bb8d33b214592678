"""``ag.jax``: AutoGraph for JAX users.

``ag.jax.jit(f, static_argnums=..., **jit_kwargs)`` is ``jax.jit(ag.convert(f))``
in one step: ``f``'s ``if``/``while``/``for``/``break``/``continue``/
``return``, ``and``/``or``/``not`` and ternaries on traced values become
``lax.cond``/``lax.while_loop``/``lax.scan`` (the handlers of
``autograph.runtime.jax_overloads``), Python values stay Python.  JAX's own
refusals of a traced value used as a Python value (``bool(x)`` in a library
function, ``xs[i]`` on a Python list, ``np.sin(x)``), and of a traced value
that escaped the ``lax`` body that computed it, come as an ``ag.TracingError``
naming the construct and the user's ``file:line``
(``jax_overloads/errors.py``; so they do under ``jax.jit(ag.convert(f))``).

``jax.jit(ag.convert(f))``, ``jax.grad(ag.convert(f))`` and
``jax.vmap(ag.convert(f))`` work as well: the handlers load by themselves.

Importing ``autograph`` does not import this module (nor JAX): ``ag.jax``
loads it on first use.
"""

from __future__ import annotations

import functools

import jax

from autograph import api
from autograph.runtime import jax_overloads

__all__ = ["jit"]


def jit(fun=None, /, *, static_argnums=None, **jit_kwargs):
    """``jax.jit(ag.convert(fun), static_argnums=static_argnums, **jit_kwargs)``; usable as a decorator,
    with or without arguments."""
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums, **jit_kwargs)
    if not callable(fun):
        raise TypeError(f"ag.jax.jit expects a function, got {type(fun).__name__} {fun!r}")
    jax_overloads.load()
    jitted = jax.jit(api.convert(fun), static_argnums=static_argnums, **jit_kwargs)
    functools.update_wrapper(jitted, fun)
    return jitted
