"""The one table of operator spellings: op type <-> Python operator.

Each ``Spelling`` says which Python dunder builds an op type on a ``Tensor``
and how the op is written as Python (``template``).  The table feeds the
``Tensor`` dunders (installed once by ``runtime/ops/tensor_operators.py``), the
printers (``core/printer.py``), the interpreter's fast path for operators
on scalars (``exec/interpreter.py``) and the code generator
(``backends/numpy/codegen.py``).

Several spellings may share a dunder: ``&`` is ``LogicalAnd`` on bools and
``BitwiseAnd`` on integers (``kinds`` says which dtype kinds each one is
for).

It also decides weak typing (``Tensor.weak``, NEP 50): an operator Python
spells on numbers gives a Python number (``1.0 + 2`` is a float,
``abs(-1)`` an int, ``1 < 2`` a bool), so an op type listed here gets the
rule "weak when all inputs are weak" unless its definition says otherwise
(``opdef.register``).  Ops reached only through ``rt.*`` functions
(``Sqrt``, ``Maximum``, ``Sum``, ...) return numpy values eagerly, and keep
the default rule: strongly typed.
"""

from __future__ import annotations

import dataclasses


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
    Spelling("LeftShift", "__lshift__", "__rlshift__", "{0} << {1}"),
    Spelling("RightShift", "__rshift__", "__rrshift__", "{0} >> {1}"),
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
