"""A thread's mapping, extended for the extent of a ``with`` block.

``ScopedMap`` answers ``get(key)`` from the entries of the ``with
extended(entries):`` blocks running in this thread, an inner block's
entries shadowing the outer ones'; leaving a block restores what was there
before it.  Tracing keeps such facts while it runs: the list and dict
arguments of the traces running (``tracing/argument_containers.py``), the
initial values of the loop variables whose bodies are being traced
(``tracing/loops.py``).
"""

from __future__ import annotations

import threading


class ScopedMap:
    """``get`` answers from the entries of the ``extended`` blocks running in this thread."""

    __slots__ = ("_local",)

    def __init__(self):
        self._local = threading.local()

    def get(self, key, default=None):
        return getattr(self._local, "entries", {}).get(key, default)

    def extended(self, entries: dict) -> "_Extension":
        """``with scoped.extended(entries):`` -- ``entries`` (a dict) answer ``get`` in the block."""
        return _Extension(self._local, entries)


class _Extension:
    """(A class, not a generator: entered for every trace and loop body.)"""

    __slots__ = ("local", "entries", "outer")

    def __init__(self, local, entries):
        self.local, self.entries = local, entries

    def __enter__(self):
        self.outer = getattr(self.local, "entries", {})
        self.local.entries = {**self.outer, **self.entries}

    def __exit__(self, *exc_info):
        self.local.entries = self.outer
        return False
