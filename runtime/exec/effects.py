"""The effects of stateful ops on the process, shared by every backend.

A backend supplies array math; what an op does to the world outside its
values is the same whichever backend runs it, so it lives here once:

* the variable ops (``ReadVariable``, ``Assign*Variable``: ``ops/
  variables.py``) -- a variable's storage is its ``_value`` numpy array,
  guarded by its ``_lock``; these functions are the only code outside
  ``variables.Variable`` that reads or replaces it.  Each holds the lock
  from its read to its write, so an ``assign_add`` from several threads
  (eager or in graphs) never loses an update, and an assigned value is
  cast to the variable's dtype and checked against its shape;
* ``Print`` (``ops/effects.py``) -- the text of its parts, written to
  ``sys.stdout``/``sys.stderr`` as they are when it runs;
* ``PyFunc`` -- the user's function called, its exceptions kept as the
  user's (``errors.mark_user_error``), its results checked against
  ``Tout`` and the declared shapes;
* ``Assert`` (``ops/functional_control_flow.py``) -- the user's ``AssertionError``.

Each function has a kernel's signature (``core/backend.py``:
``kernel(*input_values, **attrs)``) and takes host (numpy) values: the
numpy backend lists them as its kernels; a backend whose computation cannot
touch Python objects calls them from a host callback (JAX:
``backends/jax/effects.py``).
"""

from __future__ import annotations

import sys

import numpy as np

from autograph.runtime.core import shapes
from autograph.runtime.errors import mark_user_error
from autograph.runtime.ops import variables
from autograph.runtime.ops.apply import eager_result

# -- variables -------------------------------------------------------------------------------


def read_variable(*, handle, dtype, shape):
    """``ReadVariable``: a copy of the variable's value (a later assignment never changes it)."""
    var = variables.lookup_variable(handle)
    with var._lock:
        value = var._value.copy()
    return eager_result(value)


def _store(var, new):
    """Sets ``var``'s value (the caller holds ``var._lock``); returns a copy of it."""
    new = np.array(new, dtype=var.dtype)
    if not shapes.is_subshape(new.shape, var.shape):
        raise ValueError(
            f"cannot assign a value of shape {shapes.format_shape(new.shape)} to variable {var.name!r} of "
            f"shape {shapes.format_shape(var.shape)}"
        )
    var._value = new
    return eager_result(new.copy())


def assign_variable(value, *, handle, dtype, shape):
    """``AssignVariable``: the variable's new value, cast to its dtype; returns a copy of it."""
    var = variables.lookup_variable(handle)
    with var._lock:
        return _store(var, value)


def assign_add_variable(value, *, handle, dtype, shape):
    """``AssignAddVariable``: ``v += value`` under the variable's lock."""
    var = variables.lookup_variable(handle)
    with var._lock:
        return _store(var, np.add(var._value, value, dtype=var.dtype))


def assign_sub_variable(value, *, handle, dtype, shape):
    """``AssignSubVariable``: ``v -= value`` under the variable's lock."""
    var = variables.lookup_variable(handle)
    with var._lock:
        return _store(var, np.subtract(var._value, value, dtype=var.dtype))


# -- Print, PyFunc, Assert ---------------------------------------------------------------------

_STREAMS_BY_NAME = {"stdout": lambda: sys.stdout, "stderr": lambda: sys.stderr}


def print_values(*values, parts, sep, end, stream, formats=()):
    """``Print``: ``parts`` joined by ``sep`` (a None part is the next value, formatted by its entry of
    ``formats``, by default its ``str``: ``ops/effects.FORMATS``), then ``end``."""
    if formats:
        values = [_formatted(v, f) for v, f in zip(values, formats)]
    it = iter(values)
    text = sep.join(str(next(it)) if p is None else p for p in parts)
    out = _STREAMS_BY_NAME[stream]()
    out.write(text + end)
    return ()


def _formatted(value, how) -> str:
    if how == "str":
        return str(value)
    if type(value) is np.ndarray and value.ndim == 0:
        value = value[()]  # the numpy scalar Python holds
    return repr(value.item() if how == "number" else value)


def py_func(*values, func, Tout, output_shapes, single, func_name, grad=None):
    """``PyFunc``: ``func(*values)``, its results checked against ``Tout`` and ``output_shapes``."""
    try:
        result = func(*values)
    except Exception as e:  # the user's own exception: it reaches the caller with its type
        mark_user_error(e)
        raise
    if not Tout:
        return ()
    results = [result] if single else list(result) if isinstance(result, (list, tuple)) else None
    if results is None or len(results) != len(Tout):
        raise ValueError(
            f"py_function {func_name!r} returned {result!r}, expected {len(Tout)} value(s) of dtype(s) "
            f"{', '.join(d.name for d in Tout)}"
        )
    outs = []
    for index, (value, dtype, shape) in enumerate(zip(results, Tout, output_shapes)):
        array = np.asarray(value)
        if array.dtype != dtype:
            if array.dtype == object or not np.can_cast(array.dtype, dtype, "same_kind"):
                raise TypeError(
                    f"py_function {func_name!r} output {index} has dtype {array.dtype}, but Tout says "
                    f"{dtype.name}; return a {dtype.name} value or change Tout"
                )
            array = array.astype(dtype)
        if not shapes.is_subshape(array.shape, shape):
            raise ValueError(
                f"py_function {func_name!r} output {index} has shape {shapes.format_shape(array.shape)}, "
                f"but the declared shape is {shapes.format_shape(shape)}"
            )
        outs.append(eager_result(array))
    return outs[0] if single else tuple(outs)


def check_assert(condition, *data, message):
    """``Assert``: the user's ``AssertionError(message)`` unless every element of ``condition`` holds."""
    if not np.all(condition):
        raise AssertionError(message)
    return ()
