"""The gradient of ``If`` (TensorFlow's cond_v2): an ``If`` on the same predicate over the
branches' gradient graphs.

For each branch, a ``GradGraph`` runs the walker (``backprop.gradients``)
over the branch's ops, from the cotangents of the ``If``'s outputs to the
branch inputs that want one.  A forward value a branch's gradient reads is
*exposed*: a branch input is the ``If``'s own input; an intermediate becomes
one more output of the forward ``If`` (appended to the op and to both
branches: this branch returns the value, the other one zeros of its shape,
unknown dimensions as 0 -- the gradient taking that other branch never
reads it).  A branch that does not depend on an input gives zeros for it.
The gradient ``If`` captures what either gradient branch needs, as any
``If`` does (``tracing.values.unify_captures``).
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.autodiff import backprop, registry
from autograph.runtime.autodiff.grad_graph import GradGraph
from autograph.runtime.core import shapes
from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.ops import apply
from autograph.runtime.tracing.values import emit, unify_captures


class _Exposer:
    """Makes forward values of one ``If``'s branches available to their gradient graphs."""

    def __init__(self, op, branches):
        self.op = op
        self.branches = branches

    def of(self, branch):
        return lambda t: self.expose(branch, t)

    def expose(self, branch, t):
        for k, placeholder in enumerate(branch.all_inputs):
            if placeholder is t:
                return self.op.inputs[1 + k]
        dims = () if t.shape is None else tuple(0 if d is None else d for d in t.shape)
        for b in self.branches:
            if b is branch:
                b.outputs.append(t)
            else:
                with b.as_default():
                    b.outputs.append(apply.constant(np.zeros(dims, t.dtype)))
        out = Tensor(self.op, len(self.op.outputs), t.dtype, shapes.relax(t.shape, dims))
        self.op.outputs.append(out)
        return out


def _branch_gradient(outer, branch, exposer, grads, wanted):
    """The gradient graph of ``branch``: cotangents of the inputs ``wanted`` (indices of op inputs)."""
    graph = GradGraph(f"{branch.name}_grad", outer, branch, exposer.of(branch))
    with graph.as_default():
        pairs = [(y, g) for y, g in zip(branch.outputs, grads) if g is not None]
        xs = [branch.all_inputs[i - 1] for i in wanted]
        results = backprop.gradients([y for y, _ in pairs], xs, [g for _, g in pairs])
        graph.outputs = [backprop.zeros_for(x) if r is None else backprop.value(r) for r, x in zip(results, xs)]
    return graph


def if_gradient(fwd, grads):
    op = fwd.op
    library = op.graph.library
    branches = [library[op.attrs["then_branch"]], library[op.attrs["else_branch"]]]
    n_outputs = len(op.outputs)  # before any exposure adds outputs
    grads = list(grads[:n_outputs])
    wanted = sorted(i for i in fwd.wanted if i > 0)
    outer = current_graph()
    exposer = _Exposer(op, branches)
    graphs = [_branch_gradient(outer, b, exposer, grads, wanted) for b in branches]
    captured = unify_captures(graphs)
    attrs = {"then_branch": outer.add_function(graphs[0], "if_true_grad"),
             "else_branch": outer.add_function(graphs[1], "if_false_grad")}
    results = emit("If", [fwd.x(0), *captured], attrs, graphs)
    found = dict(zip(wanted, results))
    return [found.get(i) for i in range(len(op.inputs))]


registry.register({"If": if_gradient})
