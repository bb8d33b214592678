"""Registry of behaviour-corpus functions and the harness that runs them.

A corpus module decorates each module-level function with ``@check(...)``,
listing the argument lists to call it with.  ``run(fn, call)`` calls a
function on fresh deep copies of the arguments and records everything a
caller can observe: the return value or the raised exception (type and
message), what was printed, the arguments after the call (mutation) and the
entries appended to the shared ``LOG`` (side effects on module state).
``same(a, b)`` compares two such observations exactly (numpy-aware).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
from typing import Any, Callable

import numpy as np

# Module-level side-effect sink: corpus functions append to it; the harness
# clears it before each run and records what was appended.
LOG: list = []


@dataclasses.dataclass(frozen=True)
class Call:
    """One argument list: positional ``args`` and keyword ``kwargs``."""

    args: tuple
    kwargs: dict

    def __repr__(self) -> str:
        parts = [repr(a) for a in self.args]
        parts += [f"{k}={v!r}" for k, v in sorted(self.kwargs.items())]
        return "(" + ", ".join(parts) + ")"


def call(*args: Any, **kwargs: Any) -> Call:
    """Spells an argument list that has keyword arguments."""
    return Call(args, kwargs)


@dataclasses.dataclass(frozen=True)
class Case:
    """A corpus function and the argument lists it is checked on.

    With ``factory=True``, ``fn`` is called with no arguments to make the
    function under test (a closure, a bound method...), once per run, so the
    original and the converted function never share state.
    """

    name: str
    fn: Callable
    calls: tuple
    factory: bool = False

    def target(self) -> Callable:
        return self.fn() if self.factory else self.fn


CASES: list[Case] = []


def _as_call(spec: Any) -> Call:
    if isinstance(spec, Call):
        return spec
    if isinstance(spec, tuple):
        return Call(spec, {})
    return Call((spec,), {})


def check(*specs: Any, factory: bool = False) -> Callable:
    """Registers the decorated function with its argument lists.

    Each spec is a ``call(...)``, a tuple of positional arguments, or a
    single positional argument.
    """

    def register(fn: Callable) -> Callable:
        calls = tuple(_as_call(s) for s in specs)
        assert calls, f"{fn.__qualname__}: give at least one argument list"
        CASES.append(Case(f"{fn.__module__}.{fn.__name__}", fn, calls, factory))
        return fn

    return register


@dataclasses.dataclass
class Outcome:
    """What a caller can observe of one call."""

    kind: str  # "return" or "raise"
    value: Any  # the return value, or (type, message) of the exception
    stdout: str
    args: tuple
    kwargs: dict
    log: list


def run(fn: Callable, spec: Call) -> Outcome:
    """Calls ``fn`` on deep copies of ``spec`` and records the outcome."""
    args = copy.deepcopy(spec.args)
    kwargs = copy.deepcopy(spec.kwargs)
    LOG.clear()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            kind, value = "return", fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            kind, value = "raise", (type(exc), str(exc))
    return Outcome(kind, value, out.getvalue(), args, kwargs, list(LOG))


def same(a: Any, b: Any) -> bool:
    """Exact structural equality, numpy arrays and scalars included."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and bool(
            np.array_equal(a, b)
        )
    if isinstance(a, np.generic):
        return a.dtype == b.dtype and bool(a == b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if hasattr(a, "__dict__") and not callable(a) and not isinstance(a, type):
        return same(vars(a), vars(b))
    return bool(a == b)
