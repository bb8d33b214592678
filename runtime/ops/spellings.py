"""The one table of operator spellings: op type <-> Python operator.

Each ``Spelling`` says which Python dunder builds an op type on a ``Tensor``
and how the op is written as Python (``template``, used by printers and code
generators).  ``install()`` (run on import) puts the dunders on ``Tensor``:
``t + 1``, ``2 ** t``, ``a @ b``, ``-t``, ``t < u``, ``t == u`` (elementwise,
building an ``Equal`` op), ``a & b`` (``LogicalAnd`` on bools,
``BitwiseAnd`` on integers), and ``t[...]`` (``runtime/ops/indexing.py``).

Binary dunders return ``NotImplemented`` for operands that are not numeric
(``t == None`` is then plain Python ``False``).

The table also decides weak typing (``Tensor.weak``, NEP 50): an operator
Python spells on numbers gives a Python number (``1.0 + 2`` is a float,
``abs(-1)`` an int, ``1 < 2`` a bool), so ``install()`` gives every op type
here the rule "weak when all inputs are weak".  Ops reached only through
``rt.*`` functions (``Sqrt``, ``Maximum``, ``Sum``, ...) return numpy values
eagerly, and keep the default rule: strongly typed.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from autograph.runtime.core import dtypes, opdef

from autograph.runtime.ops import apply
from autograph.runtime.ops import indexing, math
from autograph.runtime.ops._common import dtype_of
from autograph.runtime.core.tensor import Tensor, is_python_number, is_weak


@dataclasses.dataclass(frozen=True)
class Spelling:
    op_type: str
    dunder: str  # the Tensor method that builds this op
    reflected: str | None  # the method for ``other <op> tensor``; None for unary and comparisons
    template: str  # the op as Python: "{0} + {1}"
    kinds: str = ""  # dtype kinds this spelling applies to when several share a dunder ("" = all)


SPELLINGS: tuple[Spelling, ...] = (
    Spelling("Add", "__add__", "__radd__", "{0} + {1}"),
    Spelling("Sub", "__sub__", "__rsub__", "{0} - {1}"),
    Spelling("Mul", "__mul__", "__rmul__", "{0} * {1}"),
    Spelling("RealDiv", "__truediv__", "__rtruediv__", "{0} / {1}"),
    Spelling("FloorDiv", "__floordiv__", "__rfloordiv__", "{0} // {1}"),
    Spelling("FloorMod", "__mod__", "__rmod__", "{0} % {1}"),
    Spelling("Pow", "__pow__", "__rpow__", "{0} ** {1}"),
    Spelling("MatMul", "__matmul__", "__rmatmul__", "{0} @ {1}"),
    Spelling("Less", "__lt__", None, "{0} < {1}"),
    Spelling("LessEqual", "__le__", None, "{0} <= {1}"),
    Spelling("Greater", "__gt__", None, "{0} > {1}"),
    Spelling("GreaterEqual", "__ge__", None, "{0} >= {1}"),
    Spelling("Equal", "__eq__", None, "{0} == {1}"),
    Spelling("NotEqual", "__ne__", None, "{0} != {1}"),
    Spelling("LogicalAnd", "__and__", "__rand__", "{0} & {1}", kinds="b"),
    Spelling("BitwiseAnd", "__and__", "__rand__", "{0} & {1}", kinds="iu"),
    Spelling("LogicalOr", "__or__", "__ror__", "{0} | {1}", kinds="b"),
    Spelling("BitwiseOr", "__or__", "__ror__", "{0} | {1}", kinds="iu"),
    Spelling("LogicalXor", "__xor__", "__rxor__", "{0} ^ {1}", kinds="b"),
    Spelling("BitwiseXor", "__xor__", "__rxor__", "{0} ^ {1}", kinds="iu"),
    Spelling("Neg", "__neg__", None, "-{0}"),
    Spelling("Identity", "__pos__", None, "+{0}"),
    Spelling("Abs", "__abs__", None, "abs({0})"),
    Spelling("LogicalNot", "__invert__", None, "~{0}", kinds="b"),
    Spelling("Invert", "__invert__", None, "~{0}", kinds="iu"),
)

BY_OP_TYPE: dict[str, Spelling] = {s.op_type: s for s in SPELLINGS}


def template(op_type: str) -> str | None:
    """How op ``op_type`` is written in Python (``"{0} + {1}"``), or None."""
    spelling = BY_OP_TYPE.get(op_type)
    return spelling.template if spelling else None


def _numeric(value) -> bool:
    if isinstance(value, (Tensor, np.ndarray, np.generic)) or is_python_number(value):
        return True
    if isinstance(value, (list, tuple)):
        try:
            return np.asarray(value).dtype in dtypes.SUPPORTED
        except (ValueError, TypeError):
            return False
    return False


def _choose(candidates, operands) -> Spelling:
    """The spelling among ``candidates`` (sharing one dunder) that fits the operands' dtype kind."""
    if len(candidates) == 1:
        return candidates[0]
    kinds = {dtype_of(v).kind for v in operands if not is_weak(v)} or {dtype_of(operands[0]).kind}
    kind = "b" if kinds == {"b"} else "i"
    for spelling in candidates:
        if kind in spelling.kinds:
            return spelling
    return candidates[-1]


def _binary_method(candidates, reflected: bool):
    def method(self, other):
        if not _numeric(other):
            return NotImplemented
        operands = (other, self) if reflected else (self, other)
        spelling = _choose(candidates, operands)
        if spelling.op_type == "MatMul":
            return math.matmul(*operands)
        return math.binary(spelling.op_type, *operands)

    method.__name__ = candidates[0].reflected if reflected else candidates[0].dunder
    return method


def _unary_method(candidates):
    if candidates[0].op_type == "Identity":

        def method(self):
            return self

    else:

        def method(self):
            return math.unary(_choose(candidates, (self,)).op_type, self)

    method.__name__ = candidates[0].dunder
    return method


def _getitem(self, key):
    return indexing.getitem(self, key)


def install() -> None:
    """Puts the operator dunders of ``SPELLINGS`` on ``Tensor``; sets their ops' weak typing rule."""
    groups: dict[str, list[Spelling]] = {}
    for spelling in SPELLINGS:
        groups.setdefault(spelling.dunder, []).append(spelling)
        opdef.set_weak_rule(spelling.op_type, opdef.weak_if_all_inputs_weak)
    for dunder, candidates in groups.items():
        if "{1}" in candidates[0].template:
            setattr(Tensor, dunder, _binary_method(candidates, reflected=False))
            if candidates[0].reflected:
                setattr(Tensor, candidates[0].reflected, _binary_method(candidates, reflected=True))
        else:
            setattr(Tensor, dunder, _unary_method(candidates))
    Tensor.__getitem__ = _getitem


install()
