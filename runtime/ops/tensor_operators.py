"""The ``Tensor`` operators, installed from the one table of spellings (``core/spellings.py``).

``install()`` -- called once, by ``runtime/__init__.py`` -- puts the
table's dunders on ``Tensor``: ``t + 1``, ``2 ** t``, ``a @ b``, ``-t``,
``t < u``, ``t == u`` (elementwise, building an ``Equal`` op), ``a & b``
(``LogicalAnd`` on bools, ``BitwiseAnd`` on integers), and ``t[...]``
(``runtime/ops/indexing.py``).  Nothing is patched at import time.

Binary dunders return ``NotImplemented`` for operands that are not numeric
(``t == None`` is then plain Python ``False``).
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import dtypes
from autograph.runtime.core.spellings import SPELLINGS, Spelling
from autograph.runtime.ops import indexing, list_operators, math
from autograph.runtime.ops.list_operators import StagedList
from autograph.runtime.ops.common import dtype_of
from autograph.runtime.core.location import construct_at
from autograph.runtime.core.tensor import Tensor, is_python_number
from autograph.runtime.errors import TracingError


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
    # the logical op only when every operand is a bool: numpy's ``np.False_ | 2`` is the int64 2
    kind = "b" if all(type(v) is bool or (not is_python_number(v) and dtype_of(v).kind == "b")
                      for v in operands) else "i"
    for spelling in candidates:
        if kind in spelling.kinds:
            return spelling
    return candidates[-1]


def _repeated_sequence(self, other):
    """``[0] * n`` with a scalar tensor ``n``: Python repeats the list ``n`` times (a numpy int
    scalar is an index), a length only the graph knows, or raises ``TypeError`` (a float or bool
    scalar); numpy broadcasts only with arrays of one dimension or more."""
    if isinstance(other, StagedList) or type(other) not in (list, tuple) or (
            self.shape is not None and len(self.shape) > 0):
        return
    if self.dtype.kind not in "iu":
        raise TypeError(f"can't multiply sequence by non-int of type 'numpy.{self.dtype.name}'")
    raise TracingError(
        f"{construct_at(f'the {type(other).__name__} repeated by the tensor {self.name}')} would have "
        f"as many items as {self.name} says, which only the graph knows; a Python {type(other).__name__} "
        "needs its length while tracing. Make the repeat count a Python int, or build an array: "
        "rt.fill([n], value) or rt.zeros([n])."
    )


def _binary_method(candidates, reflected: bool):
    name = candidates[0].dunder.strip("_")

    def method(self, other):
        operands = (other, self) if reflected else (self, other)
        if isinstance(self, StagedList) or isinstance(other, StagedList):
            result = list_operators.binary(name, *operands)
            if result is not None:
                return result
        if name == "mul":
            _repeated_sequence(self, other)
        if not _numeric(other):
            return NotImplemented
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
        symbol = candidates[0].template.replace("{0}", "").strip()

        def method(self):
            if isinstance(self, StagedList):
                list_operators.unary(symbol, self)
            return math.unary(_choose(candidates, (self,)).op_type, self)

    method.__name__ = candidates[0].dunder
    return method


def _getitem(self, key):
    if type(key) is not slice:
        list_operators.check_items_readable(self)
    result = indexing.getitem(self, key)
    if isinstance(self, StagedList) and type(key) is slice and isinstance(result, Tensor):
        return StagedList.mark(result, self.label, self.numbers)  # a slice of a list is a list
    return result


def install() -> None:
    """Puts the operator dunders of ``SPELLINGS`` on ``Tensor`` (idempotent)."""
    groups: dict[str, list[Spelling]] = {}
    for spelling in SPELLINGS:
        groups.setdefault(spelling.dunder, []).append(spelling)
    for dunder, candidates in groups.items():
        if "{1}" in candidates[0].template:
            setattr(Tensor, dunder, _binary_method(candidates, reflected=False))
            if candidates[0].reflected:
                setattr(Tensor, candidates[0].reflected, _binary_method(candidates, reflected=True))
        else:
            setattr(Tensor, dunder, _unary_method(candidates))
    Tensor.__getitem__ = _getitem
