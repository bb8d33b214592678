"""Gradient sub-graphs: the bodies of a gradient ``If`` or ``While``, which read forward values.

The gradient of a branch or a loop body is built from that body's ops, but
it runs in another graph: a ``GradGraph``, a sub-graph of the graph the
gradient goes into, standing beside the *forward* body it differentiates.
Reading a tensor of the forward body there (``backprop.value`` captures
it) cannot be a plain capture -- the forward body does not enclose it --
so the gradient graph asks its ``expose`` callback for a value standing for
it: for an ``If``, an extra output of the forward ``If`` (``cond_grad.py``);
for a ``While``, the entry of this iteration in an accumulator the forward
loop fills (``while_grad.py``); a constant is copied instead.  Exposures are
made once per tensor.  A tensor of a forward body of an enclosing gradient graph is passed up to that
one (nested control flow), and anything else is a plain capture.
"""

from __future__ import annotations

from autograph.runtime.core.graph import Graph
from autograph.runtime.ops import apply


class GradGraph(Graph):
    """A sub-graph of ``outer`` computing the gradient of ``forward`` (see the module docstring).

    ``expose(tensor)`` gives, for a tensor of ``forward``, a tensor of this
    graph or of an enclosing one (or of the forward body of an enclosing
    gradient graph) that has its value.
    """

    def __init__(self, name, outer, forward, expose):
        super().__init__(name, outer=outer)
        self.forward = forward
        self.expose = expose
        self._exposed: dict = {}

    def has_exposed(self, tensor) -> bool:
        """True if forward tensor ``tensor`` has a value in this graph already."""
        return id(tensor) in self._exposed

    def capture(self, tensor):
        if tensor.op.graph is self.forward and tensor.op.type == "Const":  # copied, never exposed
            found = self._exposed.get(id(tensor))
            if found is None:
                with self.as_default():
                    copy = apply.constant(tensor.op.attrs["value"], weak=tensor.weak)
                found = self._exposed[id(tensor)] = (tensor, copy)
            return found[1]
        if tensor.op.graph is self.forward:
            found = self._exposed.get(id(tensor))
            if found is None:
                found = self._exposed[id(tensor)] = (tensor, self.expose(tensor))
            tensor = found[1]
            if tensor.op.graph is self:
                return tensor
        if self.encloses(tensor.op.graph):
            return super().capture(tensor)
        if isinstance(self.outer, GradGraph):
            return super().capture(self.outer.capture(tensor))
        return super().capture(tensor)  # the error for a tensor of an unrelated graph
