"""Symbolic tensors and tensor specs.

A ``Tensor`` is one output of an ``Operation`` in a ``Graph``: it has no
value, only a dtype and a static shape.  Its Python operators (``+``, ``<``,
``@``, ``-t``, ``t[i]``, ...) build graph operations; they are installed from
the one table of operator spellings in ``runtime/core/spellings.py``
(by ``runtime/ops/tensor_operators.py``, once, when ``autograph.runtime`` is imported).

A tensor is *weakly typed* (``weak``) when it stands for a Python number:
a ``Const`` made from a Python ``bool``/``int``/``float``, a branch or loop
variable that is a Python number on every path, and what Python's own
operators compute from such values only.  As in NumPy 2 (NEP 50) and JAX,
a weak tensor combined with a strongly typed one takes that one's dtype
(``weak float64 * float32 -> float32``); two weak values combine by
numpy's rules and stay weak.  Weakness only steers dtype decisions while
tracing (the op library inserts the casts it implies), so a graph runs the
same whether or not its tensors still carry the flag.

``str(t)`` (f-strings, ``"%s" % t``) warns with ``TracingWarning``: the
text is made once, while tracing, and shows no value.  ``repr(t)`` counts
itself in ``SHOWN`` (per thread), so ``print`` can tell that an object's text
holds a symbolic tensor (a deque or a dataclass of tensors) and refuse it.

Python constructs that need a concrete value -- ``bool(t)``, ``iter(t)``,
``len(t)`` -- raise ``TracingError``: in code autograph converted, control
flow never asks for them; in code it did not convert, the message says how
to fix it.
"""

from __future__ import annotations

import dis
import sys
import threading

import numpy as np

from autograph.runtime.core import dtypes, shapes
from autograph.runtime.errors import TracingError, TracingWarning


class UnhashableTensor(TracingError, TypeError):
    """``hash()`` of a symbolic tensor: a refusal, and a ``TypeError`` too, as for numpy arrays
    (code that tests hashability with ``try: hash(x) except TypeError`` sees an unhashable value)."""


class TensorSpec:
    """The dtype and static shape of a value: ``TensorSpec((None, 3), 'float32')``."""

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape, dtype="float32", name=None):
        self.shape = shapes.as_shape(shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name

    def is_compatible_with(self, other) -> bool:
        """True if ``other`` (a spec, tensor or array) fits this spec."""
        return other.dtype == self.dtype and shapes.is_subshape(shapes.as_shape(other.shape), self.shape)

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and (self.shape, self.dtype, self.name) == (other.shape, other.dtype, other.name)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.name))

    def __repr__(self):
        name = f", name={self.name!r}" if self.name else ""
        return f"TensorSpec({shapes.format_shape(self.shape)}, {self.dtype.name}{name})"


# numpy ufuncs that Python operators spell -> (the Tensor method, the one for a Tensor on the right)
_UFUNC_OPERATORS = {
    "add": ("__add__", "__radd__"), "subtract": ("__sub__", "__rsub__"), "multiply": ("__mul__", "__rmul__"),
    "true_divide": ("__truediv__", "__rtruediv__"), "divide": ("__truediv__", "__rtruediv__"),
    "floor_divide": ("__floordiv__", "__rfloordiv__"), "remainder": ("__mod__", "__rmod__"),
    "power": ("__pow__", "__rpow__"), "matmul": ("__matmul__", "__rmatmul__"),
    "bitwise_and": ("__and__", "__rand__"), "bitwise_or": ("__or__", "__ror__"),
    "bitwise_xor": ("__xor__", "__rxor__"), "left_shift": ("__lshift__", "__rlshift__"),
    "right_shift": ("__rshift__", "__rrshift__"),
    "less": ("__lt__", "__gt__"), "less_equal": ("__le__", "__ge__"), "greater": ("__gt__", "__lt__"),
    "greater_equal": ("__ge__", "__le__"), "equal": ("__eq__", "__eq__"), "not_equal": ("__ne__", "__ne__"),
    "negative": ("__neg__", None), "absolute": ("__abs__", None), "invert": ("__invert__", None),
}

# numpy name -> the rt op that computes it in the graph
_RT_EQUIVALENTS = {
    "np.exp": "rt.exp", "np.log": "rt.log", "np.sqrt": "rt.sqrt", "np.sin": "rt.sin", "np.cos": "rt.cos",
    "np.tanh": "rt.tanh", "np.square": "rt.square", "np.maximum": "rt.maximum", "np.minimum": "rt.minimum",
    "np.logical_and": "rt.logical_and", "np.logical_or": "rt.logical_or", "np.logical_not": "rt.logical_not",
    "np.logical_xor": "rt.logical_xor", "np.sum": "rt.reduce_sum", "np.mean": "rt.reduce_mean",
    "np.max": "rt.reduce_max", "np.amax": "rt.reduce_max", "np.min": "rt.reduce_min", "np.amin": "rt.reduce_min",
    "np.prod": "rt.reduce_prod", "np.any": "rt.reduce_any", "np.all": "rt.reduce_all", "np.argmax": "rt.argmax",
    "np.reshape": "rt.reshape", "np.stack": "rt.stack", "np.concatenate": "rt.concat", "np.where": "rt.where",
    "np.matmul": "rt.matmul", "np.dot": "rt.matmul", "np.zeros_like": "rt.zeros_like",
    "np.ones_like": "rt.ones_like", "np.shape": "rt.shape", "np.size": "rt.size", "np.take": "rt.gather",
}


def _numpy_message(name, tensor) -> str:
    fix = _RT_EQUIVALENTS.get(name)
    advice = f"use {fix}(...)" if fix else "use the rt op that computes it, or rt.py_function to run numpy"
    return (
        f"{name} was called on the symbolic tensor {tensor.name}{tensor._where()}: "
        f"numpy runs once, while tracing, on concrete values, and cannot compute on a tensor of the graph; "
        f"{advice} instead."
    )


def _subscript_in_caller() -> bool:
    """True if the Python code that made numpy convert a tensor is a subscript (``array[t]``,
    ``array[t] = v``): numpy converts an index it does not know to an array."""
    try:
        frame = sys._getframe(2)  # (1: __array__; numpy's C code has no frame)
    except ValueError:  # (called from no Python code)
        return False
    at = frame.f_lasti
    for instruction in dis.get_instructions(frame.f_code):
        if instruction.offset == at:
            return instruction.opname in _SUBSCRIPTS or (
                instruction.opname == "BINARY_OP" and instruction.argrepr == "[]")
    return False


_SUBSCRIPTS = frozenset({"BINARY_SUBSCR", "STORE_SUBSCR", "BINARY_SLICE", "STORE_SLICE"})


class _Shown(threading.local):
    count = 0  # reprs of symbolic tensors made on this thread


SHOWN = _Shown()


class Tensor:
    """Output ``value_index`` of operation ``op``: symbolic, valid inside its graph."""

    # ``label`` and ``numbers`` are set only on a ``StagedList`` (``runtime/ops/list_operators.py``), the
    # type a tensor standing for a Python list becomes in place; they are declared here because
    # ``__class__`` assignment needs one layout (graphs know their tensors by identity: no copy may
    # stand for one)
    __slots__ = ("op", "value_index", "dtype", "shape", "weak", "label", "numbers")

    __array_priority__ = 1000

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """numpy's operators defer to ours (``np.float32(2) * t`` is ``t.__rmul__``); any other
        ufunc on a symbolic tensor is an error naming the ``rt`` op to use."""
        spelled = _UFUNC_OPERATORS.get(ufunc.__name__)
        if method == "__call__" and spelled is not None and not kwargs:
            forward, reflected = spelled
            if len(inputs) == 1:
                return getattr(Tensor, forward)(inputs[0])
            a, b = inputs
            if isinstance(a, Tensor):
                return getattr(Tensor, forward)(a, b)
            return getattr(Tensor, reflected)(b, a)
        raise TracingError(_numpy_message(f"np.{ufunc.__name__}", self))

    def __array_function__(self, func, types, args, kwargs):
        raise TracingError(_numpy_message(f"np.{func.__name__}", self))

    def __array__(self, dtype=None, copy=None):
        if _subscript_in_caller():
            raise TracingError(self._index_message("a numpy array"))
        message = _numpy_message("np.asarray (or np.array, a numpy type like np.float32(...))", self)
        raise TracingError(message + " A dtype conversion is x.astype(np.float32) or rt.cast(x, 'float32').")

    def __init__(self, op, value_index, dtype, shape, weak=False):
        self.op = op
        self.value_index = value_index
        self.dtype = dtype
        self.shape = shape
        self.weak = weak  # stands for a Python number (NEP 50 weak typing); see the module docstring

    @property
    def name(self) -> str:
        return f"{self.op.name}:{self.value_index}"

    @property
    def graph(self):
        return self.op.graph

    @property
    def ndim(self):
        return None if self.shape is None else len(self.shape)

    def __repr__(self):
        from autograph.runtime.core import printer  # printer -> opdef -> this module

        SHOWN.count += 1
        return f"<Tensor {self.name} {printer.format_type(self)}>"

    def __hash__(self):
        """A symbolic tensor has no value to hash while tracing: as a dict key or set member (``d[x]``,
        ``d.get(x)``, ``x in {1, 2}``) it would be looked up by identity and never match the number it
        stands for, a silent wrong answer.  (Autograph's own tables key tensors by ``id``.)"""
        from autograph.runtime.core.location import quoted_user_line  # graph imports this module

        line = quoted_user_line()
        raise UnhashableTensor(
            f"a symbolic tensor cannot be a dict key or set member{self._where()}{f' in {line}' if line else ''}: "
            "its value exists only when the graph runs, and Python would look the key up by that value. Use "
            "the value in tensor ops instead (rt.equal / rt.where / rt.gather over the keys), or look it up "
            "outside the traced function and pass the result in."
        )

    def __str__(self):
        """``str(t)``, ``f"{t}"``, ``"%s" % t``: the text of a symbolic tensor, made once while tracing."""
        from autograph.runtime.core.location import warn_at_user  # graph imports this module

        warn_at_user(
            f"str() of the symbolic tensor {self.name} (an f-string, '%s' or str()) is made once, while "
            "tracing, and shows no value; use rt.print(...) to print values at every call, or format the "
            "function's result.",
            TracingWarning,
        )
        return repr(self)

    def __format__(self, spec):
        if spec:
            raise TracingError(
                f"the format {spec!r} of the symbolic tensor {self.name}{self._where()} needs a value, which "
                "exists only when the graph runs; use rt.print(...) to print values at every call, or format the "
                "function's result."
            )
        return str(self)

    def _where(self):
        """`` at <use site> (tensor <name> created at <file:line>)`` for the messages below."""
        from autograph.runtime.core.location import user_location# graph imports this module

        use = user_location(2)
        created = f" created at {self.op.location}" if self.op.location else ""
        return (f" at {use}" if use else "") + f" (tensor {self.name}{created})"

    def _in_converted_code(self):
        """Whether the user's line using this tensor is converted code (depth: its dunder's caller)."""
        from autograph.runtime.core.location import in_converted_code  # graph imports this module

        return in_converted_code(3)

    def __bool__(self):
        if self._in_converted_code():
            raise TracingError(
                "using a symbolic tensor as a Python bool is not allowed" + self._where() + ": that line "
                "tests its truth where autograph does not stage it -- a construct left to Python (`x in (1, 2)`, "
                "a `match` value pattern, `[...].index(x)`) or code it does not convert (a library function, a "
                "class body or method defined in the function) -- and the value exists only when the graph "
                "runs. Write the test as tensor comparisons in an `if` of the converted function "
                "(`if x == 1 or x == 2:`), or use rt.where / rt.cond."
            )
        raise TracingError(
            "using a symbolic tensor as a Python bool is not allowed" + self._where() + ": "
            "an `if`, `while`, `and`/`or`/`not` or assert in code that autograph did not convert "
            "needs a concrete value. Convert the function (ag.function / ag.convert converts it "
            "unless it is marked do_not_convert), or use rt.cond / rt.where / rt.while_loop."
        )

    def __iter__(self):
        if self._in_converted_code():
            raise TracingError(
                "iterating over a symbolic tensor is not allowed" + self._where() + ": that line unpacks or "
                "iterates it where autograph does not stage it -- `a, b = x`, `*x`, or code it does not convert "
                "(a library function, a class body or method defined in the function) -- and its elements exist "
                "only when the graph runs. Index it (`a, b = x[0], x[1]`) or loop over it with a `for` statement."
            )
        raise TracingError(
            "iterating over a symbolic tensor is not allowed" + self._where() + ": a `for` loop or "
            "unpacking in code that autograph did not convert needs a concrete value. Convert the "
            "function, or index the tensor explicitly / use rt.while_loop."
        )

    def __len__(self):
        raise TracingError(
            "len() of a symbolic tensor is not allowed" + self._where() + ": its length is not a "
            "Python int while tracing. Convert the function (converted code turns len() into "
            "rt.shape(t)[0]), or use rt.shape(t)[0] / t.shape[0] for a static size."
        )

    def __getattr__(self, name):  # only for names a Tensor does not have
        if not name.startswith("_") and hasattr(np.ndarray, name):
            raise AttributeError(
                f"'Tensor' object has no attribute '{name}': numpy's ndarray.{name} is not available on a "
                f"symbolic tensor{self._where()}; compute it with the rt ops (rt.reshape, rt.reduce_sum, ...), "
                f"or run numpy at every call with rt.py_function."
            )
        raise AttributeError(f"'Tensor' object has no attribute '{name}'")

    def __float__(self):
        raise TracingError(
            "a symbolic tensor cannot be converted to a Python float" + self._where() + ": code that is "
            "not converted (a `math` function, a library) needs its value, which exists only when the "
            "graph runs. Use the rt op that computes it (rt.sqrt, rt.exp, ...), or float(x) in converted code."
        )

    def _index_message(self, container) -> str:
        return (
            f"{container} indexed by the symbolic tensor {self.name}{self._where()}: it is indexed once, "
            "while tracing, on concrete values, and cannot take an index the graph computes. Make the "
            "array a tensor first (rt.constant(table)[i] is checked and computed when the graph runs), "
            "or use rt.gather(table, i)."
        )

    def __index__(self):
        if _subscript_in_caller():
            raise TracingError(self._index_message("a numpy array or Python list"))
        raise TracingError(
            "a symbolic tensor cannot be used as a Python index or int" + self._where() + ". "
            "Use tensor ops (rt.gather, rt.cast) instead."
        )


def is_tensor(value) -> bool:
    return isinstance(value, Tensor)


_PYTHON_NUMBERS = (bool, int, float)

# a Python number of each dtype kind: how a weakly typed tensor enters NEP 50 promotion
KIND_NUMBERS = dtypes.KIND_NUMBERS


def is_python_number(value) -> bool:
    """True for Python numbers (not numpy scalars): they are weakly typed."""
    return type(value) in _PYTHON_NUMBERS


def is_weak(value) -> bool:
    """True for Python numbers and weakly typed tensors: they take a strongly typed partner's dtype."""
    return type(value) in _PYTHON_NUMBERS or (isinstance(value, Tensor) and value.weak)


def weak_number(value):
    """A weakly typed value as NEP 50 promotion sees it: a Python number (of a weak tensor's kind)."""
    if isinstance(value, Tensor):
        return KIND_NUMBERS[value.dtype.kind]
    return value
