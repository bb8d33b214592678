"""Data types of tensors: numpy dtypes, restricted to the ones the runtime supports.

A dtype is a plain ``numpy.dtype``; ``rt.float32`` is ``np.dtype('float32')``,
so dtypes compare equal to their names (``t.dtype == 'float32'``).  Promotion
follows NumPy 2 (NEP 50): Python scalars are weakly typed and take the dtype
of the tensor they meet.
"""

from __future__ import annotations

import sys

import numpy as np

bool_ = np.dtype(np.bool_)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)

SUPPORTED = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64)
_BY_NAME = {d.name: d for d in SUPPORTED}
_BY_NAME["bool_"] = bool_

PYTHON_SCALARS = (bool, int, float)


def is_masked_array(value) -> bool:
    """True for a numpy masked array (whose values are not its data alone), told without importing
    ``numpy.ma``: touching ``np.ma`` imports it (~20 ms of a first call), and a masked array can exist
    only once it is imported."""
    masked = sys.modules.get("numpy.ma")
    return masked is not None and isinstance(value, masked.MaskedArray)


def as_dtype(value) -> np.dtype:
    """Returns the supported numpy dtype named or described by ``value``.

    Accepts names (``'float32'``), numpy dtypes and scalar types, and the
    Python types ``bool``, ``int``, ``float``.  Raises ``TypeError`` naming
    the dtype and the supported ones otherwise.
    """
    if isinstance(value, str):
        found = _BY_NAME.get(value)
    else:
        try:
            found = np.dtype(value)
        except TypeError:
            found = None
        if found is not None and found not in SUPPORTED:
            found = None
    if found is None:
        from autograph.runtime.core.location import user_location_text# graph -> tensor -> this module

        names = ", ".join(d.name for d in SUPPORTED)
        raise TypeError(f"unsupported dtype {value!r} at {user_location_text()}: the runtime supports {names}")
    return found


def is_floating(dtype) -> bool:
    return np.dtype(dtype).kind == "f"


def is_integer(dtype) -> bool:
    return np.dtype(dtype).kind in "iu"


def is_bool(dtype) -> bool:
    return np.dtype(dtype).kind == "b"


def result_type(*operands) -> np.dtype:
    """Promotes dtypes and weak Python scalars the way NumPy 2 does.

    Next to a dtype, NEP 50 gives a Python number's kind, never its value, a
    say (``np.result_type(np.int8, 300)`` is int8), so those answers are kept
    by dtype and number type (tracing asks the same few at every op)."""
    key = []
    strong = False
    for operand in operands:
        kind = type(operand)
        if kind is int or kind is float or kind is bool:
            key.append(kind)
        elif isinstance(operand, np.dtype):
            key.append(operand)
            strong = True
        else:
            return as_dtype(np.result_type(*operands))
    if not strong:  # Python numbers alone: their values decide (``2**70`` is no int64)
        return as_dtype(np.result_type(*operands))
    key = tuple(key)
    found = _RESULT_TYPES.get(key)
    if found is None:
        found = _RESULT_TYPES[key] = as_dtype(np.result_type(*operands))
    return found


_RESULT_TYPES: dict = {}  # (dtype or Python number type, ...) -> result_type's answer



# dtype kind -> a Python number of that kind: what NEP 50 promotion sees of a weakly typed value
KIND_NUMBERS = {"b": False, "i": 0, "u": 0, "f": 0.0}

# dtype kind of a weakly typed value -> numpy's dtype for the Python numbers it stands for in a list:
# np.asarray makes them a strongly typed array (``[1, 2]`` int64, ``[1.5]`` float64, ``[True]`` bool)
LIST_DTYPES = {"b": np.dtype(np.bool_), "i": np.dtype(np.int64), "u": np.dtype(np.int64), "f": np.dtype(np.float64)}


def staged_list_result_type(list_dtype, other_dtype) -> np.dtype:
    """The dtype of a weakly typed staged list (a list of Python numbers, ``list_dtype``) joined by
    a strongly typed element or list of ``other_dtype``: NEP 50's, as for a Python number next to
    it (Python ints joined by an int32 or a float32 element: int32, float32).  Where that dtype
    cannot hold every number of ``list_dtype`` (``narrows``), the cast is checked when the graph
    runs (``list_operators.cast_numbers``): a number it cannot hold is an error, never another number.
    """
    return result_type(other_dtype, KIND_NUMBERS[np.dtype(list_dtype).kind])


def wraps(dtype) -> bool:
    """Whether ``dtype``'s arithmetic wraps where a Python int's would not, at small values: bool,
    unsigned and 8/16-bit integers (not int32/int64, whose wrapping the weak-typing rule accepts,
    nor floats: NEP 50 joins Python numbers to them)."""
    dtype = np.dtype(dtype)
    return dtype.kind in "ub" or (dtype.kind == "i" and dtype.itemsize < 4)


def narrows(from_dtype, to_dtype) -> bool:
    """True if some value of ``from_dtype`` is not a value of ``to_dtype``."""
    return result_type(from_dtype, to_dtype) != np.dtype(to_dtype)
