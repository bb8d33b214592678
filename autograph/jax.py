"""``ag.jax``: AutoGraph for JAX users.

``ag.jax.jit(f, static_argnums=..., **jit_kwargs)`` is ``jax.jit(ag.convert(f))``
in one step: ``f``'s ``if``/``while``/``for``/``break``/``continue``/
``return``, ``and``/``or``/``not`` and ternaries on traced values become
``lax.cond``/``lax.while_loop``/``lax.scan`` (the handlers of
``autograph.runtime.jax_overloads``), Python values stay Python.  It also
answers JAX's own refusal of a traced value used as a Python value in code
that was not converted (``bool(x)`` in a library function, ``int(x)``) with
an ``ag.TracingError`` naming the construct and the user's ``file:line``, and
so is a traced value that escaped the ``lax`` body that computed it.

``jax.jit(ag.convert(f))``, ``jax.grad(ag.convert(f))`` and
``jax.vmap(ag.convert(f))`` work as well: the handlers load by themselves.

Importing ``autograph`` does not import this module (nor JAX): ``ag.jax``
loads it on first use.
"""

from __future__ import annotations

import functools
import os

import jax

from autograph import api
from autograph.runtime import jax_overloads
from autograph.runtime.core import location
from autograph.runtime.errors import TracingError

__all__ = ["jit"]

_JAX_DIRS = tuple(os.path.dirname(m.__file__) + os.sep for m in (jax, __import__("jaxlib")))

_UNCONVERTED = ("in code autograph did not convert (a do_not_convert function, a library, or a construct left "
                "as written): JAX needs that value while it traces. Let autograph convert the function, compute "
                "it with jnp/lax (jnp.where, lax.cond), or mark the argument static (ag.jax.jit(f, static_argnums=...)).")
# JAX's error -> what the user's code did, and what to do instead
_CONSTRUCTS = (
    (jax.errors.TracerBoolConversionError,
     "the truth value (bool(), if, while, and/or, assert) of a traced value", _UNCONVERTED),
    (jax.errors.TracerIntegerConversionError,
     "a traced value used as a Python int (int(), an index, range())", _UNCONVERTED),
    (jax.errors.ConcretizationTypeError, "a Python value computed from a traced value", _UNCONVERTED),
    (jax.errors.UnexpectedTracerError, "a traced value used outside the branch or loop body that computed it",
     "(a function the body called stored it in an enclosing variable, a global or an object, which lax cannot "
     "carry out). Return it from the function, or assign it in the converted function itself."),
)
_REFUSED = tuple(kind for kind, _, _ in _CONSTRUCTS)


def jit(fun=None, /, *, static_argnums=None, **jit_kwargs):
    """``jax.jit(ag.convert(fun), static_argnums=static_argnums, **jit_kwargs)``; usable as a decorator,
    with or without arguments."""
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums, **jit_kwargs)
    if not callable(fun):
        raise TypeError(f"ag.jax.jit expects a function, got {type(fun).__name__} {fun!r}")
    jax_overloads.load()
    converted = api.convert(fun)

    @functools.wraps(fun)
    def traced(*args, **kwargs):
        try:
            return converted(*args, **kwargs)
        except _REFUSED as e:
            raise _refusal(e) from e

    jitted = jax.jit(traced, static_argnums=static_argnums, **jit_kwargs)
    functools.update_wrapper(jitted, fun)
    return jitted


def _user_line(error):
    """``file:line`` of the innermost frame of ``error``'s traceback outside autograph and JAX."""
    found = None
    tb = error.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if location._is_user_file(filename) and not filename.startswith(_JAX_DIRS):
            found = f"{filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found or "<unknown>"


def _refusal(error):
    construct, advice = next((text, advice) for kind, text, advice in _CONSTRUCTS if isinstance(error, kind))
    return TracingError(f"{construct} at {_user_line(error)}, {advice}")
