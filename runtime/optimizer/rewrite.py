"""The walker every pass uses: one rule per op type, applied in graph order.

``rewrite(graph, rules, default)`` visits the operations of ``graph`` in
order.  Before a rule sees an op, the op's inputs and control inputs are
resolved through the substitutions made so far, so a rule always sees the
rewritten graph.  A rule returns either

* ``None``: keep the op as it is, or
* a list of tensors: the op disappears and each of its outputs is replaced
  by the tensor at the same position.

Rules may add new operations (``rw.emit``) before the op they rewrite, e.g.
a folded ``Const``.  A removed op that took part in the chain of stateful
ops (control inputs) is replaced in that chain by ``rw.replace_control``'s
ops, or else by its own control inputs, so the order of side effects stays
intact.  At the end, the graph's outputs, ``last_stateful`` and the
``captures`` of the sub-graphs it calls are resolved too.
"""

from __future__ import annotations

from typing import Callable

from autograph.runtime.optimizer import graph_util
from autograph.runtime.core.tensor import Tensor

Rule = Callable[["Rewriter", object], "list | None"]


class Rewriter:
    """Substitution state of one walk over one graph."""

    __slots__ = ("graph", "subst", "control", "chain_ends", "kept", "changed")

    def __init__(self, graph):
        self.graph = graph
        self.subst: dict[int, Tensor] = {}
        self.control: dict[int, list] = {}
        # id(removed op) -> the op that ends the stateful chain where it did (None: no op), when that
        # is not the last of what stands for it in control edges (an inlined If: replace_control)
        self.chain_ends: dict[int, object] = {}
        self.kept: list = []
        self.changed = False

    def resolve(self, tensor):
        """The tensor now standing for ``tensor``."""
        found = self.subst.get(id(tensor))
        while found is not None:
            tensor = found
            found = self.subst.get(id(tensor))
        return tensor

    def resolve_control(self, ops) -> tuple:
        """Control inputs after removals, deduplicated, order kept."""
        out = []
        for op in ops:
            replacement = self.control.get(id(op))
            for r in (self.resolve_control(replacement) if replacement is not None else [op]):
                if all(r is not o for o in out):
                    out.append(r)
        return tuple(out)

    def emit(self, op) -> None:
        """Places a new op (made with ``graph_util.new_op``) before the current one."""
        self.kept.append(op)
        self.changed = True

    def const(self, value, like):
        """A new ``Const`` holding ``value`` (numpy array) in place of tensor ``like``:
        located like its op, weakly typed if it is."""
        op = graph_util.const_op(self.graph, value, like.weak, location=like.op.location)
        self.emit(op)
        return op.outputs[0]

    def replace_control(self, op, ops, chain_end=...) -> None:
        """In control edges, removed ``op`` stands for ``ops`` from now on; ``chain_end``: the op
        that ends the stateful chain in its place, if not the last of ``ops``."""
        self.control[id(op)] = list(ops)
        if chain_end is not ...:
            self.chain_ends[id(op)] = chain_end

    def chain_end(self, op):
        """The op ending the stateful chain where ``op`` ended it (``op`` unless it was removed)."""
        while op is not None and id(op) in self.chain_ends:
            op = self.chain_ends[id(op)]
        if op is None:
            return None
        chain = self.resolve_control([op])
        return chain[-1] if chain else None

    def _remove(self, op, tensors) -> None:
        if len(tensors) != len(op.outputs):
            raise ValueError(f"rule for {op.type} returned {len(tensors)} tensors for {len(op.outputs)} outputs")
        for old, new in zip(op.outputs, tensors):
            if new is not old:
                self.subst[id(old)] = new
        if id(op) not in self.control:
            self.control[id(op)] = list(op.control_inputs)
        self.changed = True


def has_rule(graph, rules) -> bool:
    """Whether an op of ``graph`` has a rule in ``rules``."""
    for op in graph.operations:  # (a loop, not any() of a generator: every pass asks it of every graph)
        if op.type in rules:
            return True
    return False


def rewrite(graph, rules: dict[str, Rule], default: Rule | None = None) -> bool:
    """Applies ``rules`` (by op type, else ``default``) to ``graph``; True if it changed."""
    if default is None and not has_rule(graph, rules):
        return False  # no op has a rule (licm on a graph without a loop)
    rw = Rewriter(graph)
    for op in list(graph.operations):
        if rw.subst:
            op.inputs = [rw.resolve(t) for t in op.inputs]
        if op.control_inputs and rw.control:
            op.control_inputs = rw.resolve_control(op.control_inputs)
        rule = rules.get(op.type, default)
        result = rule(rw, op) if rule is not None else None
        if result is None:
            rw.kept.append(op)
        else:
            rw._remove(op, result)
    if rw.changed:
        finish(rw)
    return rw.changed


def finish(rw: Rewriter) -> None:
    """Installs the kept ops and resolves everything that points into the graph."""
    graph = rw.graph
    graph.operations = rw.kept
    graph.outputs = [rw.resolve(t) if isinstance(t, Tensor) else t for t in graph.outputs]
    if graph.last_stateful is not None:
        graph.last_stateful = rw.chain_end(graph.last_stateful)
    for op in graph.operations:
        for sub in graph_util.subgraphs(op):
            sub.set_captures((rw.resolve(o), i) for o, i in sub.captures)
