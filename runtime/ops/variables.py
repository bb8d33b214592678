"""``rt.Variable``: mutable state shared by eager code and the graphs that use it.

Eagerly a variable holds a numpy array.  In a trace,
``read_value``/``assign``/``assign_add``/``assign_sub`` become the ops
``ReadVariable``/``AssignVariable``/``AssignAddVariable``/
``AssignSubVariable``, registered ``stateful=True`` (see ``ops/__init__.py``:
they run in program order at every execution and are never dropped).  They
refer to the variable by its *handle* (a ``VariableHandle``: a
process-unique id) in the op attrs (``handle``).  The kernels find the
variable through a process-wide registry of live variables
(``lookup_variable``), so a graph stays plain data.  Graph serialization
saves a handle as a record (name, dtype, shape, current value: a codec
registered with ``serialize``); loading it creates the loaded graph's own
variables from those records, in any process: a file never touches a
variable of the process that loads it.  Each variable has a lock: reads,
writes and read-modify-writes (``assign_add``) are atomic under threads.

While ``rt.function`` traces, ``creation_scope`` says whether a
``Variable(...)`` may be created (a function may create variables on its
first call only: ``tracing/trace.py``) and collects those created.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
import weakref

import numpy as np

from autograph.runtime.core import backend, dtypes, serialize, shapes
from autograph.runtime.errors import TracingError
from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import user_location_text
from autograph.runtime.core.opdef import get, register
from autograph.runtime.ops.apply import apply_op, eager_result, register_conversion
from autograph.runtime.ops.basic import cast
from autograph.runtime.core.tensor import Tensor

__all__ = ["Variable", "VariableHandle", "creation_scope", "lookup_variable", "export_variable", "import_variable"]


class VariableHandle:
    """How graph ops refer to a variable: a process-unique id (printed as that id).

    Graph serialization saves a handle as the variable's name, dtype, shape
    and current value (see ``export_variable``); a loaded graph gets new
    variables made from those records (``import_variable``).
    """

    __slots__ = ("id",)

    def __init__(self, id: str):
        self.id = id

    def __eq__(self, other):
        return isinstance(other, VariableHandle) and other.id == self.id

    def __hash__(self):
        return hash((VariableHandle, self.id))

    def __repr__(self):
        return self.id


# handle id -> live Variable.  Weak: a variable nobody refers to any more is
# freed; ConcreteFunctions keep the variables their graphs use alive.
_VARIABLES: "weakref.WeakValueDictionary[str, Variable]" = weakref.WeakValueDictionary()
_handle_counter = itertools.count()
# Tells this process's handles from those of a graph saved by another process.
_PROCESS_TOKEN = f"{os.getpid()}-{time.time_ns()}"
_creation = threading.local()


@contextlib.contextmanager
def creation_scope(refusal=None):
    """While active, ``Variable(...)`` raises ``TracingError(refusal(name, location))`` if
    ``refusal`` is given (the message says why and how to fix it).

    Yields the list of the variables created in the scope: the caller keeps
    them alive (the graph refers to them only by handle).
    """
    saved = getattr(_creation, "scope", None)
    created: list = []
    _creation.scope = (refusal, created)
    try:
        yield created
    finally:
        _creation.scope = saved


def lookup_variable(handle) -> "Variable":
    """The live variable with ``handle`` (a ``VariableHandle``); a clear error if it was freed."""
    if not isinstance(handle, VariableHandle):
        raise TypeError(f"a variable op's handle must be a VariableHandle, got {handle!r:.60}")
    key = handle.id
    found = _VARIABLES.get(key)
    if found is None:
        raise RuntimeError(
            f"variable with handle {key!r} no longer exists: it was garbage-collected. Keep a reference "
            "to the rt.Variable for as long as graphs that use it run."
        )
    return found


def _constant_value(tensor: Tensor, what: str):
    """The value of ``tensor`` if it depends on constants only (evaluated with kernels)."""
    memo: dict[int, object] = {}

    def value_of(t):
        op = t.op
        if id(op) not in memo:
            if op.type == "Placeholder":
                raise TracingError(
                    f"{what} depends on the traced function's input {op.name!r} (tensor {t.name}) at "
                    f"{user_location_text()}: a variable is created once, outside the graph, so "
                    "its initial value must be computable without the function's arguments. Create the "
                    "variable outside the function, or initialize it with a constant and assign() the "
                    "input-dependent value."
                )
            opdef = get(op.type)
            if opdef.stateful:
                raise TracingError(
                    f"{what} depends on the stateful op {op.name!r} ({op.type}) at "
                    f"{user_location_text()}: a variable's initial value must be computable "
                    "once, outside the graph. Create the variable outside the function instead."
                )
            args = [value_of(x) for x in op.inputs]
            result = backend.get().kernel(op.type)(*args, **op.attrs)
            memo[id(op)] = result if len(op.outputs) != 1 else (result,)
        return memo[id(op)][t.value_index]

    return value_of(tensor)


class Variable:
    """Mutable state shared by eager code and every graph that uses it.

    ``Variable(initial_value, dtype=None, name=None, shape=None)``: the
    dtype and shape are fixed at creation (the dtype is numpy's for the
    initial value unless ``dtype`` is given; ``shape`` may use ``None`` for
    dimensions that assignments may change).  Assigned values are cast to
    the variable's dtype when numpy's in-place operators would
    (``same_kind``), otherwise they are a ``TypeError``.  Reading it in arithmetic
    (``v + 1``, ``v @ w``, ``v[0]``) reads its current value.
    """

    __slots__ = ("_handle", "_value", "_lock", "dtype", "shape", "name", "__weakref__")

    # numpy defers binary operators to ours: np.float32(2) * v -> v.__rmul__
    __array_priority__ = 1000
    __array_ufunc__ = None

    def __init__(self, initial_value, dtype=None, name=None, shape=None):
        self.name = name or "Variable"
        scope = getattr(_creation, "scope", None)
        if scope is not None and scope[0] is not None:
            raise TracingError(scope[0](self.name, user_location_text()))
        if callable(initial_value) and not isinstance(initial_value, (Tensor, np.ndarray, np.generic)):
            initial_value = initial_value()
        if isinstance(initial_value, Variable):
            initial_value = initial_value.numpy()
        if isinstance(initial_value, Tensor):
            initial_value = _constant_value(initial_value, f"the initial value of rt.Variable {self.name!r}")
        value = np.array(initial_value, dtype=None if dtype is None else dtypes.as_dtype(dtype), copy=True)
        if value.dtype == object or value.dtype not in dtypes.SUPPORTED:
            raise TypeError(
                f"rt.Variable {self.name!r} at {user_location_text()}: initial value "
                f"{initial_value!r} has unsupported dtype {value.dtype}; pass a numeric value or dtype=..."
            )
        self.dtype = value.dtype
        if shape is None:
            self.shape = value.shape
        else:
            self.shape = shapes.as_shape(shape)
            if not shapes.is_subshape(value.shape, self.shape):
                raise ValueError(
                    f"rt.Variable {self.name!r}: initial value of shape {shapes.format_shape(value.shape)} "
                    f"does not fit shape={shapes.format_shape(self.shape)}"
                )
        self._value = value
        self._lock = threading.Lock()  # reads, writes and read-modify-writes are atomic per variable
        self._handle = VariableHandle(f"{self.name}_{next(_handle_counter)}")
        _VARIABLES[self._handle.id] = self
        if scope is not None:
            scope[1].append(self)

    @property
    def handle(self) -> VariableHandle:
        """The process-unique id graph ops use to refer to this variable."""
        return self._handle

    def _attrs(self):
        return {"handle": self._handle, "dtype": self.dtype, "shape": self.shape}

    # -- reading -----------------------------------------------------------

    def read_value(self):
        """The current value: a numpy value eagerly, a ``ReadVariable`` tensor in a trace."""
        return apply_op("ReadVariable", [], self._attrs(), name="read_" + _op_name(self.name))

    def value(self):
        """Same as ``read_value()``."""
        return self.read_value()

    def numpy(self):
        """The current value as numpy (a copy; 0-d as a numpy scalar). Eager only."""
        if current_graph() is not None:
            raise TracingError(
                f"Variable.numpy() of {self.name!r} at {user_location_text()} while tracing: a "
                "traced function has no concrete values. Use v.read_value() (or v itself in arithmetic)."
            )
        return eager_result(self._value.copy())

    def __array__(self, dtype=None, copy=None):
        if current_graph() is not None:
            raise TracingError(
                f"rt.Variable {self.name!r} converted to a constant array at {user_location_text()} "
                "while tracing: that would freeze its current value into the graph. Use v.read_value()."
            )
        return self._value.copy() if dtype is None else self._value.astype(dtype)

    # -- writing -----------------------------------------------------------

    def _update(self, op_type, value, verb):
        if isinstance(value, Variable):
            value = value.read_value()
        if isinstance(value, Tensor):
            if value.dtype != self.dtype and np.can_cast(value.dtype, self.dtype, "same_kind"):
                value = cast(value, self.dtype)  # as numpy's in-place operators cast
        else:
            array = np.asarray(value)
            if array.dtype != self.dtype:
                if array.dtype == object or not np.can_cast(array.dtype, self.dtype, "same_kind"):
                    raise TypeError(
                        f"Variable.{verb} of {self.name!r} ({self.dtype.name}) at "
                        f"{user_location_text()}: cannot assign a {array.dtype} value "
                        f"{value!r}; convert it with .astype({self.dtype.name!r}) or rt.cast first."
                    )
                array = array.astype(self.dtype)
            value = array
        return apply_op(op_type, [value], self._attrs(), name=verb + "_" + _op_name(self.name))

    def assign(self, value):
        """Sets the value; returns the new value (a tensor in a trace)."""
        return self._update("AssignVariable", value, "assign")

    def assign_add(self, delta):
        """Adds ``delta`` in place; returns the new value (a tensor in a trace)."""
        return self._update("AssignAddVariable", delta, "assign_add")

    def assign_sub(self, delta):
        """Subtracts ``delta`` in place; returns the new value (a tensor in a trace)."""
        return self._update("AssignSubVariable", delta, "assign_sub")

    # -- Python protocol: arithmetic reads the current value ---------------

    def __repr__(self):
        shape = shapes.format_shape(self.shape)
        return f"<rt.Variable {self.name!r} {self.dtype.name}{shape} numpy={self._value!r}>"

    def __getitem__(self, index):
        return self.read_value()[index]

    def __bool__(self):
        return bool(self.read_value())

    def __float__(self):
        return float(self.read_value())

    def __int__(self):
        return int(self.read_value())

    def __neg__(self):
        return -self.read_value()

    def __pos__(self):
        return +self.read_value()

    def __abs__(self):
        return abs(self.read_value())

    def __invert__(self):
        return ~self.read_value()


def _binary(name):
    def forward(self, other):
        if isinstance(other, Variable):
            other = other.read_value()
        return getattr(self.read_value(), name)(other)

    forward.__name__ = name
    return forward


for _name in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
    "radd", "rsub", "rmul", "rtruediv", "rfloordiv", "rmod", "rpow", "rmatmul", "rand", "ror", "rxor",
    "lt", "le", "gt", "ge",
):
    setattr(Variable, f"__{_name}__", _binary(f"__{_name}__"))
del _name


def _op_name(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)


def export_variable(handle) -> dict:
    """A JSON-serializable record of a live variable: handle, name, dtype, shape, current value."""
    var = lookup_variable(handle)
    return {
        "handle": var.handle.id,
        "process": _PROCESS_TOKEN,
        "name": var.name,
        "dtype": var.dtype.name,
        "shape": None if var.shape is None else list(var.shape),
        "value": var._value.tolist(),
    }


def import_variable(record: dict, owned: dict | None = None) -> VariableHandle:
    """A new variable made from ``export_variable``'s record; returns its handle.

    A graph file is data: its records never name a variable of the loading
    process, whatever handle or process token they hold.  Every load gets
    its own variables (``owned`` is the load's dict, handle id -> variable,
    so ops sharing a record share one variable; the loaded graph keeps them
    alive).  The record is checked first (``ValueError`` naming the field).
    """
    owned = {} if owned is None else owned
    if not isinstance(record, dict) or not {"handle", "name", "dtype", "shape", "value"} <= set(record):
        raise ValueError("a variable record needs the fields handle, name, dtype, shape and value")
    key = record["handle"]
    if not isinstance(key, str) or not isinstance(record["name"], str) or not record["name"].isprintable():
        raise ValueError("a variable record's 'handle' and 'name' must be printable strings")
    var = owned.get(key)
    if var is None:
        dtype = dtypes.as_dtype(record["dtype"]) if isinstance(record["dtype"], str) else None
        shape = record["shape"]
        if dtype is None or not (shape is None or (isinstance(shape, list) and all(
                d is None or (type(d) is int and d >= 0) for d in shape))):
            raise ValueError(f"variable record {key!r:.60}: bad 'dtype' or 'shape' ({record['dtype']!r:.40}, {shape!r:.60})")
        value = _record_value(record["value"], dtype, key)
        saved = getattr(_creation, "scope", None)
        _creation.scope = None  # loading a graph is not a trace that may refuse to create variables
        try:
            var = Variable(value, name=record["name"][:200], shape=None if shape is None else tuple(shape))
        finally:
            _creation.scope = saved
        owned[key] = var
    return var.handle


_RECORD_MAX_ELEMENTS = 1 << 24


def _record_value(data, dtype, key):
    """The value of a variable record as an array of ``dtype``; ValueError if it is not one."""
    flat, stack, shape_ok = 0, [data], True
    while stack:  # count elements before numpy sees the data
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif type(item) in (bool, int, float):
            flat += 1
        else:
            shape_ok = False
            break
        if flat > _RECORD_MAX_ELEMENTS or len(stack) > _RECORD_MAX_ELEMENTS:
            raise ValueError(f"variable record {key!r:.60} holds more than {_RECORD_MAX_ELEMENTS} values")
    try:
        if not shape_ok:
            raise ValueError("values must be numbers in nested lists")
        value = np.array(data, dtype=dtype)
    except (ValueError, TypeError, OverflowError) as e:
        raise ValueError(f"variable record {key!r:.60}: 'value' is not a {dtype.name} array ({e})") from None
    return value


serialize.register_codec("variable", VariableHandle, export_variable, import_variable, per_load=True)
# A variable is an op input like a tensor: ``rt.sin(v)`` reads it (eagerly numpy reads it through __array__).
register_conversion(Variable, Variable.read_value)


def _infer_read(inputs, attrs):
    return [(attrs["dtype"], attrs["shape"])]


def _update_label(attrs):
    handle = attrs["handle"]
    var = _VARIABLES.get(handle.id)
    return f"variable {var.name!r}" if var is not None else f"variable {handle.id!r}"


def _assigned_value(inputs, attrs):
    """The one input of an assign op, checked to have the variable's dtype."""
    (value,) = inputs
    if value.dtype != attrs["dtype"]:
        raise TypeError(
            f"{_update_label(attrs)} has dtype {attrs['dtype'].name} but the value {value.name} has dtype "
            f"{value.dtype.name}; cast it with rt.cast(value, {attrs['dtype'].name!r})"
        )
    return value


def _infer_assign(inputs, attrs):
    value = _assigned_value(inputs, attrs)
    if not shapes.is_compatible(value.shape, attrs["shape"]):
        raise ValueError(
            f"{_update_label(attrs)} has shape {shapes.format_shape(attrs['shape'])}; a value of shape "
            f"{shapes.format_shape(value.shape)} cannot be assigned to it (reshape the value first)"
        )
    return [(attrs["dtype"], attrs["shape"])]


def _infer_assign_update(inputs, attrs):
    value = _assigned_value(inputs, attrs)
    var_shape = attrs["shape"]
    try:
        merged = shapes.broadcast(var_shape, value.shape)
    except ValueError:
        merged = ()
    if var_shape is not None and merged is not None and (
        len(merged) != len(var_shape) or not shapes.is_compatible(merged, var_shape)
    ):
        raise ValueError(
            f"{_update_label(attrs)} has shape {shapes.format_shape(var_shape)}; a value of shape "
            f"{shapes.format_shape(value.shape)} does not broadcast to it"
        )
    return [(attrs["dtype"], var_shape)]


_VARIABLE_ATTRS = {"handle": "variable", "dtype": "dtype", "shape": "shape"}
register("ReadVariable", infer=_infer_read, stateful=True, inputs=0, attrs=_VARIABLE_ATTRS)
register("AssignVariable", infer=_infer_assign, stateful=True, inputs=1, attrs=_VARIABLE_ATTRS)
register("AssignAddVariable", infer=_infer_assign_update, stateful=True, inputs=1, attrs=_VARIABLE_ATTRS)
register("AssignSubVariable", infer=_infer_assign_update, stateful=True, inputs=1, attrs=_VARIABLE_ATTRS)
