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

The rule table ``HOIST`` says, per op type, whether it may move; the
default rule: a stateless op that no value can make raise or warn
(``hazards.never_fails``: comparisons, logical ops, safe casts, shapes, ...),
and ``Transpose`` of a tensor whose rank is known (its definition checked
the axes; a permutation of them is a view, for any value: the gradient of
``x @ w`` transposes the captured ``w`` in every iteration otherwise).
Everything else stays put -- ``x ** y`` on integers, divisions, float
arithmetic (overflow warns), gathers, slices, reshapes: the loop might run
zero times, and hoisting would then raise an error, or a warning, the
program never gave (``for i in range(0): s += x ** -1`` is 0, not an
error).  An ``If`` may move when everything in its branches may.  A loop
whose ``cond`` or ``body`` other ops call too (``graph_util.is_shared``) is
left alone: hoisting changes the function for every caller.
"""

from __future__ import annotations

from autograph.runtime.optimizer import graph_util, hazards, inline, loop_guard
from autograph.runtime.optimizer.rewrite import rewrite


def _never(op) -> bool:
    return False


def _if_movable(op) -> bool:
    """A stateless ``If`` whose branches hold only ops that may move (so no ``While``: a
    loop that might never have run is not started early) and that no other op calls."""
    branches = graph_util.subgraphs(op)
    if graph_util.is_stateful(op) or any(graph_util.is_shared(b) for b in branches):
        return False
    return all(inner.type in ("Placeholder", "Const") or _movable(inner) for b in branches for inner in b.operations)


def _total(op) -> bool:
    """The default rule: stateless, no sub-graph, and no value makes it raise or warn."""
    return not graph_util.is_functional(op) and not graph_util.is_stateful(op) and hazards.never_fails(op)


def _rank_known(op) -> bool:
    """A ``Transpose`` whose axes were checked against its input's static rank (no value raises)."""
    return op.inputs[0].shape is not None


HOIST = {
    "Placeholder": _never,
    "Const": _never,  # (copied to the outer graph when a moved op uses it)
    "If": _if_movable,
    "Transpose": _rank_known,
}


def _movable(op) -> bool:
    """May ``op`` run once before the loop instead of in every iteration (``HOIST``)?"""
    return HOIST.get(op.type, _total)(op)


def _signature_ok(op, cond, body) -> bool:
    n = len(op.inputs)
    return len(cond.all_inputs) == n and len(body.all_inputs) == n and len(body.outputs) == len(op.outputs)


def _hoist(rw, op):
    cond, body = graph_util.subgraphs(op)
    if not _signature_ok(op, cond, body) or graph_util.is_shared(cond) or graph_util.is_shared(body):
        return None
    invariant: dict[int, object] = {}  # id(body tensor) -> the outer tensor it equals
    for i, (p, arg) in enumerate(zip(body.all_inputs, op.inputs)):
        passes_through = i >= len(body.outputs) or body.outputs[i] is p
        if passes_through:
            invariant[id(p)] = arg
    free, guarded = _select(op, cond, body, invariant)
    if not free and not guarded:
        return None
    moved = {id(m) for m in free + guarded}
    body.operations = [o for o in body.operations if id(o) not in moved]
    for inner in free:
        _move(rw, inner, invariant)
    pairs = [(t, t) for inner in free for t in inner.outputs]
    used = graph_util.used_tensors(body)
    results = [t for inner in guarded for t in inner.outputs if id(t) in used]
    if results:  # (guarded ops nothing uses are dead: dropped, as pruning would)
        pairs += zip(results, loop_guard.build(rw, op, cond, guarded, results, invariant))
    _recapture(op, cond, body, pairs)
    return None


def _select(op, cond, body, invariant):
    """The invariant ops of ``body`` that move freely (``_movable``) and those that move under
    the loop's guard (``loop_guard``: they may fail or warn, so they run only if the loop
    runs, and only if no op that stays and may raise comes before them -- its error would
    come first; one that can only warn, ``hazards.never_raises``, warns all the same).  An op
    another op of the body must run after (a control input) stays."""
    guardable = loop_guard.applies(op, cond, body)
    free, guarded, behind_guard = [], [], set()
    blocked = False  # an op that may raise stays in the body before this point
    ordering = {id(c) for o in body.operations for c in o.control_inputs}  # a staged raise waits for them
    for inner in body.operations:
        if inner.type == "Const":
            invariant[id(inner.outputs[0])] = None  # copied on demand
            continue
        if inner.type == "Placeholder":
            continue
        if id(inner) not in ordering and all(id(t) in invariant for t in inner.inputs):
            if _movable(inner) and not any(id(t) in behind_guard for t in inner.inputs):
                free.append(inner)
                invariant.update((id(t), t) for t in inner.outputs)
                continue
            if guardable and not blocked and loop_guard.may_guard(inner):
                guarded.append(inner)
                invariant.update((id(t), t) for t in inner.outputs)
                behind_guard.update(id(t) for t in inner.outputs)
                continue
        if not hazards.never_raises(inner):
            blocked = True
    return free, guarded


def _move(rw, inner, invariant) -> None:
    """Moves body op ``inner`` before the ``While`` in ``rw.graph``."""
    outer = rw.graph
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
        sub.set_captures((mapping[id(o)], i) for o, i in sub.captures)
    rw.emit(inner)


def _recapture(op, cond, body, pairs) -> None:
    """Feeds the moved values the body still uses back in as new captures (``pairs``: the body
    tensor, the outer tensor now computing it)."""
    used = graph_util.used_tensors(body)
    mapping = {}
    for t, outer_t in pairs:
        if id(t) not in used:
            continue
        op.inputs.append(outer_t)
        mapping[id(t)] = graph_util.add_capture(body, outer_t)
        graph_util.add_capture(cond, outer_t)
    inline.substitute(body, mapping)


RULES = {"While": _hoist}


def run(graph) -> bool:
    """Hoists loop invariants out of the ``While`` ops of ``graph``; True if it changed."""
    return rewrite(graph, RULES)
