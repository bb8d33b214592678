"""The numpy kernels: op type -> the numpy function that computes it.

Kernel contract (``core/backend.py``): ``kernel(*input_values, **attrs)``
returns the output value of a single-output op, or a tuple of values
(``()`` for an op without outputs).  The op's definition
(``runtime/ops/*``: inference, weak typing, statefulness, cost) and its
kernel here are the two halves of an op type; a kernel never decides a
dtype the definition did not infer (the suite checks that eager results and
graph results agree).  Elementwise ops are the numpy ufuncs themselves, so
the code generator can spell them (``ufunc_of``: ``np.<name>``), and the
backend record declares what they can do (``OUT_KERNELS``: they write into
donated buffers, ``out=``; ``OPERATOR_KERNELS``: the interpreter may call
them as Python operators on scalars).

``If`` and ``While`` have no kernel: running a sub-graph is the
executor's rule (``exec/interpreter.py``).
"""

from __future__ import annotations

import operator as py_operator

import numpy as np

from autograph.runtime.core import shapes, spellings
from autograph.runtime.errors import ExecutionError, mark_user_error
from autograph.runtime.ops import math, random_ops, reduction
from autograph.runtime.ops.apply import eager_result
from autograph.runtime.backends.numpy import nn_kernels
from autograph.runtime.exec import effects

# -- elementwise math and reductions (runtime/ops/math.py, reduction.py) ---------------

# The numpy backend computes each elementwise op with the very ufunc whose type table
# defines its dtype rule (the definitions' tables), and each reduction with the numpy
# reduction it means: numpy is the reference semantics, so these kernels are it.
ELEMENTWISE = {**math.BINARY, **math.UNARY, "MatMul": np.matmul}

# -- core ops (runtime/ops/basic.py) ---------------------------------------------------


def _placeholder(*, dtype, shape):
    raise ExecutionError(
        "a Placeholder has no value of its own: pass one value per graph.all_inputs to run_graph"
    )


def _const(*, value, dtype, weak=False):
    return value


def _identity(x):
    return x


def _choose(pred, x, y):
    """``Choose``: one of two whole values (an ``If`` lowered to v1 form)."""
    return x if pred else y


def _cast(x, *, dtype, weak=False):
    return np.asarray(x).astype(dtype, copy=False)


# -- array ops (runtime/ops/array.py) -------------------------------------------------


def _reshape(x, shape):
    return np.reshape(x, tuple(shape))


def _shape(x, *, out_type):
    return np.array(np.shape(x), dtype=out_type)


def _size(x, *, out_type):
    return np.asarray(np.size(x), dtype=out_type)


def _pack(*values, axis, weak=False):
    return np.stack(values, axis=axis)


def _concat(*values, axis, weak=False):
    return np.concatenate(values, axis=axis)


def _list_append(target, item, *, label):
    if not len(target):  # empty: its trailing dimensions are not an element shape yet
        return np.stack([item]).astype(target.dtype, copy=False)
    if target.shape[1:] != np.shape(item):
        raise ValueError(
            f"{label} holds elements of shape {shapes.format_shape(target.shape[1:])} and an element of shape "
            f"{shapes.format_shape(np.shape(item))} is appended to it; a list staged in a tensor loop or branch "
            "is one tensor of stacked elements, so its elements must have one shape. Pad the elements to one "
            "shape, or keep one list per shape."
        )
    return np.concatenate([target, np.stack([item])])


def _range(start, limit, delta, *, dtype):
    return np.arange(start, limit, delta, dtype=dtype)


def _fill(dims, value):
    value = np.asarray(value)
    return np.full(tuple(dims), value, dtype=value.dtype)


def _zeros_like(x, *, dtype):
    return np.zeros_like(x, dtype=dtype)


def _ones_like(x, *, dtype):
    return np.ones_like(x, dtype=dtype)


def _gather(params, indices, *, axis):
    return np.take(params, indices, axis=axis)


def _transpose(x, *, perm):
    return np.transpose(x, perm)


# -- indexing (runtime/ops/indexing.py) -----------------------------------------------


def build_key(spec, dynamic) -> tuple:
    """The Python index tuple a ``StridedSlice`` spec stands for, ``"$k"`` resolved from ``dynamic``."""

    def resolve(v):
        if isinstance(v, str):
            return int(dynamic[int(v[1:]) - 1])
        return v

    key = []
    for item in spec:
        kind = item[0]
        if kind == "index":
            key.append(resolve(item[1]))
        elif kind == "slice":
            key.append(slice(resolve(item[1]), resolve(item[2]), resolve(item[3])))
        elif kind == "newaxis":
            key.append(None)
        else:
            key.append(Ellipsis)
    return tuple(key)


def _strided_slice(x, *dynamic, spec):
    return np.asarray(x)[build_key(spec, dynamic)]


def _check_index(x, index, *, axis, where, is_list=False):
    size = np.shape(x)[axis]
    if not -size <= int(index) < size:
        problem = "list index out of range" if is_list else (
            f"index {int(index)} is out of bounds for axis {axis} with size {size}")
        raise _user_error(IndexError, f"{where}: {problem}")
    return index


# ``x[key] op= v`` as Python spells it (runtime/ops/indexing.py: SetItem)
_IN_PLACE = {"+=": "iadd", "-=": "isub", "*=": "imul", "@=": "imatmul", "/=": "itruediv", "//=": "ifloordiv",
             "%=": "imod", "**=": "ipow", "<<=": "ilshift", ">>=": "irshift", "&=": "iand", "|=": "ior",
             "^=": "ixor"}


def _item_key(key, dynamic) -> tuple:
    """The Python index a ``SetItem`` key stands for: a spec's items, ``("array", "$k")`` an index array."""
    resolve = lambda v: dynamic[int(v[1:]) - 1] if isinstance(v, str) else v  # noqa: E731
    parts = []
    for item in key:
        if item[0] == "array":
            parts.append(np.asarray(resolve(item[1])))
        else:
            parts.extend(build_key((item,), [int(d) if np.ndim(d) == 0 else 0 for d in dynamic]))
    return tuple(parts)


def _set_item(x, value, *dynamic, key, operator, python_value, where):
    """The user's statement on a copy of ``x``: numpy's bounds, broadcasting and casting; its
    errors keep their type (they are the user's), the message naming the statement."""
    out = np.array(x, copy=True)
    index = _item_key(key, dynamic)
    if python_value:
        value = np.asarray(value).tolist()
    elif np.ndim(value) == 0:
        value = np.asarray(value)[()]  # a 0-d tensor stands for a numpy scalar: numpy checks that it fits
    try:
        if operator == "=":
            out[index] = value
        else:
            out[index] = getattr(py_operator, _IN_PLACE[operator])(out[index], value)
    except (IndexError, ValueError, OverflowError, TypeError, ArithmeticError) as e:
        error = type(e)(f"{where}: {e}") if type(e) in (IndexError, ValueError, OverflowError, TypeError) else e
        mark_user_error(error)
        raise error from None
    return out


# -- Python's conversions (runtime/ops/math.py): failures are the user's, as in Python --


def _user_error(kind, message):
    error = kind(message)
    mark_user_error(error)
    return error


def _py_int(x, *, where):
    a = np.asarray(x)
    if a.dtype.kind == "f":
        if not np.isfinite(a).all():
            nan = np.isnan(a).any()
            raise _user_error(ValueError if nan else OverflowError,
                              f"{where}: cannot convert float {'NaN' if nan else 'infinity'} to integer")
        if (np.abs(a.astype(np.float64)) >= 2.0**63).any():  # (2**63 is no float16: compare in float64)
            raise _user_error(OverflowError, f"{where}: {a.flat[np.argmax(np.abs(a))]!r} does not fit in int64, "
                                             "the widest integer of a graph (Python's ints are unbounded)")
    return a.astype(np.int64)


def _py_bool(x, *, where):
    try:
        return np.bool_(bool(np.asarray(x)))
    except ValueError as e:
        raise _user_error(ValueError, f"{where}: {e}") from None


def _round(x, *, decimals, python=False):
    if python:  # a Python number: Python's correctly rounded round(), not numpy's scaling
        a = np.asarray(x)
        return np.asarray(round(a.item(), decimals), dtype=a.dtype)
    return np.round(np.asarray(x), decimals)


def _ensure(x, ok, *, error, message):
    if not np.all(ok):
        raise _user_error({e.__name__: e for e in (ValueError, OverflowError, IndexError, TypeError,
                                                     ZeroDivisionError)}[error], message)
    return x


# -- reductions (runtime/ops/reduction.py) --------------------------------------------

REDUCTIONS = {**reduction.REDUCTIONS, "ArgMax": np.argmax, "ArgMin": np.argmin}

# -- random ops (runtime/ops/random_ops.py) -------------------------------------------


def _dims(shape):
    return tuple(int(d) for d in np.asarray(shape).reshape(-1))


def _uniform(shape, minval, maxval, *, dtype, seed, seed2, stream):
    gen = random_ops.generator(stream, seed, seed2)
    dims = _dims(shape)
    if dtype.kind == "f":
        unit = gen.random(dims, dtype=np.float64 if dtype == np.float64 else np.float32)
        out = (minval + (maxval - minval) * unit).astype(dtype)
    else:
        out = gen.integers(minval, maxval, size=dims, dtype=dtype)
    return eager_result(np.asarray(out))


def _normal(shape, mean, stddev, *, dtype, seed, seed2, stream):
    gen = random_ops.generator(stream, seed, seed2)
    unit = gen.standard_normal(_dims(shape), dtype=np.float64 if dtype == np.float64 else np.float32)
    return eager_result(np.asarray(mean + stddev * unit).astype(dtype))


# -- variables, print, py_function, Assert: exec/effects.py, shared by every backend -----------

# -- DatasetReduce (runtime/data/reduce_op.py) -----------------------------------------


def _dataset_reduce(*inputs, dataset, cond, body, n_state, library):
    """The staged ``for x in ds`` loop: ``body`` over the pipeline's elements while ``cond`` holds."""
    from autograph.runtime.exec import limits
    from autograph.runtime.exec.interpreter import plan  # the executor runs the sub-graphs

    state, captures = tuple(inputs[:n_state]), inputs[n_state:]
    cond_plan, body_plan = plan(library[cond]), plan(library[body])
    budget = limits.budget(library[body])  # a loaded graph's iteration budget (None: traced)
    elements = dataset.flat_elements()
    try:
        while cond_plan.run((*state, *captures))[0]:
            element = next(elements, None)
            if element is None:
                break
            if budget is not None:
                budget.spend(f"the DatasetReduce over {body!r}")
            state = tuple(body_plan.run((*state, *element, *captures)))
    finally:
        elements.close()  # stops the pipeline's threads
    return state[0] if n_state == 1 else state


# -- the table ------------------------------------------------------------------------

KERNELS: dict = {
    **ELEMENTWISE,
    **REDUCTIONS,
    **nn_kernels.KERNELS,
    "Placeholder": _placeholder,
    "Const": _const,
    "Identity": _identity,
    "Choose": _choose,
    "Cast": _cast,
    "Reshape": _reshape,
    "Shape": _shape,
    "Size": _size,
    "Pack": _pack,
    "ConcatV2": _concat,
    "ListAppend": _list_append,
    "Select": np.where,
    "Range": _range,
    "Fill": _fill,
    "ZerosLike": _zeros_like,
    "OnesLike": _ones_like,
    "GatherV2": _gather,
    "Transpose": _transpose,
    "StridedSlice": _strided_slice,
    "SetItem": _set_item,
    "CheckIndex": _check_index,
    "PyInt": _py_int,
    "PyBool": _py_bool,
    "Round": _round,
    "Ensure": _ensure,
    "RandomUniform": _uniform,
    "RandomNormal": _normal,
    "ReadVariable": effects.read_variable,
    "AssignVariable": effects.assign_variable,
    "AssignAddVariable": effects.assign_add_variable,
    "AssignSubVariable": effects.assign_sub_variable,
    "Print": effects.print_values,
    "PyFunc": effects.py_func,
    "Assert": effects.check_assert,
    "DatasetReduce": _dataset_reduce,
}


# -- what the ufunc kernels can do (the backend record's capabilities, core/backend.py) ---------


def ufunc_of(op_type):
    """The numpy ufunc that is ``op_type``'s kernel and is spelled ``np.<its name>``, or None."""
    kernel = KERNELS.get(op_type)
    if isinstance(kernel, np.ufunc) and getattr(np, kernel.__name__, None) is kernel:
        return kernel
    return None


# a ufunc writes its result into ``out=``, a buffer of the result's dtype and shape
OUT_KERNELS = frozenset(t for t in KERNELS if ufunc_of(t) is not None)
# on numpy values ``ndarray.__add__`` is ``np.add``: a ufunc kernel is its Python operator
OPERATOR_KERNELS = frozenset(t for t in spellings.BY_OP_TYPE if isinstance(KERNELS.get(t), np.ufunc))
