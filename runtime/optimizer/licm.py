"""Loop-invariant code motion: computations a ``While`` body repeats with the
same inputs every iteration move out of the loop.

Before / after (``%w`` is captured, so it is the same every iteration)::

    While(%i, %w) body: %s = Sin(%w) ; %y = Add(%i, %s)
    %s = Sin(%w) ; While(%i, %w, %s) body: %y = Add(%i, %s')

A value of the body is invariant if it is a captured input, a loop
variable the body passes through unchanged, a constant, or the output of a
stateless op whose inputs are all invariant.  Invariant ops (other than
constants, which cost nothing) move into the graph calling the ``While``,
right before it; the values the body still uses come back in as new
captures (an extra ``While`` input, with a matching placeholder in both
``cond`` and ``body``).

The rule table ``HOIST`` says, per op type, whether it may move (default:
yes, for stateless ops; an ``If`` when its branches could move too).  Ops that can fail on some
values (gathers, slices, reshapes, ...) stay put: the loop might run zero
times, and hoisting would then raise an error the program never raised.
"""

from __future__ import annotations

from autograph.runtime.core.graph import Graph
from autograph.runtime.optimizer import graph_util, inline
from autograph.runtime.optimizer.rewrite import rewrite

HOIST = {
    "Placeholder": False,
    "Const": False,
    "GatherV2": False,
    "StridedSlice": False,
    "Reshape": False,
    "Fill": False,
    "Range": False,
    "ConcatV2": False,
    "Pack": False,
    "MatMul": False,
    "ArgMax": False,
    "PyFunc": False,
    "ListAppend": False,  # refuses an element of another shape
}


def _movable(op) -> bool:
    """May ``op`` run once before the loop instead of in every iteration?

    A stateless ``If`` may, when everything in its branches may (so no
    ``While``: a loop that might never have run is not started early).
    """
    if op.type == "If":
        return not graph_util.is_stateful(op) and all(
            inner.type in ("Placeholder", "Const") or _movable(inner)
            for branch in graph_util.subgraphs(op) for inner in branch.operations
        )
    if not HOIST.get(op.type, True) or graph_util.is_functional(op):
        return False
    return not graph_util.is_stateful(op)


def _signature_ok(op, cond, body) -> bool:
    n = len(op.inputs)
    return len(cond.all_inputs) == n and len(body.all_inputs) == n and len(body.outputs) == len(op.outputs)


def _hoist(rw, op):
    cond, body = graph_util.subgraphs(op)
    if not _signature_ok(op, cond, body):
        return None
    outer = rw.graph
    invariant: dict[int, object] = {}  # id(body tensor) -> the outer tensor it equals
    for i, (p, arg) in enumerate(zip(body.all_inputs, op.inputs)):
        passes_through = i >= len(body.outputs) or body.outputs[i] is p
        if passes_through:
            invariant[id(p)] = arg
    moved = []
    for inner in body.operations:
        if inner.type == "Const":
            invariant[id(inner.outputs[0])] = None  # copied to the outer graph on demand
            continue
        if not _movable(inner) or not all(id(t) in invariant for t in inner.inputs):
            continue
        moved.append(inner)
        for t in inner.outputs:
            invariant[id(t)] = t
    if not moved:
        return None
    moved_ids = {id(m) for m in moved}
    for inner in moved:
        args = []
        for t in inner.inputs:
            outer_t = invariant[id(t)]
            if outer_t is None:
                outer_t = invariant[id(t)] = rw.const(t.op.attrs["value"], t)
            args.append(outer_t)
        mapping = {id(t): a for t, a in zip(inner.inputs, args)}
        inner.graph = outer
        inner.name = outer.unique_name(graph_util.base_name(inner.name))
        inner.inputs = args
        for sub in graph_util.subgraphs(inner):  # an If: its branches now hang off ``outer``
            sub.outer = outer
            sub.captures = [(mapping[id(o)], i) for o, i in sub.captures]
            sub._capture_map = {id(o): i for o, i in sub.captures}
        rw.emit(inner)
    body.operations = [o for o in body.operations if id(o) not in moved_ids]
    _recapture(op, cond, body, moved)
    return None


def _recapture(op, cond, body, moved) -> None:
    """Feeds the moved values the body still uses back in as new captures."""
    used = graph_util.used_tensors(body)
    mapping = {}
    for inner in moved:
        for t in inner.outputs:
            if id(t) not in used:
                continue
            op.inputs.append(t)
            mapping[id(t)] = _add_capture(body, t)
            _add_capture(cond, t)
    inline.substitute(body, mapping)


def _add_capture(graph: Graph, outer_tensor):
    """A new capture placeholder of ``graph`` standing for ``outer_tensor``."""
    placeholder = graph_util.new_op(
        graph, "Placeholder", [], {"dtype": outer_tensor.dtype, "shape": outer_tensor.shape},
        [(outer_tensor.dtype, outer_tensor.shape, outer_tensor.weak)], name="capture",
    )
    graph.operations.insert(0, placeholder)
    inner = placeholder.outputs[0]
    graph.captures.append((outer_tensor, inner))
    graph._capture_map[id(outer_tensor)] = inner
    return inner


RULES = {"While": _hoist}


def run(graph) -> bool:
    """Hoists loop invariants out of the ``While`` ops of ``graph``; True if it changed."""
    return rewrite(graph, RULES)
