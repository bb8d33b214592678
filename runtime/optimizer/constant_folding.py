"""Constant folding: ops whose inputs are all ``Const`` become ``Const``.

Before / after::

    %c = Const 2.0 ; %d = Const 3.0 ; %m = Mul(%c, %d) ; %y = Add(%x, %m)
    %m = Const 6.0 ;                                     %y = Add(%x, %m)

Rules by op type, default rule ``_fold``: run the op's registered kernel on
the constant values, exactly as the executor would.  An op is left alone if
it is stateful, if its kernel fails or warns (the error must still happen at
run time, where it is reported with the user's line), if the result's dtype
differs from the inferred one, or if the result is large (folding would only
bloat the graph).

``Shape``/``Size`` of a value with a fully known static shape fold too.
``If`` with a constant predicate is replaced by the taken branch (inlined).
Constant arguments of an ``If`` are pushed into both branches so that
folding continues inside them; sub-graphs are folded by the driver, which
runs every pass on every sub-graph.  A ``While`` whose condition is false on
its (constant) initial values disappears: its outputs are its inputs.
"""

from __future__ import annotations

import warnings

import numpy as np

from autograph.runtime.core import backend, opdef, shapes
from autograph.runtime.optimizer import graph_util, inline
from autograph.runtime.optimizer.rewrite import rewrite

MAX_FOLDED_ELEMENTS = 1 << 14

_NEVER = frozenset({"Placeholder", "Const"})


def run_kernel(op, values):
    """Outputs of ``op`` computed from numpy ``values``, or None if they must not be folded."""
    definition = opdef.REGISTRY.get(op.type)
    kernel = backend.get().kernels.get(op.type)
    if definition is None or definition.stateful or kernel is None:
        return None
    try:
        with warnings.catch_warnings(), np.errstate(all="raise"):
            warnings.simplefilter("error")
            result = kernel(*values, **op.attrs)
    except Exception:
        return None
    results = result if len(op.outputs) > 1 else (result,)
    arrays = []
    for value, out in zip(results, op.outputs):
        array = np.array(value)  # a copy: never a view of another constant
        if array.dtype != out.dtype or array.size > MAX_FOLDED_ELEMENTS:
            return None
        arrays.append(array)
    return arrays if len(arrays) == len(op.outputs) else None


def _fold(rw, op):
    if op.type in _NEVER or graph_util.is_stateful(op) or graph_util.is_functional(op):
        return None
    values = [graph_util.const_value(t) for t in op.inputs]
    if any(v is None for v in values):
        return None
    arrays = run_kernel(op, values)
    if arrays is None:
        return None
    return [rw.const(a, out) for a, out in zip(arrays, op.outputs)]


def _fold_if(rw, op):
    then_graph, else_graph = graph_util.subgraphs(op)
    args = op.inputs[1:]
    pred = graph_util.const_value(op.inputs[0])
    if pred is not None:
        taken = then_graph if bool(pred) else else_graph
        return inline.inline(rw, op, taken, args)
    for branch in (then_graph, else_graph):
        if _push_constants(branch, args):
            rw.changed = True
    return None


def _push_constants(graph, args) -> bool:
    """Replaces uses of placeholders whose argument is constant by a local ``Const``."""
    mapping = {}
    consts = []
    used = graph_util.used_tensors(graph)
    for placeholder, arg in zip(graph.all_inputs, args):
        value = graph_util.const_value(arg)
        if value is None or id(placeholder) not in used:
            continue
        const = graph_util.const_op(graph, value, arg.weak, location=arg.op.location)
        consts.append(const)
        mapping[id(placeholder)] = const.outputs[0]
    if mapping:
        inline.substitute(graph, mapping)
        graph.operations[0:0] = consts
    return bool(mapping)


def _fold_while(rw, op):
    cond = graph_util.subgraphs(op)[0]
    if graph_util.graph_is_stateful(cond):  # the condition's side effects happen even if it is false
        return None
    known = {id(p): graph_util.const_value(a) for p, a in zip(cond.all_inputs, op.inputs)}
    outputs = evaluate(cond, known)
    if len(outputs) != 1 or outputs[0] is None or bool(outputs[0]):
        return None
    return list(op.inputs[: len(op.outputs)])


def evaluate(graph, known: dict) -> list:
    """Partially evaluates ``graph``: the value of each output, or None if unknown.

    ``known`` maps placeholder ids to values (None: unknown).  Only stateless
    ops without sub-graphs are evaluated.
    """
    env = dict(known)
    for op in graph.operations:
        if op.type == "Placeholder":
            continue
        if op.type == "Const":
            env[id(op.outputs[0])] = op.attrs["value"]
            continue
        if graph_util.is_stateful(op) or graph_util.is_functional(op):
            continue
        values = [env.get(id(t)) for t in op.inputs]
        if any(v is None for v in values):
            continue
        arrays = run_kernel(op, values)
        if arrays is not None:
            for out, value in zip(op.outputs, arrays):
                env[id(out)] = value
    return [env.get(id(t)) for t in graph.outputs]


def _fold_static_shape(rw, op):
    """``Shape``/``Size`` of a value whose static shape is fully known."""
    x = op.inputs[0]
    if not shapes.is_fully_defined(x.shape) or graph_util.is_stateful(op):
        return _fold(rw, op)
    stand_in = np.broadcast_to(np.zeros((), x.dtype), x.shape)  # no memory: only the shape matters
    arrays = run_kernel(op, [stand_in])
    return None if arrays is None else [rw.const(a, out) for a, out in zip(arrays, op.outputs)]


RULES = {"If": _fold_if, "While": _fold_while, "Shape": _fold_static_shape, "Size": _fold_static_shape}


def run(graph) -> bool:
    """Folds constants in ``graph`` (not its sub-graphs); True if it changed."""
    return rewrite(graph, RULES, _fold)
