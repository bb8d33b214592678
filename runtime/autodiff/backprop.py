"""Reverse-mode differentiation over the graph IR: the gradient ops of ``ys`` with respect to
``xs``, added to the current graph.

``gradients(ys, xs, grad_ys)`` walks the operations of the forward graph
(the one holding ``ys``) backwards from ``ys``, over the ops that lie on a
path from ``xs`` to ``ys`` through floating-point tensors only, and for each
one applies its rule from ``registry.GRADIENTS`` to the cotangents of its
outputs.  The cotangents of a tensor used several times are added up; a
rule's result is summed down to its input's shape (undoing broadcasting:
``fit``) and cast to its input's dtype, here, once for every op.

The gradient ops go into the *current* graph.  Usually that is the forward
graph itself; inside the gradient of an ``If`` or a ``While`` it is a
gradient sub-graph (``grad_graph.GradGraph``) in which reading a forward
tensor (``Forward.value``) exposes it (``cond_grad.py``, ``while_grad.py``).

An op on such a path whose type has no rule (and is not declared
``NOT_DIFFERENTIABLE``) is a ``TracingError`` naming the op type and the
user's ``file:line``.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime import ops
from autograph.runtime.autodiff import registry
from autograph.runtime.core import shapes
from autograph.runtime.core.graph import current_graph
from autograph.runtime.errors import TracingError
from autograph.runtime.ops import nn


class Exact:
    """A rule's cotangent that has its input's shape by construction (``x[:-1]`` of the output's, a
    unary op's): the walker does not sum it down, so it needs no shape read from the forward pass."""

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor


def differentiable(t) -> bool:
    """Floating-point tensors carry cotangents; integers and bools do not."""
    return t.dtype.kind == "f"


def value(t):
    """Forward tensor ``t`` as a value of the current graph (captured or exposed if it is not in it)."""
    graph = current_graph()
    return t if t.op.graph is graph else graph.capture(t)


class Forward:
    """The forward op as a gradient rule reads it (``registry.py``)."""

    __slots__ = ("op", "attrs", "inputs", "outputs", "wanted")

    def __init__(self, op, wanted):
        self.op = op
        self.attrs = op.attrs
        self.inputs = op.inputs
        self.outputs = op.outputs
        self.wanted = wanted

    def x(self, i):
        return value(self.op.inputs[i])

    def y(self, i):
        return value(self.op.outputs[i])

    @staticmethod
    def value(t):
        return value(t)

    def wants(self, i) -> bool:
        return i in self.wanted


def zeros_for(t):
    """Zeros of forward tensor ``t``'s dtype and shape (a constant when its shape is static)."""
    if shapes.is_fully_defined(t.shape):
        return ops.zeros(t.shape, t.dtype)
    return ops.zeros(dims_of(t), t.dtype)


def dims_of(t):
    """The shape of forward tensor ``t`` as an int32 value: a constant when static, else its shape
    computed beside it, in its own graph, and only that read here (a loop stacks the shape of a
    value whose gradient needs nothing else of it -- a staged list growing -- not the value)."""
    if shapes.is_fully_defined(t.shape):
        return np.asarray(t.shape, np.int32)
    graph = t.op.graph
    if graph is current_graph():
        return ops.shape(t)
    made = graph.__dict__.setdefault("_autodiff_shapes", {})  # id -> (tensor, its Shape): one per tensor
    found = made.get(id(t))
    if found is None or found[0] is not t:
        with graph.as_default():
            found = made[id(t)] = (t, ops.shape(t))
    return value(found[1])


def gradients(ys, xs, grad_ys=None, recorded=None) -> list:
    """Cotangents of ``xs`` (``None`` where no differentiable path leads to ``ys``).

    ``grad_ys`` are the cotangents of ``ys`` (default ones; ``None`` items: that
    output is not differentiated); ``ys`` and ``xs`` belong to one forward graph.
    ``recorded``: if given, the ids of the only ops paths may go through (a tape's).
    """
    ys, xs = list(ys), list(xs)
    grad_ys = [None] * len(ys) if grad_ys is None else list(grad_ys)
    forward = _forward_graph(ys, xs)
    on_path, reached = _path(forward, xs, ys, recorded)
    cotangents: dict = {}
    for y, g in zip(ys, grad_ys):
        if id(y) in reached:
            _accumulate(cotangents, y, _ones_for(y) if g is None else g)
    for op in on_path:
        grads = [cotangents.get(id(t)) for t in op.outputs]
        if all(g is None for g in grads):
            continue
        rule = registry.GRADIENTS.get(op.type)
        if rule is None:
            raise TracingError(_no_rule_message(op))
        inputs = list(op.inputs)  # a While's rule adds inputs to the forward op (while_grad.py)
        wanted = {i for i, t in enumerate(inputs) if id(t) in reached}
        results = rule(Forward(op, wanted), grads)
        for i in sorted(wanted):
            found = results[i]
            if isinstance(found, Exact):
                found = found.tensor if found.tensor.dtype == inputs[i].dtype else ops.cast(found.tensor, inputs[i].dtype)
                _accumulate(cotangents, inputs[i], found)
            elif found is not None:
                _accumulate(cotangents, inputs[i], fit(found, inputs[i]))
    return [cotangents.get(id(x)) for x in xs]


def _forward_graph(ys, xs):
    graphs = {id(t.op.graph): t.op.graph for t in ys + xs}
    if len(graphs) != 1:
        names = ", ".join(sorted(g.name for g in graphs.values()))
        raise TracingError(f"gradients: the targets and the sources belong to different graphs ({names}); "
                           "differentiate inside the function that computes them")
    return next(iter(graphs.values()))


def _path(graph, xs, ys, recorded=None):
    """(ops on a differentiable path from ``xs`` to ``ys``, last first; ids of tensors reached from ``xs``)."""
    reached = {id(x) for x in xs if differentiable(x)}
    for op in graph.operations:
        if recorded is not None and id(op) not in recorded:
            continue
        if op.type not in registry.NOT_DIFFERENTIABLE and any(id(t) in reached for t in op.inputs):
            reached.update(id(t) for t in op.outputs if differentiable(t))
    needed = {id(y) for y in ys}
    on_path = []
    for op in reversed(list(graph.operations)):
        if op.type in registry.NOT_DIFFERENTIABLE or not op.inputs:  # no inputs: a source (ReadVariable, ...)
            continue
        if any(id(t) in needed and id(t) in reached for t in op.outputs):
            on_path.append(op)
            needed.update(id(t) for t in op.inputs)
    return on_path, reached


def _accumulate(cotangents, t, g):
    found = cotangents.get(id(t))
    cotangents[id(t)] = g if found is None else ops.add(found, g)


def _ones_for(t):
    if shapes.is_fully_defined(t.shape):
        return ops.ones(t.shape, t.dtype)
    return ops.ones_like(value(t))


def fit(g, x):
    """Cotangent ``g`` as the cotangent of forward tensor ``x``: its dtype, summed down to its shape."""
    if g.dtype != x.dtype:
        g = ops.cast(g, x.dtype)
    if shapes.is_fully_defined(x.shape) and shapes.is_fully_defined(g.shape):
        if g.shape == x.shape:
            return g
        if len(g.shape) < len(x.shape):  # a rule gave a cotangent that broadcasts to its input
            return ops.add(g, ops.zeros(x.shape, g.dtype))
        lead = len(g.shape) - len(x.shape)
        axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(x.shape) if d == 1 and g.shape[lead + i] != 1)
        if axes:
            g = ops.reduce_sum(g, axis=axes, keepdims=True)
        return ops.reshape(g, x.shape)
    return nn.sum_to_shape(g, dims_of(x))


def _no_rule_message(op) -> str:
    why = registry.WITHOUT_RULE.get(op.type, "add its rule to the table in runtime/autodiff")
    return (f"cannot differentiate the {op.type} op '{op.name}' created at {op.location or '<unknown>'}: op type "
            f"{op.type} has no gradient rule. Keep it off the path from the sources to the target (compute it "
            f"from values that are not differentiated); {why}.")
