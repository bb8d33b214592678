"""Tracing a tensor loop: condition and body into sub-graphs, one ``While`` op (``build_while``).

The rules (loop-variable dtypes and shapes, Python values, staged lists,
retracing) are stated in ``autograph.runtime.tracing``'s docstring.  This
module traces one round (``_trace_cond``, ``_trace_body``) and emits the
op; what each loop value is and becomes is ``loop_slots``, the dtype of a
weakly typed counter ``weak_loop_vars``, and the rounds themselves
``retrace.settle``.
"""

from __future__ import annotations

from autograph.runtime import ops
from autograph.runtime.core import shapes
from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.scoped import ScopedMap
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.errors import TracingError
from autograph.runtime.ops import apply
from autograph.runtime.ops.list_operators import StagedList
from autograph.runtime.tracing import retrace, weak_loop_vars
from autograph.runtime.tracing.loop_slots import (
    Slot, as_invariant, body_output, classify, initial_tensor, loop_inputs, refute_speculation,
)
from autograph.runtime.tracing.values import (
    as_predicate, drop_new_functions, emit, trace_subgraph, unify_captures,
)

__all__ = ["build_while", "initial_value"]

_INITS = ScopedMap()  # id(loop body input placeholder) -> its loop variable's initial value


def initial_value(placeholder):
    """The initial value of the loop variable whose body input ``placeholder`` is, while that body
    is traced; else None.  In Python the variable is that object at the first iteration: a store
    into it (``buf += x``) is a store into the initial array, which another name may hold
    (``operators/aliases.py``)."""
    return _INITS.get(id(placeholder))


def build_while(cond_fn, body_fn, init, *, labels, where, invariants=None, maximum_iterations=None,
                stage_lists=False):
    """Traces ``cond_fn``/``body_fn`` into sub-graphs and emits a ``While``.

    ``init`` is the flat list of loop values (tensors and Python values);
    ``cond_fn(values)`` returns the loop condition and ``body_fn(values)``
    the next flat list of values.  Returns the flat list of final values:
    While outputs for loop variables, the unchanged Python value for values
    the body leaves alone.  ``labels`` name the values in error messages.
    With ``stage_lists``, a Python list the body appends to becomes a staged
    list (a tensor of the stacked elements).
    """
    invariants = invariants or [None] * len(init)
    slots = [Slot(label, value, as_invariant(invariant, label, where))
             for label, value, invariant in zip(labels, init, invariants)]
    _apply_invariants(slots, where)
    if isinstance(maximum_iterations, Tensor):
        return _while_with_counter(cond_fn, body_fn, init, labels=labels, where=where, invariants=invariants,
                                   maximum_iterations=maximum_iterations, stage_lists=stage_lists)
    if maximum_iterations is not None:
        maximum_iterations = int(maximum_iterations)
    for s in slots:
        if s.kind == "open" and type(s.init) in (int, float):
            s.speculate()
    outer = current_graph()
    cond_g, body_g = retrace.settle(
        lambda before: _trace_round(outer, before, cond_fn, body_fn, slots, where, stage_lists), outer,
        f"the loop variables of {where}", "Give them explicit dtypes before the loop and shape_invariants.")
    return _emit_while(outer, slots, cond_g, body_g, maximum_iterations, where)


def _apply_invariants(slots, where):
    """Gives the loop variables with a shape invariant that shape (refused if the initial value's does not fit)."""
    for s in slots:
        if s.is_loop_var and s.invariant is not None:
            if not shapes.is_subshape(s.shape, s.invariant):
                raise TracingError(
                    f"'{s.label}' has shape {shapes.format_shape(s.shape)} before {where}, which does not fit "
                    f"its shape invariant {shapes.format_shape(s.invariant)}. Fix the invariant or the "
                    "initial value."
                )
            s.shape = s.invariant


def _trace_round(outer, before, cond_fn, body_fn, slots, where, stage_lists):
    """One trace of the condition and the body; ``((cond graph, body graph), trace again?)``."""
    for s in slots:
        s.evidence.clear()
    try:
        cond_g, _ = trace_subgraph("while_cond", outer, _trace_cond, cond_fn, slots, where)
        if weak_loop_vars.guess(slots, cond_g):  # the condition alone decides most counters' dtypes
            drop_new_functions(outer, before)
            cond_g, _ = trace_subgraph("while_cond", outer, _trace_cond, cond_fn, slots, where)
        body_g, changed = trace_subgraph("while_body", outer, _trace_body, body_fn, slots, where, stage_lists,
                                         cond_g)
    except Exception:
        if not any(s.speculative for s in slots):
            raise
        for s in slots:  # traced again on the Python values, as if nothing had been speculated
            if s.speculative:
                s.unspeculate()
        return None, True
    return (cond_g, body_g), changed


def _emit_while(outer, slots, cond_g, body_g, maximum_iterations, where):
    """The ``While`` op of the settled traces; the flat final values (Python values passed through)."""
    loop_slots = [s for s in slots if s.is_loop_var]
    initial = [initial_tensor(s, where) for s in loop_slots]
    captured = unify_captures([cond_g, body_g])
    cond_name = outer.add_function(cond_g, "while_cond")
    body_name = outer.add_function(body_g, "while_body")
    attrs = {"cond": cond_name, "body": body_name}
    if maximum_iterations is not None:
        attrs["maximum_iterations"] = maximum_iterations
    outputs = iter(emit("While", [*initial, *captured], attrs, [cond_g, body_g]))
    final = [next(outputs) if s.is_loop_var else s.init for s in slots]
    for s, value in zip(slots, final):
        label = s.staged_label(where) if s.is_loop_var else None
        if label is not None:
            StagedList.mark(value, label, s.numbers)
    return final


def _trace_cond(graph, cond_fn, slots, where):
    values = loop_inputs(graph, slots, where)
    with weak_loop_vars.watching(slots, values):
        graph.outputs = [as_predicate(cond_fn(values), where)]


def _trace_body(graph, body_fn, slots, where, stage_lists, cond_graph):
    """Traces the body; updates ``slots``; returns True if another trace is needed."""
    values = loop_inputs(graph, slots, where)
    initial = {id(v): s.init for s, v in zip(slots, values) if isinstance(v, Tensor) and v is not s.init}
    with weak_loop_vars.watching(slots, values), _INITS.extended(initial):
        results = list(body_fn(list(values)))
    if len(results) != len(slots):
        raise TracingError(
            f"the body of {where} returns {len(results)} loop values but the loop has {len(slots)}; "
            "return the same structure as the loop variables."
        )
    if refute_speculation(slots, values, results):
        return True
    # Python values the body turned into something else become loop variables;
    # the outputs of this trace are then meaningless (they were computed from
    # Python values), so only a trace that reclassifies nothing checks them.
    # Lists are decided last, from a trace where everything else is settled:
    # their element dtype comes from what the body appends.
    # Weak variables' dtypes are settled before lists too (a trace with the
    # default dtype is traced again with the settled one).
    pending = [(s, b, a) for s, b, a in zip(slots, values, results) if not s.is_loop_var]
    if _classify_all([p for p in pending if type(p[0].init) is not list], where, stage_lists):
        return True
    loop_vars = sum(1 for s in slots if s.is_loop_var)
    body_inputs = [v for s, v in zip(slots, values) if s.is_loop_var]
    if weak_loop_vars.settle(slots, [(cond_graph, cond_graph.inputs[:loop_vars]), (graph, body_inputs)]):
        return True
    if _classify_all([p for p in pending if type(p[0].init) is list], where, stage_lists):
        return True
    changed = False
    outputs = []
    for s, after in zip(slots, results):
        if s.is_loop_var:
            tensor, retrace_ = body_output(graph, s, after, where)
            outputs.append(tensor)
            changed |= retrace_
    graph.outputs = outputs
    return changed


def _classify_all(pending, where, stage_lists) -> bool:
    """``classify`` for each ``(slot, before, after)``; True if one changed."""
    reclassified = False
    for s, before, after in pending:
        reclassified |= classify(s, before, after, where, stage_lists)
    return reclassified


def _while_with_counter(cond_fn, body_fn, init, *, labels, where, invariants, maximum_iterations, stage_lists):
    """A While whose ``maximum_iterations`` is a tensor: an extra counter joins the condition."""
    limit = maximum_iterations
    counter0 = apply.constant(0, limit.dtype)

    def counted_cond(values):
        keep_going = as_predicate(cond_fn(values[1:]), where)
        return ops.logical_and(ops.less(values[0], limit), keep_going)

    def counted_body(values):
        return [values[0] + 1, *body_fn(values[1:])]

    final = build_while(counted_cond, counted_body, [counter0, *init], labels=["<iteration counter>", *labels],
                        where=where, invariants=[None, *invariants], stage_lists=stage_lists)
    return final[1:]
