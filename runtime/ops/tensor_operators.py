"""The ``Tensor`` operators, installed from the one table of spellings (``core/spellings.py``).

``install()`` -- called once, by ``runtime/__init__.py`` -- puts the
table's dunders on ``Tensor``: ``t + 1``, ``2 ** t``, ``a @ b``, ``-t``,
``t < u``, ``t == u`` (elementwise, building an ``Equal`` op), ``a & b``
(``LogicalAnd`` on bools, ``BitwiseAnd`` on integers), and ``t[...]``
(``runtime/ops/indexing.py``).  Nothing is patched at import time.

Binary dunders return ``NotImplemented`` for operands that are not numeric
(``t == None`` is then plain Python ``False``); an instance of a subclass of
``int`` or ``float`` (an ``IntEnum``) is, as numpy takes it, an int64 or
float64 (strongly typed: only Python's own number types are weak).

In-place operators (``t += v``) on an array (a tensor of rank >= 1) follow
numpy's: the result keeps ``t``'s dtype (cast as ``same_kind`` casting
allows, else numpy's ``UFuncTypeError``) and shape (else numpy's
``ValueError``), and the store check the operators layer registers
(``register_store_check``) refuses one that another name would see.  On a
number or numpy scalar they rebind, as Python's immutable numbers do.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import dtypes
from autograph.runtime.core.spellings import SPELLINGS, Spelling
from autograph.runtime.ops import indexing, list_operators, math
from autograph.runtime.ops.list_operators import StagedList
from autograph.runtime.ops.basic import cast
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
        if type(other) not in _PYTHON_TYPES and isinstance(other, (int, float)):
            other = np.int64(other) if isinstance(other, int) else np.float64(other)  # an IntEnum: as numpy takes it
        operands = (other, self) if reflected else (self, other)
        if isinstance(self, StagedList) or isinstance(other, StagedList):
            result = list_operators.binary(name, *operands)
            if result is not None:
                return result
        if name == "mul":
            _repeated_sequence(self, other)
        if not _numeric(other):
            return NotImplemented
        if name == "pow" and not reflected and type(other) is int and other == 2 and self.dtype == np.bool_ and (
                self.shape is not None and len(self.shape) > 0):
            return cast(self, np.int8)  # numpy's ``array ** 2`` is np.square: of bools, int8 (a scalar's is int64)
        spelling = _choose(candidates, operands)
        if spelling.op_type == "MatMul":
            if all(_is_scalar(v) for v in operands):  # numpy scalars have no @ (arrays: matmul's ValueError)
                a, b = (_scalar_type_name(v) for v in operands)
                raise TypeError(f"{construct_at('the @')}: unsupported operand type(s) for @: '{a}' and '{b}'")
            return math.matmul(*operands)
        return math.binary(spelling.op_type, *operands)

    method.__name__ = candidates[0].reflected if reflected else candidates[0].dunder
    return method


_PYTHON_TYPES = (int, float, bool)


def _is_scalar(value) -> bool:
    return value.shape == () if isinstance(value, Tensor) else not isinstance(value, np.ndarray)


def _scalar_type_name(value) -> str:
    """The type Python names for a scalar operand: a Python number's, or the numpy scalar a 0-d tensor
    stands for (a weak one: the Python number's)."""
    if not isinstance(value, Tensor):
        return type(value).__name__ if type(value) in _PYTHON_TYPES else f"numpy.{np.asarray(value).dtype.name}"
    if value.weak:
        return {"b": "bool", "f": "float"}.get(value.dtype.kind, "int")
    return f"numpy.{value.dtype.name}"

# the dunder's name -> the ufunc numpy's in-place operator runs
_IN_PLACE = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.divide, "floordiv": np.floor_divide,
             "mod": np.remainder, "pow": np.power, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
             "lshift": np.left_shift, "rshift": np.right_shift, "matmul": np.matmul}

_store_check = None  # check(tensor): refuses a store another name would see (operators/data_structures.py)


def register_store_check(check) -> None:
    """Tells the in-place operators how to refuse a store through an alias (a registration: this
    module imports nothing above the ops layer)."""
    global _store_check
    _store_check = check


def _in_place_method(name):
    ufunc = _IN_PLACE[name]

    def method(self, other):
        if isinstance(self, StagedList) or self.weak or self.shape is None or self.shape == ():
            return NotImplemented  # a list's own rules; a number or numpy scalar rebinds
        result = getattr(self, f"__{name}__")(other)
        if result is NotImplemented:
            return result
        if _store_check is not None:
            _store_check(self)
        if result.dtype != self.dtype:
            if not np.can_cast(result.dtype, self.dtype, casting="same_kind"):
                raise _casting_error(ufunc, result.dtype, self.dtype)
            result = cast(result, self.dtype)
        if result.shape is not None and None not in result.shape and None not in self.shape and (
                tuple(result.shape) != tuple(self.shape)):
            raise ValueError(f"non-broadcastable output operand with shape {tuple(self.shape)} doesn't match the "
                             f"broadcast shape {tuple(result.shape)} (at {construct_at('the in-place operator')})")
        return result

    method.__name__ = f"__i{name}__"
    return method


def _casting_error(ufunc, computed, target) -> TypeError:
    """numpy's own error for an in-place ``ufunc`` whose result (``computed``) ``same_kind``
    casting cannot store into an array of ``target`` (``int32 += 1.5``), with the user's line."""
    shape = (1, 1) if ufunc is np.matmul else (1,)
    try:
        ufunc(np.ones(shape, computed), np.ones(shape, computed), out=np.zeros(shape, target))
        error = TypeError(f"Cannot cast ufunc '{ufunc.__name__}' output from {computed!r} to {target!r} with "
                          "casting rule 'same_kind'")
    except TypeError as raised:  # numpy's UFuncTypeError
        error = raised
    error.add_note(f"(at {construct_at('the in-place operator')}: numpy's in-place operators keep the "
                   "array's dtype; write `x = x + v` for a new array of the promoted dtype)")
    return error


def _unary_method(candidates):
    if candidates[0].op_type == "Identity":

        def method(self):
            if self.dtype == np.bool_:  # numpy has no positive of bools; a Python bool's is its int
                if self.weak:
                    return cast(self, np.int64, weak=True)
                raise TypeError(f"{construct_at('the unary +')}: ufunc 'positive' did not contain a loop with "
                                "signature matching types <class 'numpy.dtypes.BoolDType'> -> None")
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
    for name in _IN_PLACE:
        setattr(Tensor, f"__i{name}__", _in_place_method(name))
    Tensor.__getitem__ = _getitem
