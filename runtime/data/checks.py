"""Argument checks of dataset constructors: each bad value is a ``ValueError``/``TypeError``
naming the transformation and the argument, said when the pipeline is built."""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import dtypes
from autograph.runtime.core.location import user_location_text
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.errors import TracingError

AUTOTUNE = -1
"""``num_parallel_calls=AUTOTUNE`` / ``prefetch(AUTOTUNE)``: let the runtime choose."""

INFINITE = -1
"""``repeat()`` / ``take(-1)``: no bound."""


def integer(value, what: str) -> int:
    """``value`` as a Python int; a ``TypeError`` naming ``what`` if it is not an integer."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iu":
            return int(value)
        if isinstance(value, Tensor):
            raise TracingError(
                f"{what} at {user_location_text()} is the symbolic tensor {value.name}: a pipeline's structure is "
                "fixed when it is built, so its sizes must be Python or numpy integers. Build the dataset outside "
                "the traced function (pass it in), or give the size as a Python value."
            )
        raise TypeError(f"{what} must be a Python or numpy integer, got {type(value).__name__} {value!r:.40}")
    return int(value)


def positive(value, what: str) -> int:
    """An integer >= 1 (``batch(0)`` is an error)."""
    n = integer(value, what)
    if n < 1:
        raise ValueError(f"{what} must be at least 1, got {n}")
    return n


def count(value, what: str) -> int:
    """An integer >= 0, or -1 for "all" (``take``, ``skip``, ``repeat``)."""
    if value is None:
        return INFINITE
    n = integer(value, what)
    if n < -1:
        raise ValueError(f"{what} must be -1 (meaning all) or at least 0, got {n}")
    return n


def buffer_size(value, what: str, allow_autotune: bool) -> int:
    """A buffer size: >= 0 (>= 1 for a shuffle), or ``AUTOTUNE`` where allowed."""
    n = integer(value, what)
    if allow_autotune and n == AUTOTUNE:
        return n
    if n < 0:
        hint = " (or rt.data.AUTOTUNE)" if allow_autotune else ""
        raise ValueError(f"{what} must not be negative{hint}, got {n}")
    return n


def parallelism(value, what: str) -> int | None:
    """``num_parallel_calls``: None (sequential), ``AUTOTUNE`` or an integer >= 1."""
    if value is None:
        return None
    n = integer(value, what)
    if n == AUTOTUNE:
        return n
    if n < 1:
        raise ValueError(f"{what} must be None, rt.data.AUTOTUNE or at least 1, got {n}")
    return n


def seed(value, what: str) -> int | None:
    if value is None:
        return None
    n = integer(value, what)
    if n < 0:
        raise ValueError(f"{what} must not be negative, got {n}")
    return n


def plain_array(value, what: str, copy: bool = False) -> np.ndarray:
    """``value`` as a plain numpy array of a dtype the runtime supports (a copy if ``copy``); a
    ``TypeError`` naming ``what`` for a value that would lose something on the way -- a masked
    array's mask, an ``np.matrix``'s 2-d rows -- or that is not numbers or bools."""
    if dtypes.is_masked_array(value):
        raise TypeError(
            f"{what} is a masked array; a dataset holds plain arrays, so its mask would be lost. Pass "
            "x.filled(fill_value), or x.data and x.mask as two components (x.compressed() drops the masked items)"
        )
    if isinstance(value, np.matrix):
        raise TypeError(f"{what} is an np.matrix, whose rows are 2-d matrices and whose * is a matrix product; "
                        "pass np.asarray(x)")
    try:
        array = np.array(value) if copy else np.asarray(value)
    except ValueError as error:  # a ragged nest of lists
        raise ValueError(f"{what} is not a rectangular array: {error}") from None
    if array.dtype not in dtypes.SUPPORTED:
        names = ", ".join(d.name for d in dtypes.SUPPORTED)
        raise TypeError(f"{what} is not an array of numbers or bools the runtime supports ({names}): it has "
                        f"dtype {array.dtype}: {value!r:.60}")
    return array
