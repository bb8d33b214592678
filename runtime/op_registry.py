"""The op registry: what each op type means, and the one way ops are applied.

An ``OpDef`` gives an op type its shape/dtype inference (``infer``), its
numpy kernel (``kernel``) and whether it has side effects (``stateful``).
Adding an op means registering one ``OpDef``; every pass and executor looks
op types up here (with a default rule for types it has no entry for).

``apply_op`` is the single entry point the op library uses:

* eagerly (no graph being built, no symbolic input) it runs the kernel on
  numpy values and returns numpy values;
* while tracing it converts Python/numpy inputs to ``Const`` ops, infers the
  outputs' dtypes and shapes -- so static shape errors surface at trace
  time, naming the op and the user's line -- and adds the operation to the
  current graph.

Kernel contract: ``kernel(*input_values, **attrs)`` returns the output value
for single-output ops, or a tuple of values for ops with several outputs.
Inference contract: ``infer(inputs, attrs)`` gets the input tensors (objects
with ``dtype`` and ``shape``) and returns a list of ``(dtype, shape)``.

Functional ops: attributes that name functions of the graph library (``If``:
``then_branch``/``else_branch``; ``While``: ``cond``/``body``) are listed in
``FUNCTION_ATTRS`` (``register(..., function_attrs=...)`` adds entries).  The
executor calls the kernel of such an op with one extra keyword argument,
``library`` (the graph's function library, ``{name: Graph}``), so the kernel
can run its sub-graphs with ``executor.run_graph``.  An optional
``verify(op, library)`` hook checks an op's sub-graph signatures for
``graph.verify()`` (raise ``ValueError`` with a message on a mismatch).

Weak typing (NEP 50, as in JAX): a Python number converted to a tensor
(``convert_to_tensor(1.0)``) is a *weakly typed* ``Const``
(``Tensor.weak``).  ``WEAK_RULES`` says, per op type, which outputs are
weak given the inputs and attrs; the default rule (no entry) is "strongly
typed".  The operators Python spells on numbers (``+``, ``<``, unary ``-``,
``abs``..., registered by ``runtime/spellings.py``) keep weakness when
every input is weak; ``Const``/``Cast`` read their ``weak`` attr; ``If`` and
``While`` are weak where every branch / the loop keeps the value weak.
Dtype inference runs on the inputs' actual dtypes: the op library has
already cast weak operands to the dtype their strongly typed partners give
them (``ops/_common.promote``), so kernels and inference agree without
knowing about weakness.

Conversions: ``register_conversion(cls, fn)`` lets objects of ``cls`` be
op inputs while tracing (``fn(obj)`` gives the tensor: an ``rt.Variable``
is read with ``read_value()``).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from autograph.runtime import dtypes
from autograph.runtime.errors import TracingError
from autograph.runtime.graph import current_graph, user_location, user_location_text
from autograph.runtime.tensor import Tensor


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


# -- conversions ------------------------------------------------------------

# (class, fn): objects of ``class`` become op inputs as ``fn(obj)`` while tracing
_CONVERSIONS: list[tuple[type, Callable]] = []


def register_conversion(cls: type, fn: Callable) -> None:
    """Lets objects of ``cls`` be op inputs: ``fn(obj)`` gives the tensor (or value) to use."""
    _CONVERSIONS.append((cls, fn))


def function_attrs(op) -> list[tuple[str, str]]:
    """``(attr name, library function name)`` for each function ``op`` refers to."""
    names = FUNCTION_ATTRS.get(op.type, ())
    return [(a, op.attrs[a]) for a in names if isinstance(op.attrs.get(a), str)]


def get(type: str) -> OpDef:
    try:
        return REGISTRY[type]
    except KeyError:
        raise KeyError(f"unknown op type {type!r}: it was never registered") from None


def eager_value(value, dtype=None):
    """A Python/numpy value as a numpy array (optionally of ``dtype``)."""
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
    if weak:
        if array.ndim:
            raise ValueError(f"only a scalar can be weakly typed, got a constant of shape {array.shape}")
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


def apply_op(op_type: str, inputs, attrs=None, *, name=None, stateful=None):
    """Runs (eager) or adds (tracing) op ``op_type``; returns its output(s).

    Single-output ops return one value; multi-output ops return a tuple.
    """
    opdef = get(op_type)
    attrs = attrs or {}
    graph = current_graph()
    if graph is None:
        if any(isinstance(x, Tensor) for x in inputs):
            symbolic = next(x for x in inputs if isinstance(x, Tensor))
            raise TracingError(
                f"{op_type}: tensor {symbolic.name} of a finished trace is used outside it, at "
                f"{user_location_text()}. A symbolic tensor only exists while its "
                "function is traced; return it from the function instead of keeping it."
            )
        try:
            return eager_result(opdef.kernel(*[eager_value(x) for x in inputs], **attrs))
        except (TypeError, ValueError, IndexError, ArithmeticError) as e:
            if not _is_library_error(e):
                raise  # the user's own exception (from a py_function): unchanged
            raise _located(e, op_type, user_location()) from None
    location = user_location()
    try:
        tensors = [convert_to_tensor(x) for x in inputs]
        specs = opdef.infer(tensors, attrs)
    except (TypeError, ValueError, IndexError) as e:
        raise _located(e, op_type, location) from None
    op = graph.add_op(
        op_type, tensors, attrs, specs,
        stateful=opdef.stateful if stateful is None else stateful,
        location=location, name=name or default_name(op_type),
    )
    for t in tensors:
        if t.weak and t.op.graph is not graph:
            _mark_weak_captures(graph, t)
    if op_type in WEAK_RULES:
        for t, weak in zip(op.outputs, weak_outputs(op_type, tensors, attrs, len(op.outputs))):
            t.weak = weak
    if len(op.outputs) == 1:
        return op.outputs[0]
    return tuple(op.outputs)

