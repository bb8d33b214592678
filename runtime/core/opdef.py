"""Op definitions: what each op type means, in one record per type.

An ``OpDef`` holds everything passes and executors need to know about an op
type, and nothing that computes it:

* ``infer(inputs, attrs)`` -- shape/dtype inference: gets the input tensors
  (objects with ``dtype`` and ``shape``) and returns a list of
  ``(dtype, shape)``, one per output.  Dtype rules follow numpy's type
  tables (``np.result_type``, ``ufunc.resolve_dtypes``) without running
  any kernel;
* ``stateful`` -- it has side effects: it runs in program order at every
  execution and is never pruned;
* ``weak`` -- its weak-typing rule (below);
* ``function_attrs`` -- the attributes that name sub-graphs of the
  function library (``If``: ``then_branch``/``else_branch``; ``While``:
  ``cond``/``body``): it is a *functional* op;
* ``cost`` -- the static cost weight per output element the scheduler
  uses to decide what is worth a thread (``cost_of``; 0: free, a callable
  ``cost(op)`` for ops whose work is not proportional to their output, such
  as ``MatMul``);
* ``verify(op, library)`` -- an optional hook for ``graph.verify()`` that
  checks an op's sub-graph signatures (raise ``ValueError`` on a mismatch).

Kernels live in the backends (``core/backend.py``, ``backends/numpy/
kernels.py``), never here.  Every pass, executor and backend looks op types
up in ``REGISTRY`` (with a default rule for types it has no entry for).

Weak typing (NEP 50, as in JAX): a Python number converted to a tensor
(``convert_to_tensor(1.0)``) is a *weakly typed* ``Const``
(``Tensor.weak``).  An op's ``weak`` rule says which outputs are weak given
the inputs and attrs; no rule means "strongly typed", except for the op
types Python spells on numbers (``+``, ``<``, unary ``-``, ``abs``...: the
table in ``core/spellings.py``), which keep weakness when every input is
weak.  ``Const``/``Cast`` read their ``weak`` attr; ``If`` and ``While`` are
weak where every branch / the loop keeps the value weak.  Dtype inference
runs on the inputs' actual dtypes: the op library has already cast weak
operands to the dtype their strongly typed partners give them
(``ops/_common.promote``), so kernels and inference agree without knowing
about weakness.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import numpy as np

from autograph.runtime.core import shapes, spellings


@dataclasses.dataclass(frozen=True)
class OpDef:
    type: str
    infer: Callable
    stateful: bool = False
    weak: Callable | None = None  # rule(inputs, attrs) -> bool (every output) or a list of bools
    function_attrs: tuple[str, ...] = ()
    cost: float | Callable = 1
    verify: Callable | None = None


REGISTRY: dict[str, OpDef] = {}


def register(
    type: str,
    *,
    infer: Callable,
    stateful: bool = False,
    weak: Callable | None = None,
    function_attrs: tuple[str, ...] = (),
    cost: float | Callable = 1,
    verify: Callable | None = None,
) -> OpDef:
    """Registers op ``type``; registering a type twice is a programming error.

    ``weak`` defaults to ``weak_if_all_inputs_weak`` for the op types of the
    spellings table, to "strongly typed" for the others.
    """
    if type in REGISTRY:
        raise ValueError(f"op type {type!r} is already registered")
    if weak is None and type in spellings.BY_OP_TYPE:
        weak = weak_if_all_inputs_weak
    opdef = OpDef(type, infer, stateful, weak, tuple(function_attrs), cost, verify)
    REGISTRY[type] = opdef
    return opdef


# -- weak typing ------------------------------------------------------------


def weak_if_all_inputs_weak(inputs, attrs) -> bool:
    """The rule of ops that compute a Python number from Python numbers (``1.0 + 2`` is a float)."""
    return bool(inputs) and all(t.weak for t in inputs)


def weak_if_first_input_weak(inputs, attrs) -> bool:
    """The rule of ops that read part of their first input (``l[i]`` of a staged list of Python
    numbers is a Python number)."""
    return bool(inputs) and inputs[0].weak


def weak_from_attr(inputs, attrs) -> bool:
    """The rule of ``Const`` and ``Cast``: weak when their ``weak`` attr says so."""
    return bool(attrs.get("weak", False))


def weak_outputs(op_type: str, inputs, attrs, n_outputs: int) -> list[bool]:
    """For each output of an ``op_type`` op on ``inputs``: is it weakly typed?"""
    definition = REGISTRY.get(op_type)
    rule = None if definition is None else definition.weak
    if rule is None:
        return [False] * n_outputs
    found = rule(inputs, attrs)
    if isinstance(found, (bool, np.bool_)):
        return [bool(found)] * n_outputs
    return [bool(w) for w in found]


# -- cost -------------------------------------------------------------------


def cost_of(op) -> float:
    """Static cost estimate of ``op``: its output elements times its ``cost`` weight (0 if unknown)."""
    definition = REGISTRY.get(op.type)
    weight = 1 if definition is None else definition.cost
    if callable(weight):
        return weight(op)
    if not weight:
        return 0
    total = 0
    for t in op.outputs:
        if shapes.is_fully_defined(t.shape):
            total += math.prod(t.shape)
    return total * weight


# -- conversions ------------------------------------------------------------


def function_attr_names(op_type: str) -> tuple[str, ...]:
    """The attributes of an ``op_type`` op that name library functions (``()``: not a functional op)."""
    definition = REGISTRY.get(op_type)
    return () if definition is None else definition.function_attrs


def function_attrs(op) -> list[tuple[str, str]]:
    """``(attr name, library function name)`` for each function ``op`` refers to."""
    names = function_attr_names(op.type)
    return [(a, op.attrs[a]) for a in names if isinstance(op.attrs.get(a), str)]


def get(type: str) -> OpDef:
    try:
        return REGISTRY[type]
    except KeyError:
        raise KeyError(f"unknown op type {type!r}: it was never registered") from None


def default_name(op_type: str) -> str:
    """The base name of an op's outputs: ``ZerosLike`` -> ``zeros_like``, ``MatMul`` -> ``matmul``."""
    name = _NAMES.get(op_type)
    if name is None:
        chars = []
        for i, c in enumerate(op_type):
            if c.isupper() and i and (op_type[i - 1].islower() or op_type[i - 1].isdigit()):
                chars.append("_")
            chars.append(c.lower())
        name = _NAMES[op_type] = "".join(chars)
    return name


# op type -> base name, where the runtime function's name reads better than the type's
_NAMES: dict[str, str] = {
    "MatMul": "matmul",
    "ArgMax": "argmax",
    "ConcatV2": "concat",
    "GatherV2": "gather",
    "RealDiv": "truediv",
    "FloorDiv": "floordiv",
    "FloorMod": "mod",
    "Pack": "stack",
    "Select": "where",
}


