"""The graph optimizer: a fixed pipeline of passes run to a fixed point.

``optimize(graph)`` returns an optimized copy of ``graph`` (the graph it is
given is never modified) computing the same outputs with the same side
effects in the same order.  The pipeline, in order:

0. ``logical`` -- the ``If`` of a bool ``and``/``or`` whose lazy operand
   is a cheap scalar expression that cannot fail becomes ``LogicalAnd`` /
   ``LogicalOr`` (``logical_if.py``); first, because tracing leaves it to
   this pass and the passes below expect the logical op.
1. ``simplify`` -- algebraic identities (``x*1``, ``x+0``, ``--x``, no-op
   casts and reshapes); first, because it exposes constants and duplicates.
2. ``fold`` -- constant folding, constant ``If`` predicates (the taken
   branch is inlined), ``While`` loops that never run; after ``simplify`` so
   it folds what the identities left.
3. ``lower_if`` -- small stateless ``If`` ops become their branches' ops
   and a ``Choose`` of their results (control flow v1 form, ``lower_if.py``;
   left out with ``lower_ifs=False``); after ``fold``, which inlines the
   ``If``s with a constant predicate and pushes constants into branches.
4. ``cse`` -- common-subexpression elimination; after folding, so equal
   folded constants merge, and after lowering, so it sees across branches.
5. ``licm`` -- loop-invariant code motion out of ``While`` bodies; after
   ``cse`` so one copy of an invariant expression is hoisted.
6. ``prune`` -- drops ops nothing uses; last, as every pass above leaves
   dead ops behind.

Each pass runs on every sub-graph, inner graphs first (so a pass on a graph
only ever meets already-processed children), and the round repeats until no
pass changes anything (at most ``MAX_ROUNDS``).  The list of sub-graphs and
the library are brought up to date after a pass that changed something
(it may have inlined, hoisted or dropped sub-graphs), not after the others.
A round in which the only change was ``prune`` dropping dead ops of the root
graph (``prune.DEAD_OPS``: no sub-graph argument, no op of a sub-graph) is
the last: the passes before ``prune`` changed nothing with those ops present,
and their rules read only live ops -- inputs, attributes, sub-graphs -- never
who else uses a root tensor, so another round would change nothing either
(tracing leaves such dead ops behind in most graphs).  ``optimize(graph,
report=True)`` also returns a ``Report`` with the op counts before and after
each pass; ``check=True`` runs ``graph.verify()`` after every pass.
"""

from __future__ import annotations

import dataclasses

from autograph.runtime.optimizer import constant_folding, cse, graph_util, licm, logical_if, lower_if, prune, simplify

PASSES = (
    ("logical", logical_if.run),
    ("simplify", simplify.run),
    ("fold", constant_folding.run),
    ("lower_if", lower_if.run),
    ("cse", cse.run),
    ("licm", licm.run),
    ("prune", prune.run),
)

MAX_ROUNDS = 8


@dataclasses.dataclass(frozen=True)
class PassRecord:
    """Op counts (all graphs, placeholders excluded) around one pass of one round."""

    round: int
    name: str
    before: int
    after: int


@dataclasses.dataclass(frozen=True)
class Report:
    """What ``optimize`` did, pass by pass."""

    records: tuple[PassRecord, ...]

    def totals(self) -> dict[str, tuple[int, int]]:
        """Pass name -> (ops before its first run, ops after its last run)."""
        out: dict[str, tuple[int, int]] = {}
        for r in self.records:
            first = out.get(r.name, (r.before, r.after))[0]
            out[r.name] = (first, r.after)
        return out

    def to_text(self) -> str:
        lines = [f"{'round':>5}  {'pass':<9} {'before':>7} {'after':>7}"]
        for r in self.records:
            lines.append(f"{r.round:>5}  {r.name:<9} {r.before:>7} {r.after:>7}")
        if self.records:
            lines.append(f"total: {self.records[0].before} -> {self.records[-1].after} ops")
        return "\n".join(lines)

    def __str__(self):
        return self.to_text()


def optimize(graph, *, report: bool = False, check: bool = False, passes=PASSES, lower_ifs: bool = True):
    """An optimized copy of ``graph``; with ``report=True``, ``(copy, Report)``.
    ``lower_ifs=False`` leaves out ``lower_if`` (for ``jit_compile`` and the JAX backend)."""
    if not lower_ifs:
        passes = tuple(p for p in passes if p[1] is not lower_if.run)
    with graph_util.stateful_cache():
        return _optimize(graph_util.clone(graph), report, check, passes)


def _optimize(g, report, check, passes):
    records = []
    order = graph_util.graphs_postorder(g)
    for round_ in range(1, MAX_ROUNDS + 1):
        changed = False
        settled = True  # nothing changed but dead ops of the root, dropped by prune
        for name, run in passes:
            before = graph_util.count_ops(g) if report else 0
            pass_changed = False
            for sub in order:
                result = run(sub)
                if result:
                    pass_changed = True
                    if not (result is prune.DEAD_OPS and sub is g):
                        settled = False
            if pass_changed:
                changed = True
                order = graph_util.graphs_postorder(g)
                graph_util.collect_library(g, order)
            if report:
                records.append(PassRecord(round_, name, before, graph_util.count_ops(g)))
            if check:
                g.verify()
        if not changed or (settled and passes[-1][1] is prune.run):
            break
    return (g, Report(tuple(records))) if report else g
