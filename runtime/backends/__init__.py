"""Backends: per-backend kernel tables and compilers (numpy is the default).

``resolve(name)`` is how an option ``backend=name`` finds its backend: a
registered one, or an optional one loaded on first use (``OPTIONAL``: name ->
its package, whose ``load()`` imports it and registers it).
"""

from __future__ import annotations

import importlib

from autograph.runtime.core import backend

OPTIONAL = {"jax": "autograph.runtime.backends.jax"}


def resolve(name: str) -> backend.Backend:
    """The backend called ``name``; a ``ValueError`` listing the known names for another name."""
    if name in backend.names():
        return backend.get(name)
    if name in OPTIONAL:
        return importlib.import_module(OPTIONAL[name]).load()
    known = ", ".join(repr(n) for n in sorted({*backend.names(), *OPTIONAL}))
    raise ValueError(f"unknown backend {name!r}: the backends are {known}")
