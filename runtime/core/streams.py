"""Random streams that live as long as the ops naming them.

A random op's ``stream`` attribute names its sequence of draws.  The name is
a ``StreamName``: a ``str`` (it prints, compares, hashes and saves as its
text) that also carries the stream's state, the numpy ``Generator`` made on
the op's first run.  Every graph holding the op -- the traced graph, the
optimizer's clone, a loaded copy of a file -- shares the one name object,
so the stream continues across them and dies with the last of them:
nothing is kept per graph in a process-wide table.  Copying a name (``copy``,
``deepcopy``) keeps the stream; pickling saves the text only.
"""

from __future__ import annotations

import threading

import numpy as np

_lock = threading.Lock()


class StreamName(str):
    """The name of one random op's stream, carrying the stream (``generator``)."""

    def __new__(cls, text: str):
        name = super().__new__(cls, text)
        name._generator = None
        return name

    def generator(self, seed, seed2) -> np.random.Generator:
        """The stream's numpy generator, made from the seeds on first use (None: entropy)."""
        found = self._generator
        if found is None:
            with _lock:
                found = self._generator
                if found is None:
                    found = self._generator = np.random.default_rng(None if seed is None else [seed, seed2])
        return found

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (str, (str(self),))
