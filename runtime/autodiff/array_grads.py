"""Gradient rules of the array ops: identity, casts, reshapes, selection, joining, gathering and
slicing (``registry.py`` says what a rule is)."""

from __future__ import annotations

import numpy as np

from autograph.runtime import ops
from autograph.runtime.autodiff import registry
from autograph.runtime.autodiff.backprop import Exact, dims_of, zeros_for
from autograph.runtime.errors import TracingError
from autograph.runtime.ops import apply, array, effects, indexing, nn


def _same(fwd, grads):
    return [Exact(grads[0])]


def _reshape(fwd, grads):
    return [Exact(ops.reshape(grads[0], dims_of(fwd.inputs[0]))), None]


def _select(fwd, grads):
    g = grads[0]
    chosen, zeros = fwd.x(0), ops.zeros_like(g)
    return [None, ops.where(chosen, g, zeros) if fwd.wants(1) else None,
            ops.where(chosen, zeros, g) if fwd.wants(2) else None]


def _choose(fwd, grads):
    """``Choose`` (``x if pred else y``, an ``If`` lowered by the optimizer): the cotangent goes to the
    value chosen."""
    g = grads[0]
    pred, zeros = fwd.x(0), ops.zeros_like(g)
    return [None, apply.apply_op("Choose", [pred, g, zeros]) if fwd.wants(1) else None,
            apply.apply_op("Choose", [pred, zeros, g]) if fwd.wants(2) else None]


def _range(fwd, grads):
    """``Range`` (float): element ``k`` is ``start + k * delta``; ``limit`` only sets the length
    (piecewise constant: no gradient)."""
    g = grads[0]
    k = ops.cast(array.tensor_range(ops.size(g)), g.dtype)
    return [ops.reduce_sum(g) if fwd.wants(0) else None, None,
            ops.reduce_sum(ops.multiply(g, k)) if fwd.wants(2) else None]


def _rank_of(fwd):
    shape = fwd.outputs[0].shape
    if shape is None:
        raise _needs_rank(fwd)
    return len(shape)


def _needs_rank(fwd):
    return TracingError(f"the gradient of {fwd.op.type} at {fwd.op.location or '<unknown>'} needs tensors of known "
                        "rank; give the inputs static ranks (an input_signature with None dimensions)")


def _concat(fwd, grads):
    g = grads[0]
    rank = _rank_of(fwd)
    axis = fwd.attrs["axis"] % rank
    start, results = 0, []
    for i, t in enumerate(fwd.inputs):
        size = t.shape[axis] if t.shape is not None and t.shape[axis] is not None else ops.shape(fwd.x(i))[axis]
        stop = start + size
        key = (slice(None),) * axis + (slice(start, stop),)
        results.append(Exact(indexing.getitem(g, key)) if fwd.wants(i) else None)
        start = stop
    return results


def _pack(fwd, grads):
    g = grads[0]
    axis = fwd.attrs["axis"] % _rank_of(fwd)
    return [Exact(indexing.getitem(g, (slice(None),) * axis + (i,))) if fwd.wants(i) else None
            for i in range(len(fwd.inputs))]


def _gather(fwd, grads):
    params = fwd.inputs[0]
    if params.shape is None:
        raise _needs_rank(fwd)
    axis = fwd.attrs["axis"] % len(params.shape)
    return [Exact(nn.scatter_add(grads[0], fwd.x(1), dims_of(params), axis)), None]


def _strided_slice(fwd, grads):
    dynamic = [fwd.x(i) for i in range(1, len(fwd.inputs))]
    attrs = {"key": fwd.attrs["spec"], "operator": "=", "python_value": False,
             "where": f"the gradient of x[...] at {fwd.op.location or '<unknown>'}"}
    d = apply.apply_op("SetItem", [zeros_for(fwd.inputs[0]), grads[0], *dynamic], attrs)
    return [Exact(d)] + [None] * len(dynamic)


def _transpose(fwd, grads):
    perm = fwd.attrs["perm"]
    if perm is None:
        return [Exact(array.transpose(grads[0]))]
    rank = len(perm)
    return [Exact(array.transpose(grads[0], tuple(int(i) for i in np.argsort([p % rank for p in perm]))))]


def _py_function(fwd, grads):
    """``rt.py_function(..., grad=g)``: ``g(*inputs, *output cotangents)`` in a py_function of its own."""
    grad_fn, name = fwd.attrs.get("grad"), fwd.attrs["func_name"]
    if grad_fn is None:
        raise TracingError(f"cannot differentiate the rt.py_function {name!r} at {fwd.op.location or '<unknown>'}: it "
                           "has no gradient function, and autograph cannot see inside Python code. Pass one "
                           "(rt.py_function(..., grad=g), g(*inputs, *output_cotangents) -> input cotangents), or "
                           "keep the py_function off the path from the sources to the target.")
    inputs = fwd.inputs
    cotangents = [zeros_for(t) if g is None else g for g, t in zip(grads, fwd.outputs)]

    def run(*values):
        results = grad_fn(*values)
        results = list(results) if isinstance(results, (list, tuple)) else [results]
        if len(results) != len(inputs):
            raise ValueError(f"the gradient function of py_function {name!r} returned {len(results)} value(s) for "
                             f"{len(inputs)} input(s)")
        return [np.zeros(np.shape(v), t.dtype) if r is None else r for r, v, t in zip(results, values, inputs)]

    found = effects.py_function(run, [fwd.x(i) for i in range(len(inputs))] + cotangents,
                                [t.dtype for t in inputs], shape=[t.shape for t in inputs], name=f"{name}_grad")
    return [found[i] if fwd.wants(i) else None for i in range(len(inputs))]


def _fill(fwd, grads):
    return [None, ops.reduce_sum(grads[0])]


def _ensure(fwd, grads):
    return [Exact(grads[0]), None]


def _set_item(fwd, grads):
    """``x[key] = v`` / ``+=`` / ``-=`` with a basic key: the item's cotangent goes to ``v``, the rest to ``x``."""
    key, operator, where = fwd.attrs["key"], fwd.attrs["operator"], fwd.attrs["where"]
    if operator not in ("=", "+=", "-=") or any(item[0] == "array" for item in key):
        what = "an index array" if operator in ("=", "+=", "-=") else f"the operator {operator}"
        raise TracingError(f"cannot differentiate {where}: the gradient of an item assignment with {what} is not "
                           "supported; build the new tensor with rt.where(mask, new, x) instead")
    g = grads[0]
    dynamic = [fwd.x(i) for i in range(2, len(fwd.inputs))]
    dx = g
    if operator == "=":
        attrs = {"key": key, "operator": "=", "python_value": False, "where": f"the gradient of {where}"}
        dx = apply.apply_op("SetItem", [g, np.zeros((), g.dtype), *dynamic], attrs)
    dv = None
    if fwd.wants(1):
        dv = apply.apply_op("StridedSlice", [g, *dynamic], {"spec": key})
        dv = ops.negative(dv) if operator == "-=" else dv
    return [Exact(dx), dv] + [None] * len(dynamic)


def _list_append(fwd, grads):
    g = grads[0]
    return [Exact(indexing.getitem(g, slice(None, -1))) if fwd.wants(0) else None,
            Exact(indexing.getitem(g, -1)) if fwd.wants(1) else None]


registry.register({
    "Identity": _same,
    "Cast": _same,
    "Reshape": _reshape,
    "Select": _select,
    "ConcatV2": _concat,
    "Pack": _pack,
    "GatherV2": _gather,
    "StridedSlice": _strided_slice,
    "Transpose": _transpose,
    "ListAppend": _list_append,
    "PyFunc": _py_function,
    "Fill": _fill,
    "Ensure": _ensure,
    "SetItem": _set_item,
    "Choose": _choose,
    "Range": _range,
})
