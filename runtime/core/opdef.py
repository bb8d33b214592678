"""Op definitions: what each op type means, in one record per type.

An ``OpDef`` gives an op type its shape/dtype inference (``infer``),
whether it has side effects (``stateful``), its weak-typing rule, the
attributes that name sub-graphs of the function library and an optional
``verify`` hook.  Every pass, executor and backend looks op types up here
(with a default rule for types it has no entry for); kernels live in the
backends (``runtime/backends/``), never here.

Inference contract: ``infer(inputs, attrs)`` gets the input tensors (objects
with ``dtype`` and ``shape``) and returns a list of ``(dtype, shape)``.

Functional ops: attributes that name functions of the graph library (``If``:
``then_branch``/``else_branch``; ``While``: ``cond``/``body``) are listed in
``FUNCTION_ATTRS`` (``register(..., function_attrs=...)`` adds entries).  An
optional ``verify(op, library)`` hook checks an op's sub-graph signatures
for ``graph.verify()`` (raise ``ValueError`` with a message on a mismatch).

Weak typing (NEP 50, as in JAX): a Python number converted to a tensor
(``convert_to_tensor(1.0)``) is a *weakly typed* ``Const``
(``Tensor.weak``).  ``WEAK_RULES`` says, per op type, which outputs are
weak given the inputs and attrs; the default rule (no entry) is "strongly
typed".  The operators Python spells on numbers (``+``, ``<``, unary ``-``,
``abs``..., registered by ``ops/spellings.py``) keep weakness when
every input is weak; ``Const``/``Cast`` read their ``weak`` attr; ``If`` and
``While`` are weak where every branch / the loop keeps the value weak.
Dtype inference runs on the inputs' actual dtypes: the op library has
already cast weak operands to the dtype their strongly typed partners give
them (``ops/_common.promote``), so kernels and inference agree without
knowing about weakness.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from autograph.runtime.core import dtypes


@dataclasses.dataclass(frozen=True)
class OpDef:
    type: str
    infer: Callable
    kernel: Callable
    stateful: bool = False
    verify: Callable | None = None


REGISTRY: dict[str, OpDef] = {}

# op type -> names of its attributes that name functions of the graph library.
FUNCTION_ATTRS: dict[str, tuple[str, ...]] = {
    "If": ("then_branch", "else_branch"),
    "While": ("cond", "body"),
}


# op type -> rule(inputs, attrs) -> bool (every output) or list of bools (one per
# output): which outputs are weakly typed.  No entry: strongly typed outputs.
WEAK_RULES: dict[str, Callable] = {}


def register(
    type: str,
    *,
    infer: Callable,
    kernel: Callable,
    stateful: bool = False,
    verify: Callable | None = None,
    function_attrs: tuple[str, ...] | None = None,
    weak: Callable | None = None,
) -> OpDef:
    """Registers op ``type``; registering a type twice is a programming error.

    ``weak`` is the op's entry in ``WEAK_RULES`` (default: strongly typed outputs).
    """
    if type in REGISTRY:
        raise ValueError(f"op type {type!r} is already registered")
    opdef = OpDef(type, infer, kernel, stateful, verify)
    REGISTRY[type] = opdef
    if function_attrs is not None:
        FUNCTION_ATTRS[type] = tuple(function_attrs)
    if weak is not None:
        WEAK_RULES[type] = weak
    return opdef


# -- weak typing ------------------------------------------------------------


def weak_if_all_inputs_weak(inputs, attrs) -> bool:
    """The rule of ops that compute a Python number from Python numbers (``1.0 + 2`` is a float)."""
    return bool(inputs) and all(t.weak for t in inputs)


def weak_from_attr(inputs, attrs) -> bool:
    """The rule of ``Const`` and ``Cast``: weak when their ``weak`` attr says so."""
    return bool(attrs.get("weak", False))


def set_weak_rule(type: str, rule: Callable) -> None:
    """Sets the ``WEAK_RULES`` entry of an already registered op type."""
    get(type)
    WEAK_RULES[type] = rule


def weak_outputs(op_type: str, inputs, attrs, n_outputs: int) -> list[bool]:
    """For each output of an ``op_type`` op on ``inputs``: is it weakly typed?"""
    rule = WEAK_RULES.get(op_type)
    if rule is None:
        return [False] * n_outputs
    found = rule(inputs, attrs)
    if isinstance(found, (bool, np.bool_)):
        return [bool(found)] * n_outputs
    return [bool(w) for w in found]


# -- conversions ------------------------------------------------------------


def function_attrs(op) -> list[tuple[str, str]]:
    """``(attr name, library function name)`` for each function ``op`` refers to."""
    names = FUNCTION_ATTRS.get(op.type, ())
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


