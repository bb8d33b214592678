"""Constant folding: ops whose inputs are all ``Const`` become ``Const``.

Before / after::

    %c = Const 2.0 ; %d = Const 3.0 ; %m = Mul(%c, %d) ; %y = Add(%x, %m)
    %m = Const 6.0 ;                                     %y = Add(%x, %m)

Rules by op type, default rule ``_fold``: run the op's registered kernel on
the constant values, exactly as the executor would.  Folding is lazy: an op
is left alone if it is stateful, if its kernel fails or would warn (under
``np.errstate(all="raise")``, which is per thread: the error or warning must
still happen at run time, where it is reported with the user's line, and
only if the program gets there -- ``where(d != 0, x / d, 0)`` with a
constant ``d = 0`` never warns while optimizing), if it would warn through
Python's ``warnings`` (a reduction of an empty array: not folded), if the result's dtype differs from the inferred
one, or if the result is large (judged before running the kernel, from the
static shape or the values: folding would only bloat the graph, and the
branch computing it may never run).

``Shape``/``Size`` of a value with a fully known static shape fold too.
``If`` with a constant predicate is replaced by the taken branch (inlined).
Constant arguments of an ``If`` are pushed into both branches so that
folding continues inside them (neither is done to a function other ops call
too, ``graph_util.is_shared``); sub-graphs are folded by the driver, which
runs every pass on every sub-graph.  A ``While`` whose condition is false on
its (constant) initial values disappears: its outputs are its inputs.
"""

from __future__ import annotations

import math

import numpy as np

from autograph.runtime.core import backend, opdef, shapes
from autograph.runtime.exec import limits
from autograph.runtime.optimizer import graph_util, hazards, inline
from autograph.runtime.optimizer.rewrite import rewrite

MAX_FOLDED_ELEMENTS = 1 << 14

_NEVER = frozenset({"Placeholder", "Const"})


def _may_warn_or_grow(op, values) -> bool:
    """Whether running ``op``'s kernel on ``values`` may warn through Python's ``warnings``
    (which cannot be caught without changing every thread's filters) or has a large
    static result."""
    if not hazards.never_fails(op) and any(np.size(v) == 0 for v in values):
        return True  # numpy warns about reductions of empty arrays (``Mean``)
    return any(
        t.shape is not None and None not in t.shape and math.prod(t.shape) > MAX_FOLDED_ELEMENTS for t in op.outputs
    )


def run_kernel(op, values):
    """Outputs of ``op`` computed from numpy ``values``, or None if they must not be folded."""
    definition = opdef.REGISTRY.get(op.type)
    kernel = backend.get().kernels.get(op.type)
    if definition is None or definition.stateful or kernel is None or _may_warn_or_grow(op, values):
        return None
    try:
        size = limits.SIZE_RULES.get(op.type)  # an op that may grow: its result's size, before it runs
        if size is not None and size(values, op.attrs) > MAX_FOLDED_ELEMENTS:
            return None
        with np.errstate(all="raise"):  # (numpy's floating-point errors raise instead of warning)
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
    values = []
    for t in op.inputs:  # (a loop: stops at the first input no Const makes)
        value = graph_util.const_value(t)
        if value is None:
            return None
        values.append(value)
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
        return None if graph_util.is_shared(taken) else inline.inline(rw, op, taken, args)
    for branch in (then_graph, else_graph):
        if not graph_util.is_shared(branch) and _push_constants(branch, args):
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
