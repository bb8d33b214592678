"""Short-circuit ``If``s that need no branching: the ``If`` of a bool ``and``/``or`` becomes ``LogicalAnd``/``LogicalOr``.

``a and b`` with a tensor ``a`` is traced as an ``If`` (``operators/logical.py``),
so ``b`` runs only when Python would evaluate it.  When ``b`` is a cheap
scalar expression that can neither fail nor act, evaluating it always gives
the same result more cheaply, and this pass inlines it::

    %r = If(%a, %x)  then: Greater(%x, 0)  else: %a        (a and x > 0)

    %g = Greater(%x, 0)
    %r = LogicalAnd(%a, %g)

A rule for ``If`` (``_logical``) fires when the predicate and the result are
bool scalars, the ``If`` has one output and no control inputs, one branch
passes the predicate through (the else branch: ``and``; the then branch:
``or``), and the other holds only ``TOTAL_OPS`` on scalars, statelessly.
Its ops are copied in (``inline.copy_in``: the branch may be shared).  The
pass runs first, on the graphs as traced, so the rest of the pipeline sees
what tracing used to emit directly.
"""

from __future__ import annotations

from autograph.runtime.core import dtypes, opdef
from autograph.runtime.optimizer import graph_util, inline
from autograph.runtime.optimizer.rewrite import rewrite

# Ops that cannot fail and have no side effects: a lazy operand computed only
# with these, on scalars, needs no If.
TOTAL_OPS = frozenset({
    "Const", "Identity", "Cast", "Add", "Sub", "Mul", "Neg", "Abs", "Square", "Maximum", "Minimum",
    "Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual",
    "LogicalAnd", "LogicalOr", "LogicalNot",
})


def _passes_through(branch, pred, args) -> bool:
    """Whether ``branch`` returns its argument standing for ``pred``."""
    out = branch.outputs[0]
    return any(p is out and a is pred for p, a in zip(branch.all_inputs, args))


def _total(branch) -> bool:
    """Only ``TOTAL_OPS`` on scalars, a bool scalar result, nothing stateful."""
    if graph_util.graph_is_stateful(branch) or len(branch.outputs) != 1:
        return False
    out = branch.outputs[0]
    if out.dtype != dtypes.bool_ or out.shape != ():
        return False
    for op in branch.operations:
        if op.type != "Placeholder" and op.type not in TOTAL_OPS:
            return False
        if any(t.shape != () for t in op.outputs):
            return False
    return True


def _logical(rw, op):
    pred, args = op.inputs[0], op.inputs[1:]
    if len(op.outputs) != 1 or op.control_inputs:
        return None
    out = op.outputs[0]
    if pred.dtype != dtypes.bool_ or pred.shape != () or out.dtype != dtypes.bool_ or out.shape != ():
        return None
    then_graph, else_graph = graph_util.subgraphs(op)
    if _passes_through(else_graph, pred, args) and _total(then_graph):
        operand, logical = then_graph, "LogicalAnd"
    elif _passes_through(then_graph, pred, args) and _total(else_graph):
        operand, logical = else_graph, "LogicalOr"
    else:
        return None
    local = {id(p): a for p, a in zip(operand.all_inputs, args)}
    inline.copy_in(rw, [o for o in operand.operations if o.type != "Placeholder"], local)
    result = graph_util.new_op(rw.graph, logical, [pred, local[id(operand.outputs[0])]], {},
                               [(out.dtype, out.shape, out.weak)], location=op.location, name=opdef.default_name(logical))
    rw.emit(result)
    return result.outputs


RULES = {"If": _logical}


def run(graph) -> bool:
    """Turns the short-circuit ``If`` ops of ``graph`` that need no branching into logical ops."""
    return rewrite(graph, RULES)
