"""Backends: where the kernels of op types live, one table per backend.

An op type's meaning (inference, weak typing, statefulness, cost) is its
``OpDef`` (``core/opdef.py``); what computes it on concrete values is a
*kernel* of a backend.  A ``Backend`` record names:

* ``name`` -- ``"numpy"``, later ``"jax"``;
* ``kernels`` -- op type -> ``kernel(*input_values, **attrs)``, returning the
  output value of a single-output op or a tuple of values (``()`` for an op
  without outputs).  Functional ops (``If``, ``While``) have no kernel:
  running a sub-graph is the executor's rule (``exec/interpreter.py``);
* ``asarray`` -- ``asarray(value, dtype=None)``: a Python/numpy value as an
  array of the backend;
* ``compile`` -- optional ``compile(graph) -> (function, source)``: the whole
  graph as one function of the backend (numpy: ``backends/numpy/codegen.py``);
* ``compile_loop`` -- optional ``compile_loop(cond, body, bounded) ->
  (function, source)``: a ``While`` loop compiled, for the scheduler's loop
  tiering (``exec/tiering.run_loop``).  Both raise an ``AutoGraphError``
  (numpy: ``JitUnsupported``) for a graph they cannot compile;
* ``out_kernels`` -- the op types whose kernel can write its result into a
  given buffer of the result's dtype and shape, ``kernel(*inputs,
  out=buffer)``: the plan may donate dead temporaries to them
  (``exec/memory.donations``; numpy: its ufuncs);
* ``operator_kernels`` -- the op types whose kernel is, on the backend's
  values, the Python operator of their spelling (``core/spellings.py``):
  the interpreter calls the operator instead (numpy: ``np.add`` is ``+`` on
  numpy values, and ``+`` is ~10x cheaper on scalars).

The execution layer asks a backend these questions and never tests a
kernel's type: a backend that leaves them empty gets plain kernel calls.

A backend package builds its record (``backends/numpy/__init__.py``:
``BACKEND``); ``runtime/__init__.py`` installs the numpy one as the default
with ``register(BACKEND, default=True)``, its one explicit install step.
Eager ops, the interpreter (once per plan, not per run), constant folding
and the code generator look kernels up in the default backend.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Mapping


@dataclasses.dataclass(frozen=True)
class Backend:
    name: str
    kernels: Mapping[str, Callable]
    asarray: Callable
    compile: Callable | None = None
    compile_loop: Callable | None = None
    out_kernels: frozenset = frozenset()
    operator_kernels: frozenset = frozenset()

    def kernel(self, op_type: str) -> Callable:
        """The kernel of ``op_type``; a KeyError naming the op and the backend if there is none."""
        try:
            return self.kernels[op_type]
        except KeyError:
            raise KeyError(f"op type {op_type!r} has no kernel in the {self.name} backend") from None


_BACKENDS: dict[str, Backend] = {}
_default: Backend | None = None


def register(backend: Backend, *, default: bool = False) -> None:
    """Makes ``backend`` available by name (and the default one with ``default=True``)."""
    global _default
    _BACKENDS[backend.name] = backend
    if default:
        _default = backend


def names() -> list[str]:
    """The names of the registered backends."""
    return sorted(_BACKENDS)


def get(name: str | None = None) -> Backend:
    """The backend called ``name``, or the default one."""
    if name is None:
        if _default is None:
            raise RuntimeError("no default backend is installed (importing autograph.runtime installs numpy)")
        return _default
    try:
        return _BACKENDS[name]
    except KeyError:
        known = ", ".join(sorted(_BACKENDS)) or "none"
        raise KeyError(f"unknown backend {name!r} (registered: {known})") from None
