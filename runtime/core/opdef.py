"""Op definitions: what each op type means, in one record per type.

An ``OpDef`` holds everything passes and executors need to know about an op
type, and nothing that computes it:

* ``infer(inputs, attrs)`` -- shape/dtype inference: gets the input tensors
  (objects with ``dtype`` and ``shape``) and returns a list of
  ``(dtype, shape)``, one per output.  Dtype rules follow numpy's type
  tables (``np.result_type``, ``ufunc.resolve_dtypes``) without running
  any kernel;
* ``stateful`` -- it has side effects: it runs in program order at every
  execution and is never pruned;
* ``weak`` -- its weak-typing rule (below);
* ``function_attrs`` -- the attributes that name sub-graphs of the
  function library (``If``: ``then_branch``/``else_branch``; ``While``:
  ``cond``/``body``): it is a *functional* op;
* ``cost`` -- the static cost weight per output element the scheduler
  uses to decide what is worth a thread (``cost_of``; 0: free, a callable
  ``cost(op)`` for ops whose work is not proportional to their output, such
  as ``MatMul``);
* ``verify(op, library)`` -- an optional hook for ``graph.verify()`` that
  checks an op's sub-graph signatures (raise ``ValueError`` on a mismatch);
* ``attrs`` -- the attributes it takes: name -> ``Attr(kind, default)``
  (``register`` takes a kind name for a required one, ``optional(kind,
  default)`` for one that may be left out).  The kind (``ATTR_KINDS``) says
  what a graph file may hold there (``core/graph_def_schema.py`` checks it);
  every backend's kernel takes exactly these keyword arguments
  (``tests/test_backend_contract.py``);
* ``inputs`` -- how many inputs it takes: ``(fewest, most)``, most None for
  any number (``register`` also takes one int).  The graph-file loader
  checks node arity with it.

Attributes and arity are facts of the op type, not of a kernel: a graph
file is checked against them whichever backend runs it.

Kernels live in the backends (``core/backend.py``, ``backends/numpy/
kernels.py``), never here.  Every pass, executor and backend looks op types
up in ``REGISTRY`` (with a default rule for types it has no entry for).

Weak typing (NEP 50, as in JAX): a Python number converted to a tensor
(``convert_to_tensor(1.0)``) is a *weakly typed* ``Const``
(``Tensor.weak``).  An op's ``weak`` rule says which outputs are weak given
the inputs and attrs; no rule means "strongly typed", except for the op
types Python spells on numbers (``+``, ``<``, unary ``-``, ``abs``...: the
table in ``core/spellings.py``), which keep weakness when every input is
weak.  ``Const``/``Cast`` read their ``weak`` attr; ``If`` and ``While`` are
weak where every branch / the loop keeps the value weak.  Dtype inference
runs on the inputs' actual dtypes: the op library has already cast weak
operands to the dtype their strongly typed partners give them
(``ops/common.promote``), so kernels and inference agree without knowing
about weakness.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, Mapping

import numpy as np

from autograph.runtime.core import shapes, spellings


# attribute kind -> what a graph file may hold for it (checked by ``graph_def_schema.KINDS``)
ATTR_KINDS = {
    "plain": "JSON data: numbers, strings, null, tuples of them",
    "bool": "true or false",
    "int_or_none": "an int or null (a seed)",
    "count": "an int >= 0 or null",
    "axis": "an int, a tuple of ints or null",
    "dtype": "a dtype",
    "dtype_or_none": "a dtype, or null for the input's",
    "shape": "a shape (dims: ints >= 0 or null) or null",
    "array": "an array (a constant's value)",
    "text": "a string printed or put in a message (control characters escaped at load)",
    "function": "the name of a function of the graph's library",
    "parts": "a tuple of strings and nulls (Print's text, nulls where values go)",
    "variable": "a variable record",
    "spec": "an index spec of StridedSlice",
    "random_stream": "the name of a random stream",
    "print_stream": "'stdout' or 'stderr'",
    "pipeline": "an rt.data pipeline (its check: runtime/data/saving.py)",
}

REQUIRED = type("Required", (), {"__repr__": lambda self: "REQUIRED", "__slots__": ()})()


@dataclasses.dataclass(frozen=True)
class Attr:
    """One attribute of an op type: its kind (a key of ``ATTR_KINDS``) and its default (``REQUIRED``:
    every op of the type has it)."""

    kind: str
    default: object = REQUIRED

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


def optional(kind: str, default) -> Attr:
    """An attribute that may be left out; a kernel then sees ``default``."""
    return Attr(kind, default)


@dataclasses.dataclass(frozen=True)
class OpDef:
    type: str
    infer: Callable
    stateful: bool = False
    weak: Callable | None = None  # rule(inputs, attrs) -> bool (every output) or a list of bools
    function_attrs: tuple[str, ...] = ()
    cost: float | Callable = 1
    verify: Callable | None = None
    attrs: Mapping[str, Attr] = dataclasses.field(default_factory=dict)
    inputs: tuple[int, int | None] | None = None  # (fewest, most); None: not declared


REGISTRY: dict[str, OpDef] = {}


def register(
    type: str,
    *,
    infer: Callable,
    stateful: bool = False,
    weak: Callable | None = None,
    function_attrs: tuple[str, ...] = (),
    cost: float | Callable = 1,
    verify: Callable | None = None,
    attrs: Mapping[str, str | Attr] | None = None,
    inputs: int | tuple[int, int | None] | None = None,
) -> OpDef:
    """Registers op ``type``; registering a type twice is a programming error.

    ``weak`` defaults to ``weak_if_all_inputs_weak`` for the op types of the
    spellings table, to "strongly typed" for the others.  ``attrs``: name ->
    kind name (required) or ``optional(kind, default)``; ``inputs``: a count
    or ``(fewest, most)``.
    """
    if type in REGISTRY:
        raise ValueError(f"op type {type!r} is already registered")
    if weak is None and type in spellings.BY_OP_TYPE:
        weak = weak_if_all_inputs_weak
    declared = {name: a if isinstance(a, Attr) else Attr(a) for name, a in (attrs or {}).items()}
    for name, a in declared.items():
        if a.kind not in ATTR_KINDS:
            raise ValueError(f"op type {type!r}: attribute {name!r} has kind {a.kind!r}, which is not one of "
                             f"opdef.ATTR_KINDS ({', '.join(ATTR_KINDS)})")
    for name in function_attrs:
        if name not in declared or declared[name].kind != "function":
            raise ValueError(f"op type {type!r}: function attribute {name!r} must be declared in attrs as 'function'")
    arity = (inputs, inputs) if isinstance(inputs, int) else None if inputs is None else tuple(inputs)
    opdef = OpDef(type, infer, stateful, weak, tuple(function_attrs), cost, verify, declared, arity)
    REGISTRY[type] = opdef
    return opdef


# -- weak typing ------------------------------------------------------------


def weak_if_all_inputs_weak(inputs, attrs) -> bool:
    """The rule of ops that compute a Python number from Python numbers (``1.0 + 2`` is a float)."""
    for t in inputs:  # (a loop, not all() of a generator: asked for every op built)
        if not t.weak:
            return False
    return bool(inputs)


def weak_if_first_input_weak(inputs, attrs) -> bool:
    """The rule of ops that read part of their first input (``l[i]`` of a staged list of Python
    numbers is a Python number)."""
    return bool(inputs) and inputs[0].weak


def weak_from_attr(inputs, attrs) -> bool:
    """The rule of ``Const`` and ``Cast``: weak when their ``weak`` attr says so."""
    return bool(attrs.get("weak", False))


def weak_outputs(op_type: str, inputs, attrs, n_outputs: int) -> list[bool]:
    """For each output of an ``op_type`` op on ``inputs``: is it weakly typed?"""
    definition = REGISTRY.get(op_type)
    rule = None if definition is None else definition.weak
    if rule is None:
        return [False] * n_outputs
    found = rule(inputs, attrs)
    if isinstance(found, (bool, np.bool_)):
        return [bool(found)] * n_outputs
    return [bool(w) for w in found]


# -- cost -------------------------------------------------------------------


def cost_of(op) -> float:
    """Static cost estimate of ``op``: its output elements times its ``cost`` weight (0 if unknown)."""
    definition = REGISTRY.get(op.type)
    weight = 1 if definition is None else definition.cost
    if callable(weight):
        return weight(op)
    if not weight:
        return 0
    total = 0
    for t in op.outputs:
        if shapes.is_fully_defined(t.shape):
            total += math.prod(t.shape)
    return total * weight


# -- conversions ------------------------------------------------------------


def function_attr_names(op_type: str) -> tuple[str, ...]:
    """The attributes of an ``op_type`` op that name library functions (``()``: not a functional op)."""
    definition = REGISTRY.get(op_type)
    return () if definition is None else definition.function_attrs


def function_attrs(op) -> list[tuple[str, str]]:
    """``(attr name, library function name)`` for each function ``op`` refers to."""
    names = function_attr_names(op.type)
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
    "ArgMin": "argmin",
    "ConcatV2": "concat",
    "GatherV2": "gather",
    "RealDiv": "truediv",
    "FloorDiv": "floordiv",
    "FloorMod": "mod",
    "Pack": "stack",
    "Select": "where",
}




# -- errors an op raises when the graph runs ------------------------------------
#
# ``RUN_TIME_ERRORS``: op type -> the kinds of Python exception an op of that type may raise when
# the graph runs, for values no trace-time check has excluded: a tuple of exception classes, or a
# rule ``rule(op) -> tuple`` that reads the op's dtypes, static shapes and constant inputs (``()``:
# nothing can fail, as when every shape was checked by inference).  The kinds are Python's: what
# the same statement raises on numpy values in Python (the graph raises them, or an
# ``ExecutionError`` that is also of that kind).  ``Exception`` stands for anything (user code run
# by a ``PyFunc``).  An op type not listed raises nothing a handler could expect (numpy only warns:
# overflow, division by zero, invalid values).  ``If``/``While`` raise what their bodies' ops raise.
#
# Read by ``operators/raises.py``: a Python ``try`` around the tracing of such an op, whose
# handler catches one of its kinds, would catch it in Python but not in the graph (a refusal).


def _fully_known(shape) -> bool:
    return shape is not None and all(d is not None for d in shape)


def _static_op(op) -> bool:
    for t in (*op.inputs, *op.outputs):
        if not _fully_known(t.shape):
            return False
    return True


def _const_value(t):
    return t.op.attrs.get("value") if t.op.type == "Const" else None


def _may_not_broadcast(op) -> bool:
    """Two inputs' dimensions at one position may differ without either being 1 (unknown sizes)."""
    known = [t.shape for t in op.inputs]
    if any(s is None for s in known):
        return True
    for position in range(1, max((len(s) for s in known), default=0) + 1):
        dims = [s[-position] for s in known if len(s) >= position]
        others = [d for d in dims if d != 1]
        if None in others and len(others) > 1:
            return True
    return False


def _broadcasting(op) -> tuple:
    return (ValueError,) if _may_not_broadcast(op) else ()


def _pow(op) -> tuple:
    """Integers to a negative integer power: numpy's ValueError (unless the exponent is a constant >= 0)."""
    found = _broadcasting(op)
    base, exponent = op.inputs
    if np.dtype(base.dtype).kind in "iu" and np.dtype(exponent.dtype).kind in "iu":
        value = _const_value(exponent)
        if value is None or np.any(np.asarray(value) < 0):
            found = (ValueError,)
    return found


def _unless_static(*kinds):
    """The rule of ops whose every failure is a shape or size disagreement inference checks when
    all shapes are known."""
    def rule(op) -> tuple:
        return () if _static_op(op) else kinds
    return rule


def _unless_constant(*kinds, inputs=None):
    """The rule of ops whose failures come from the values of some inputs (all by default), checked
    by inference when they are constants."""
    def rule(op) -> tuple:
        chosen = op.inputs if inputs is None else [op.inputs[i] for i in inputs]
        return () if all(_const_value(t) is not None for t in chosen) else kinds
    return rule


def _gather(op) -> tuple:
    """An index out of range: checked by inference when the indices are constants and the axis known."""
    params, indices = op.inputs
    if _const_value(indices) is not None and params.shape is not None:
        axis = op.attrs.get("axis", 0)
        if isinstance(axis, int) and -len(params.shape) <= axis < len(params.shape) and params.shape[axis] is not None:
            return ()
    return (IndexError,)


def _strided_slice(op) -> tuple:
    """A slice step known only when the graph runs may be zero (indices are checked by ``CheckIndex``)."""
    for item in op.attrs.get("spec", ()):
        if item[0] == "slice" and isinstance(item[3], str):
            return (ValueError,)
    return ()


def _set_item(op) -> tuple:
    """numpy's bounds, broadcasting and casting of ``x[key] = v`` (the kernel keeps their kinds); with a
    static key and shapes only a Python number that does not fit the integer dtype."""
    if len(op.inputs) > 2 or not _static_op(op):
        return (IndexError, ValueError, OverflowError, TypeError, ArithmeticError)
    if op.attrs.get("python_value") and np.dtype(op.inputs[0].dtype).kind in "iu":
        return (OverflowError,)
    return ()


def _ensure(op) -> tuple:
    return ({e.__name__: e for e in (ValueError, OverflowError, IndexError, TypeError, ZeroDivisionError)}
            .get(op.attrs.get("error"), Exception),)


def _py_int(op) -> tuple:
    """``int(x)`` of a float: NaN (ValueError), infinity or too large (OverflowError)."""
    return (ValueError, OverflowError) if np.dtype(op.inputs[0].dtype).kind == "f" else ()


def _py_bool(op) -> tuple:
    """``bool(x)`` of an array of more (or fewer) than one element."""
    shape = op.inputs[0].shape
    return () if _fully_known(shape) and math.prod(shape) == 1 else (ValueError,)


def _py_func(op) -> tuple:
    """Whatever the Python function raises: anything, unless it declares its kinds (a staged ``raise``
    sets ``__autograph_raises__`` on the function it records)."""
    return tuple(getattr(op.attrs.get("func"), "__autograph_raises__", (Exception,)))


def _empty_reduction(op) -> tuple:
    """The max, min, argmax or argmin of no elements: numpy's ValueError."""
    shape = op.inputs[0].shape
    return () if _fully_known(shape) and all(d > 0 for d in shape) else (ValueError,)


_BROADCASTING = ("Add", "Sub", "Mul", "RealDiv", "FloorDiv", "FloorMod", "Maximum", "Minimum", "Less",
                 "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual", "LogicalAnd", "LogicalOr",
                 "LogicalXor", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift", "Select")

RUN_TIME_ERRORS: dict[str, tuple | Callable] = {
    **{t: _broadcasting for t in _BROADCASTING},
    "Pow": _pow,
    "CheckIndex": (IndexError,),  # an index not checked while tracing (ops/indexing.py)
    "StridedSlice": _strided_slice,
    "SetItem": _set_item,
    "GatherV2": _gather,
    "Ensure": _ensure,  # the kind its ``error`` attr names
    "Assert": (AssertionError,),
    "PyInt": _py_int,
    "PyBool": _py_bool,
    "PyFunc": _py_func,
    "Reshape": _unless_static(ValueError),
    "Fill": _unless_constant(ValueError, inputs=(0,)),  # a negative dimension
    "Range": _unless_constant(ValueError, ZeroDivisionError),  # a zero step
    "ConcatV2": _unless_static(ValueError),
    "Pack": _unless_static(ValueError),
    "ListAppend": _unless_static(ValueError),
    "MatMul": _unless_static(ValueError),
    "Max": _empty_reduction,
    "Min": _empty_reduction,
    "ArgMax": _empty_reduction,
    "ArgMin": _empty_reduction,
}


def run_time_errors(op) -> tuple:
    """The Python exception kinds ``op`` may raise when its graph runs (``RUN_TIME_ERRORS``)."""
    rule = RUN_TIME_ERRORS.get(op.type, ())
    return rule if isinstance(rule, tuple) else rule(op)
