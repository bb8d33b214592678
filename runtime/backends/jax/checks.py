"""Ops that raise, lowered: the first failed check is state, raised after the call.

XLA cannot raise an exception from inside a computation.  An op whose numpy
kernel raises for some values (an index out of range, ``int()`` of a NaN, a
failing assert) is lowered as a *check*: its rule computes whether the op
succeeds and its value as if it did, and records the first failure in the
state (``effects.py``'s threaded dict):

* ``CHECK`` -- an int32, 0 while every check passed, else the number of the
  first check that failed (``Context.ops[number - 1]``);
* ``("witness", id(op), i)`` -- the scalars the op's error message is made
  from (the index out of range), as they were when it failed.

Once a check failed, nothing observable happens any more: variable
assignments and random draws keep their old state (``masked``), host
callbacks do nothing, and every loop stops (``lowering.py`` adds ``CHECK ==
0`` to its condition).  After the call ``compiler.py`` writes the state
back and raises ``error(op, witnesses)``: the numpy kernel run on the
witnesses, so the exception, its type and message are the interpreter's
(``exec.interpreter.wrap_error`` names the op and the user's ``file:line``).

``RULES`` is op type -> ``rule(op, inputs, state)``; ``WITNESSES`` the dtypes
of the scalars each records.
"""

from __future__ import annotations

import threading

import jax.numpy as jnp
import numpy as np
from jax import lax

from autograph.runtime.backends.jax.errors import unlowerable
from autograph.runtime.backends.jax.kernels import BINARY
from autograph.runtime.core import backend
from autograph.runtime.exec.interpreter import wrap_error

CHECK = ("check",)

# ``x[key] op= v`` (SetItem's ``operator``) -> the op it combines with
_IN_PLACE = {"+=": BINARY["Add"], "-=": BINARY["Sub"], "*=": BINARY["Mul"], "/=": BINARY["RealDiv"],
             "//=": BINARY["FloorDiv"], "%=": BINARY["FloorMod"], "**=": jnp.power, "&=": BINARY["BitwiseAnd"],
             "|=": BINARY["BitwiseOr"], "^=": BINARY["BitwiseXor"], "<<=": BINARY["LeftShift"],
             ">>=": BINARY["RightShift"]}


class Context:
    """The check ops of one lowered graph, numbered from 1 (set while JAX traces it)."""

    local = threading.local()

    def __init__(self, ops):
        self.ops = list(ops)
        self.codes = {id(op): i + 1 for i, op in enumerate(self.ops)}

    @classmethod
    def code(cls, op) -> int:
        return cls.local.current.codes[id(op)]


def witness_dtypes(op) -> list:
    """The dtypes of the scalars ``op`` records when it fails (what its numpy error message shows)."""
    if op.type in ("CheckIndex", "GatherV2"):
        return [op.inputs[1].dtype, np.dtype(np.int64)]  # the index, the size of the axis
    if op.type in ("StridedSlice", "SetItem"):  # the dynamic parts of the key, the dimensions of the value
        first = 1 if op.type == "StridedSlice" else 2
        value = [op.inputs[1].dtype] if op.type == "SetItem" else []  # a 0-d value (its error shows it)
        return [t.dtype for t in op.inputs[first:]] + [np.dtype(np.int64)] * _rank(op) + value
    if op.type in ("PyInt", "Pow"):
        return [op.inputs[0 if op.type == "PyInt" else 1].dtype]
    return []


def _rank(op) -> int:
    shape = op.inputs[0].shape
    if shape is None:
        raise unlowerable("an index into a value of unknown rank")
    return len(shape)


def keys_of(op) -> tuple:
    """The state keys ``op`` uses (none if it is not a check)."""
    if op.type not in RULES and op.type != "PyFunc":  # (a py_function's exception is kept on the host)
        return ()
    return (CHECK, *(("witness", id(op), i) for i in range(len(witness_dtypes(op)))))


def initial_values(op) -> dict:
    return {key: np.zeros((), d) for key, d in zip(keys_of(op)[1:], witness_dtypes(op))} | {CHECK: np.int32(0)}


def record(op, ok, witnesses, state) -> None:
    """Records a failure of ``op`` where ``ok`` is False, unless a check failed before."""
    current = state[CHECK]
    failed = jnp.logical_and(current == 0, jnp.logical_not(jnp.all(ok)))
    state[CHECK] = jnp.where(failed, np.int32(Context.code(op)), current)
    for i, value in enumerate(witnesses):
        key = ("witness", id(op), i)
        state[key] = jnp.where(failed, jnp.asarray(value).astype(state[key].dtype), state[key])


def ok_so_far(state):
    """True while no check failed (always True for a graph without checks)."""
    return state[CHECK] == 0 if CHECK in state else None


def masked(state, new, old):
    """``new``, or ``old`` once a check failed (state changes stop at the first failure)."""
    if CHECK not in state:
        return new
    if np.shape(new) != np.shape(old):
        raise unlowerable("a state change of shape after a check that may fail")
    return jnp.where(state[CHECK] == 0, new, old)


_host_errors: dict = {}  # id(op) -> the exception its host callback raised (py_function)
_host_lock = threading.Lock()


def keep_host_error(op, error: BaseException) -> None:
    with _host_lock:
        _host_errors[id(op)] = error


def error(op, witnesses) -> BaseException:
    """The exception the interpreter raises for ``op`` failing on ``witnesses``."""
    if op.type == "PyFunc":
        with _host_lock:
            return wrap_error(_host_errors.pop(id(op)), op)
    inputs = REBUILD[op.type](op, [np.asarray(w)[()] for w in witnesses])
    kernel = backend.get("numpy").kernel(op.type)
    try:
        kernel(*inputs, **op.attrs)
    except Exception as e:  # noqa: BLE001 - the error to raise
        return wrap_error(e, op)
    return AssertionError(f"internal error: {op.type} op '{op.name}' failed under XLA but not on numpy")


# -- the rules ---------------------------------------------------------------------------------


def _wide(index):
    """An integer index as int64 (uint64 stays), so that ``-size`` and ``index + size`` do not wrap in a
    narrow dtype (a uint8 2 is in range of 3 items; an int8 -3 is item 297 of 300).  Check ops run
    under x64 (compiler.py)."""
    index = jnp.asarray(index)
    return index if index.dtype == np.uint64 else index.astype(np.int64)


def _in_range(index, size):
    index = _wide(index)
    if index.dtype.kind == "u":  # never negative
        return index < size
    return jnp.logical_and(-size <= index, index < size)


def _normalized(index, size):
    """A negative index counted from the end."""
    index = _wide(index)
    return index if index.dtype.kind == "u" else jnp.where(index < 0, index + size, index)


def _check_index(op, inputs, state):
    x, index = inputs
    size = np.shape(x)[op.attrs["axis"]]
    record(op, _in_range(index, size), [index, size], state)
    return index


def _assert(op, inputs, state):
    record(op, inputs[0], [], state)
    return ()


def _ensure(op, inputs, state):
    record(op, inputs[1], [], state)
    return inputs[0]


def _py_int(op, inputs, state):
    x = jnp.asarray(inputs[0])
    if x.dtype.kind == "f":
        flat = x.reshape(-1)
        nan, inf = jnp.isnan(flat), jnp.isinf(flat)
        big = jnp.abs(flat) >= 2.0**63
        shown = jnp.where(nan.any(), flat[jnp.argmax(nan)], jnp.where(inf.any(), flat[jnp.argmax(inf)],
                                                                        flat[jnp.argmax(jnp.abs(flat))]))
        record(op, jnp.logical_not(jnp.logical_or(jnp.logical_or(nan, inf), big).any()), [shown], state)
    return x.astype(np.int64)


def _pow(op, inputs, state):
    x, y = inputs
    if op.inputs[0].dtype.kind in "iu" and op.inputs[1].dtype.kind in "iu":  # numpy: no negative exponent
        flat = jnp.asarray(y).reshape(-1)
        record(op, jnp.all(flat >= 0), [flat[jnp.argmin(flat)] if flat.size else 0], state)
        y = jnp.maximum(y, 0)
    return jnp.power(x, y)


def _strided_slice(op, inputs, state):
    x, dynamic = inputs[0], inputs[1:]
    key, axis, oks = [], 0, []
    for item in op.attrs["spec"]:
        kind = item[0]
        if kind == "newaxis":
            key.append(None)
            continue
        if kind == "ellipsis":
            key.append(Ellipsis)
            axis = len(np.shape(x)) - sum(1 for it in op.attrs["spec"][op.attrs["spec"].index(item) + 1:]
                                          if it[0] in ("index", "slice"))
            continue
        if kind == "index":
            index, size = _part(item[1], dynamic), np.shape(x)[axis]
            oks.append(_in_range(index, size))
            if size == 0 or (isinstance(index, int) and not -size <= index < size):  # fails whenever run
                return _failed_read(op, x, dynamic, state)
            key.append(index if isinstance(index, int) else _normalized(index, size))
        else:
            parts = [_part(v, dynamic) for v in item[1:4]]
            if not all(p is None or isinstance(p, int) for p in parts):
                raise unlowerable("a slice bound computed in the graph (XLA needs a slice's size at compile time)")
            key.append(slice(*parts))
        axis += 1
    record(op, jnp.all(jnp.stack(oks)) if oks else True, [*dynamic, *np.shape(x)], state)
    return _index(x, tuple(key))


def _failed_read(op, x, dynamic, state):
    """A read whose index is out of range on every run: recorded as failed, zeros of the output's shape."""
    record(op, False, [*dynamic, *np.shape(x)], state)
    shape = op.outputs[0].shape
    if shape is None or None in shape:
        raise unlowerable("an index out of range into a value whose result shape is not known")
    return jnp.zeros(shape, op.outputs[0].dtype)


def _part(v, dynamic):
    if isinstance(v, str):
        v = dynamic[int(v[1:]) - 1]
        return int(v) if isinstance(v, (np.ndarray, np.generic, int)) else v
    return v


def _index(x, key):
    """``x[key]``; an index in range by the check (clamped by XLA otherwise, the result unused)."""
    if all(isinstance(k, (int, slice, type(None), type(Ellipsis))) for k in key):
        return jnp.asarray(x)[key]
    return jnp.asarray(x)[tuple(lax.convert_element_type(k, np.int64) if not isinstance(
        k, (int, slice, type(None), type(Ellipsis))) else k for k in key)]


def _gather(op, inputs, state):
    params, indices = inputs
    axis = op.attrs["axis"] % max(np.ndim(params), 1)
    size = np.shape(params)[axis]
    flat = jnp.asarray(indices).reshape(-1)
    inside = _in_range(flat, size)
    first_bad = flat[jnp.argmin(inside)] if flat.size else np.int64(0)
    record(op, jnp.all(inside), [first_bad, size], state)
    if size == 0:  # fails whenever indices are given (XLA refuses to index an empty axis)
        return jnp.zeros(np.shape(params)[:axis] + np.shape(indices) + np.shape(params)[axis + 1:], params.dtype)
    return jnp.take(params, _normalized(indices, size), axis=axis)


def _set_item(op, inputs, state):
    """``x[key] op= value`` on a copy of ``x``, where numpy's casting is XLA's: a value of ``x``'s
    dtype, a narrower float into floats, a Python number into floats, a Python int into ints
    (checked to fit, as numpy does); the key is indices, static slices and, for a 0-d value,
    slices with computed bounds (a mask)."""
    x, given, dynamic = jnp.asarray(inputs[0]), inputs[1], inputs[2:]
    attrs = op.attrs
    operator = attrs["operator"]
    value, fits = _assigned_value(op, given)
    combine = _IN_PLACE.get(operator)
    if operator != "=" and (combine is None or (x.dtype.kind in "iub" and operator in ("/=", "**="))):
        raise unlowerable(f"item assignment with {operator} (numpy's casting rules for it)")
    key, oks, masks, axis = [], [], [], 0
    for item in attrs["key"]:
        if item[0] == "index":
            index, size = _part(item[1], dynamic), np.shape(x)[axis]
            oks.append(_in_range(index, size))
            if size == 0:  # fails whenever run (XLA refuses to index an empty axis)
                record(op, False, [*dynamic, *np.shape(x), np.zeros((), value.dtype)], state)
                return x
            key.append(index if isinstance(index, int) else _normalized(index, size))
        elif item[0] == "slice":
            parts = [_part(v, dynamic) for v in item[1:4]]
            if all(p is None or isinstance(p, int) for p in parts):
                key.append(slice(*parts))
            else:
                masks.append(_slice_mask(parts, np.shape(x), axis))
                key.append(slice(None))
        else:
            raise unlowerable("item assignment with an index array, a mask, a new axis or an ellipsis")
        axis += 1
    witness = given if np.ndim(value) == 0 else np.zeros((), op.inputs[1].dtype)  # as given (one that does not fit)
    record(op, jnp.all(jnp.stack([*oks, fits])), [*dynamic, *np.shape(x), witness], state)
    key = tuple(key)
    if masks and np.ndim(value) != 0:
        raise unlowerable("item assignment of an array to a slice with a bound computed in the graph")
    old = x[key]
    new = jnp.broadcast_to(jnp.asarray(value if combine is None else combine(old, value)).astype(x.dtype),
                           np.shape(old))
    for mask in masks:
        new = jnp.where(mask, new, old)
    return x.at[key].set(new)


def _assigned_value(op, value):
    """``(value, fits)``: the value as numpy stores it in ``x``'s dtype, and whether numpy accepts it
    (a Python int must fit the integer dtype); else ``Unlowerable``."""
    target, given = op.inputs[0].dtype, op.inputs[1].dtype
    v = jnp.asarray(value)
    if op.attrs["python_value"]:
        if target.kind == "f" and given.kind in "iuf":
            return v.astype(target), True
        in_place = op.attrs["operator"] != "=" and np.ndim(value) == 0  # x[k] += 8: x's dtype (NEP 50)
        if target.kind in "iu" and given.kind in "iu" and (op.attrs["operator"] == "=" or in_place):
            info = np.iinfo(target)
            return v.astype(target), jnp.logical_and(v >= int(info.min), v <= int(info.max))
    elif given == target or (target.kind == "f" and given.kind == "f" and given.itemsize <= target.itemsize):
        return v.astype(target), True
    raise unlowerable("item assignment of a value of another dtype (numpy's casting and overflow checks)")


def _slice_mask(parts, shape, axis):
    """The positions of axis ``axis`` that ``slice(*parts)`` selects, broadcastable against the
    value (numpy's slice rules: negative bounds from the end, then clamped)."""
    start, stop, step = parts
    if not (step is None or (isinstance(step, int) and step > 0)):
        raise unlowerable("item assignment to a slice with a computed or negative step")
    n = shape[axis]
    start = 0 if start is None else _clamped_bound(start, n)
    stop = n if stop is None else _clamped_bound(stop, n)
    p = jnp.arange(n)
    mask = jnp.logical_and(p >= start, p < stop)
    if step not in (None, 1):
        mask = jnp.logical_and(mask, (p - start) % step == 0)
    return mask.reshape((n,) + (1,) * (len(shape) - axis - 1))


def _clamped_bound(v, n):
    v = jnp.where(v < 0, v + n, v)
    return jnp.clip(v, 0, n)


def _set_item_inputs(op, w):
    n = len(op.inputs) - 2
    x = np.broadcast_to(np.zeros((), op.inputs[0].dtype), tuple(int(d) for d in w[n:-1]))
    return (x, np.asarray(w[-1], op.inputs[1].dtype), *w[:n])


def _zeros_like_input(op, i):
    shape = op.inputs[i].shape
    if shape is None or None in shape:
        return np.zeros((0,), op.inputs[i].dtype)
    return np.broadcast_to(np.zeros((), op.inputs[i].dtype), shape)


def _zeros_with_axis(op, size):
    """A value of ``op.inputs[0]``'s dtype whose axis ``op.attrs["axis"]`` has ``size`` elements."""
    rank = _rank(op)
    axis = op.attrs["axis"] % rank
    return np.broadcast_to(np.zeros((), op.inputs[0].dtype), (1,) * axis + (int(size),) + (1,) * (rank - axis - 1))


def _strided_slice_inputs(op, w):
    n = len(op.inputs) - 1
    return (np.broadcast_to(np.zeros((), op.inputs[0].dtype), tuple(int(d) for d in w[n:])), *w[:n])


RULES = {
    "CheckIndex": _check_index, "Assert": _assert, "Ensure": _ensure, "PyInt": _py_int, "Pow": _pow,
    "StridedSlice": _strided_slice, "GatherV2": _gather, "SetItem": _set_item,
}

# op type -> the inputs its numpy kernel fails on, from the op and its witnesses
REBUILD = {
    "CheckIndex": lambda op, w: (_zeros_with_axis(op, w[1]), w[0]),
    "Assert": lambda op, w: (np.False_, *(_zeros_like_input(op, i) for i in range(1, len(op.inputs)))),
    "Ensure": lambda op, w: (_zeros_like_input(op, 0), np.False_),
    "PyInt": lambda op, w: (np.asarray(w[0]),),
    "Pow": lambda op, w: (np.ones((), op.inputs[0].dtype), w[0]),
    "StridedSlice": _strided_slice_inputs,
    "SetItem": _set_item_inputs,
    "GatherV2": lambda op, w: (_zeros_with_axis(op, w[1]), np.asarray([w[0]])),
}
