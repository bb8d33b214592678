"""Python's own conversions of a value, and checked values: ops computed as Python computes them
on the numpy value when the graph runs.

``PyInt`` (``int(x)`` of floats: ``OverflowError`` for infinities,
``ValueError`` for NaN, as Python; a value beyond int64 is an
``OverflowError`` too, a graph having no unbounded ints), ``PyBool``
(``bool(x)``: numpy's ``ValueError`` for an array of more or less than one
element), ``Round`` (``np.round(x, decimals)``) and ``Ensure`` (its first
input, once the condition holds; else the named Python exception:
``range()`` with a zero step, an int out of a narrow dtype's bounds).
Their failures are the user's errors, naming the construct and
``file:line`` (attr ``where``).
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import dtypes, opdef
from autograph.runtime.ops import apply
from autograph.runtime.ops.basic import cast

# the exceptions an ``Ensure`` may raise (by name: attributes are data)
ENSURE_ERRORS = ("ValueError", "OverflowError", "IndexError", "TypeError", "ZeroDivisionError")


def _py_int_infer(inputs, attrs):
    (x,) = inputs
    if x.dtype.kind not in "biuf":
        raise TypeError(f"int() is not defined for {x.dtype.name} (operand {x.name})")
    return [(np.dtype(np.int64), x.shape)]


def _py_bool_infer(inputs, attrs):
    return [(np.dtype(np.bool_), ())]


def _round_infer(inputs, attrs):
    (x,) = inputs
    if x.dtype.kind not in "biuf":
        raise TypeError(f"round() is not defined for {x.dtype.name} (operand {x.name})")
    if x.dtype == np.bool_ and not attrs.get("python"):
        return [(np.dtype(np.float16), x.shape)]  # numpy's np.round of bools
    return [(x.dtype, x.shape)]


def _ensure_infer(inputs, attrs):
    x, ok = inputs
    if ok.dtype != np.bool_:
        raise TypeError(f"Ensure: the condition {ok.name} must be bool, not {ok.dtype.name}")
    if attrs["error"] not in ENSURE_ERRORS:
        raise ValueError(f"Ensure: error must be one of {', '.join(ENSURE_ERRORS)}, got {attrs['error']!r}")
    return [(x.dtype, x.shape)]


opdef.register("PyInt", infer=_py_int_infer, weak=lambda inputs, attrs: True, cost=2, inputs=1,
               attrs={"where": "plain"})
opdef.register("PyBool", infer=_py_bool_infer, weak=lambda inputs, attrs: True, inputs=1, attrs={"where": "plain"})
opdef.register("Round", infer=_round_infer, weak=opdef.weak_if_first_input_weak, cost=2, inputs=1,
               attrs={"decimals": "plain", "python": opdef.optional("plain", False)})
# stateful: the check runs where Python raises, in program order, even when nothing uses its value
opdef.register("Ensure", infer=_ensure_infer, weak=opdef.weak_if_first_input_weak, stateful=True, cost=0,
               inputs=2, attrs={"error": "plain", "message": "text"})


def round_(x, decimals=0, name=None, python=False):
    """``np.round(x, decimals)``: halves to even; negative ``decimals`` round to tens, hundreds...
    ``python=True``: Python's ``round(number, decimals)`` of a 0-d value (correctly rounded)."""
    return apply.apply_op("Round", [x], {"decimals": int(decimals), "python": python}, name=name)


def py_int(x, where, name=None):
    """``int(x)`` of a float or bool tensor, as Python: a weak int64 truncated toward zero; at run
    time infinities are an ``OverflowError``, NaN a ``ValueError`` (``where`` names the call)."""
    return apply.apply_op("PyInt", [x], {"where": where}, name=name)


def python_int(x, where):
    """``int(x)`` of a tensor as Python's int, unbounded, as far as a graph can hold it: a weak int64.
    Integers are widened, not kept in their dtype (``int(x) + 1`` of a uint8 ``255`` is 256, not 0);
    a uint64 above int64's bounds is an ``OverflowError`` when the graph runs; floats go through
    ``py_int`` (truncated, infinities and NaN Python's errors)."""
    if x.dtype == dtypes.int64:
        return x if x.weak else cast(x, dtypes.int64, weak=True)
    if x.dtype == dtypes.uint64:
        largest = np.uint64(np.iinfo(np.int64).max)
        fits = apply.apply_op("LessEqual", [x, apply.convert_to_tensor(largest)], {})
        x = ensure(x, fits, "OverflowError", f"{where}: the uint64 value does not fit in int64, the widest "
                                            "integer of a graph (Python's ints are unbounded)")
    if x.dtype.kind in "biu":
        return cast(x, dtypes.int64, weak=True)
    return py_int(x, where)


def py_bool(x, where, name=None):
    """``bool(x)`` as numpy computes it: a weak bool; more or less than one element is numpy's ``ValueError``."""
    return apply.apply_op("PyBool", [x], {"where": where}, name=name)


def ensure(x, ok, error, message, name=None):
    """``x``, once ``ok`` holds when the graph runs; else ``error`` (a name in ``ENSURE_ERRORS``) with ``message``."""
    return apply.apply_op("Ensure", [x, ok], {"error": error, "message": message}, name=name)

