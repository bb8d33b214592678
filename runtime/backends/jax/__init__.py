"""The JAX backend: ``ag.function(f, backend="jax")`` graphs compiled by XLA through ``jax.jit``.

Importing this package does not import JAX; ``load()`` does, and registers
the backend (``core.backend.register``) on first use.  Without JAX installed
``load()`` raises an ``AutoGraphError`` saying which extra to install.

* ``kernels.py`` -- op type -> its ``jax.numpy``/``lax`` form (the pure ops),
  and the op types never lowered, with the reason;
* ``effects.py`` -- variables and random streams as threaded state, ``print``
  and ``py_function`` as ordered host callbacks;
* ``lowering.py`` -- the graph evaluated while JAX traces it: ``If`` as
  ``lax.cond``, ``While`` as ``lax.while_loop``;
* ``compiler.py`` -- ``compile_graph``: ``jax.jit`` of the lowered graph, the
  state read before and written back after a call, x64 enabled, and the
  fall-back to the numpy backend for a graph it cannot lower.
"""

from __future__ import annotations

from autograph.runtime import errors
from autograph.runtime.core import backend

NAME = "jax"
INSTALL = "pip install autograph[jax]"


def load() -> backend.Backend:
    """The JAX backend (imported and registered on first use)."""
    if NAME in backend.names():
        return backend.get(NAME)
    try:
        import jax  # noqa: F401
    except ImportError as e:
        raise errors.AutoGraphError(
            f"backend='jax' needs JAX, which is not installed ({e}): install the extra with "
            f"`{INSTALL}` (or `pip install jax[cpu]`; `jax[cuda12]` for an NVIDIA GPU)"
        ) from None
    import jax.numpy as jnp

    from autograph.runtime.backends.jax import compiler, kernels

    record = backend.Backend(name=NAME, kernels=kernels.KERNELS, asarray=jnp.asarray,
                             compile=compiler.compile_graph)
    backend.register(record)
    return record


def jax_function(graph):
    """``graph`` (e.g. ``concrete_function.execution_graph``) as an ordinary JAX function of its
    inputs (``compiler.jax_function``)."""
    load()
    from autograph.runtime.backends.jax import compiler

    return compiler.jax_function(graph)
