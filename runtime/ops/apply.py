"""Applying an op: the one way the op library runs or records an operation.

``apply_op`` is the single entry point of every ``rt.*`` op:

* eagerly (no graph being built, no symbolic input) it runs the default
  backend's kernel (``core/backend.py``) on its arrays and returns numpy
  values;
* while tracing it converts Python/numpy inputs to ``Const`` ops, infers the
  outputs' dtypes and shapes -- so static shape errors surface at trace
  time, naming the op and the user's line -- and adds the operation to the
  current graph.

Kernel contract (``core/backend.py``): ``kernel(*input_values, **attrs)``
returns the output value for single-output ops, or a tuple of values for
ops with several outputs.

Conversions: ``register_conversion(cls, fn)`` lets objects of ``cls`` be
op inputs while tracing (``fn(obj)`` gives the tensor: an ``rt.Variable``
is read with ``read_value()``).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from autograph.runtime.core import backend, dtypes, opdef
from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import user_location, user_location_text
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.errors import TracingError


def capture(graph, tensor: Tensor) -> Tensor:
    """``tensor`` as an input of ``graph``: itself, or the capture placeholder standing for it.

    Unlike ``graph.capture``, the placeholders (in ``graph`` and the graphs
    between it and ``tensor``'s) carry ``tensor``'s weak flag.
    """
    if tensor.op.graph is graph:
        return tensor
    inner = graph.capture(tensor)
    if tensor.weak:
        _mark_weak_captures(graph, tensor)
    return inner


def _mark_weak_captures(graph, tensor) -> None:
    g = graph
    while g is not None and g is not tensor.op.graph:
        g.capture(tensor).weak = True  # capture is idempotent: it returns the existing placeholder
        g = g.outer


# (class, fn): objects of ``class`` become op inputs as ``fn(obj)`` while tracing
_CONVERSIONS: list[tuple[type, Callable]] = []


def register_conversion(cls: type, fn: Callable) -> None:
    """Lets objects of ``cls`` be op inputs: ``fn(obj)`` gives the tensor (or value) to use."""
    _CONVERSIONS.append((cls, fn))


def eager_value(value, dtype=None):
    """A Python/numpy value as a numpy array (optionally of ``dtype``): how values enter the IR."""
    array = np.asarray(value, dtype=dtype)
    if dtype is None and array.dtype not in dtypes.SUPPORTED:
        dtypes.as_dtype(array.dtype)  # raises a TypeError naming the dtype
    return array


def constant(value, dtype=None, name="const", weak=False):
    """A ``Const`` op in the current graph holding ``value``; ``weak`` for a Python number's."""
    graph = current_graph()
    try:
        array = eager_value(value, dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"cannot convert {value!r} to a tensor ({e}); pass numbers or numpy arrays") from None
    if array.dtype == object:
        raise TypeError(f"cannot convert {value!r} to a tensor: it is not numeric")
    attrs = {"value": array, "dtype": array.dtype}
    if weak:  # a Python number, or the elements of a staged list of Python numbers
        attrs["weak"] = True
    op = graph.add_op("Const", [], attrs, [(array.dtype, array.shape)], location=user_location(), name=name)
    op.outputs[0].weak = weak
    return op.outputs[0]


def convert_to_tensor(value, dtype=None):
    """``value`` as a tensor of the current graph (Tensors pass through).

    A Python number becomes a weakly typed ``Const`` unless ``dtype`` is
    given; objects of a registered conversion (``rt.Variable``) are converted
    by it.
    """
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype != dtype:
            raise TypeError(f"expected a {np.dtype(dtype).name} tensor, got {value!r}")
        return value
    for cls, convert in _CONVERSIONS:
        if isinstance(value, cls):
            return convert_to_tensor(convert(value), dtype)
    return constant(value, dtype, weak=dtype is None and type(value) in dtypes.PYTHON_SCALARS)


def eager_result(result):
    """A kernel's eager result with 0-d arrays as numpy scalars (``np.float32(3.0)``)."""
    if isinstance(result, np.ndarray):
        return result[()] if result.ndim == 0 else result
    if isinstance(result, tuple):
        return tuple(eager_result(r) for r in result)
    return result


def _is_library_error(error: Exception) -> bool:
    """True for Python's and numpy's own exceptions (not a user-defined class)."""
    module = type(error).__module__
    return module == "builtins" or module.split(".")[0] == "numpy"


def _located(error: Exception, op_type: str, location: str | None) -> Exception:
    """``error`` restated as ``<op> at <file:line>: <message>``, as a builtin exception type.

    numpy's own subclasses (``AxisError``, ``UFuncTypeError``, ...) take other
    constructor arguments, so the message goes into the nearest builtin class.
    """
    message = f"{op_type} at {location or '<unknown>'}: {error}"
    for kind in (IndexError, TypeError, ValueError, ZeroDivisionError, OverflowError, ArithmeticError):
        if isinstance(error, kind):
            return kind(message)
    return ValueError(message)


def check_not_escaped(values, what: str) -> None:
    """Raises the error for a symbolic tensor used outside the trace that made it (no graph is being built)."""
    for value in values:
        if isinstance(value, Tensor):
            created = f" (created at {value.op.location})" if value.op.location else ""
            raise TracingError(
                f"{what}: tensor {value.name}{created} of a finished trace is used outside it, at "
                f"{user_location_text()}. A symbolic tensor only exists while its function is traced, so "
                "a tensor kept in a list, a global or an attribute cannot be used later; return it from "
                "the function instead of keeping it."
            )


def apply_op(op_type: str, inputs, attrs=None, *, name=None, stateful=None):
    """Runs (eager) or adds (tracing) op ``op_type``; returns its output(s).

    Single-output ops return one value; multi-output ops return a tuple.
    """
    definition = opdef.get(op_type)
    attrs = attrs or {}
    graph = current_graph()
    if graph is None:
        check_not_escaped(inputs, op_type)
        impl = backend.get()
        kernel, asarray = impl.kernel(op_type), impl.asarray
        try:
            return eager_result(kernel(*[asarray(eager_value(x)) for x in inputs], **attrs))
        except (TypeError, ValueError, IndexError, ArithmeticError) as e:
            if not _is_library_error(e):
                raise  # the user's own exception (from a py_function): unchanged
            raise _located(e, op_type, user_location()) from None
    location = user_location()
    try:
        tensors = [convert_to_tensor(x) for x in inputs]
        specs = definition.infer(tensors, attrs)
    except (TypeError, ValueError, IndexError) as e:
        raise _located(e, op_type, location) from None
    op = graph.add_op(
        op_type, tensors, attrs, specs,
        stateful=definition.stateful if stateful is None else stateful,
        location=location, name=name or opdef.default_name(op_type),
    )
    for t in tensors:
        if t.weak and t.op.graph is not graph:
            _mark_weak_captures(graph, t)
    if definition.weak is not None:
        for t, weak in zip(op.outputs, opdef.weak_outputs(op_type, tensors, attrs, len(op.outputs))):
            t.weak = weak
    if len(op.outputs) == 1:
        return op.outputs[0]
    return tuple(op.outputs)
