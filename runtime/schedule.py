"""Parallel execution of independent heavy operations on a small thread pool.

numpy releases the GIL inside its kernels, and its elementwise kernels are
single-threaded, so two independent chains of large elementwise ops (or the
two halves of a wide expression) can run on two cores at once.  This module
precomputes a ``ParallelPlan`` per graph (cached on the graph, like the
executor's ``Plan``: the same ops run, the same slots, constants in the
environment template): a dataflow schedule where every step knows its
successors and how many predecessors it waits for (data inputs *and*
control inputs, so stateful ops keep their order).

Running it, the calling thread walks the ready steps: a *heavy* step (its
static cost -- output elements times a per-op weight -- is at least
``HEAVY_COST``) goes to a worker thread when some other work could run
meanwhile; everything else runs inline.  Values are freed when their last
consumer finishes (reference counts instead of the sequential plan's last-use
indices, since the order now varies).

Parallelism only pays when there is heavy work to overlap, so
``parallel_plan(graph)`` returns None unless at least two heavy steps are
independent (neither reaches the other); ``run_graph(graph, args)`` then
falls back to the sequential executor.  Small graphs stay on the fast path.
"""

from __future__ import annotations

import concurrent.futures
import functools
import math
import os
import queue
import threading

from autograph.runtime import executor, op_registry, shapes

HEAVY_COST = 1 << 19
WORKERS = max(1, min(4, (os.cpu_count() or 2) - 1))

# cost per output element, by op type (default 1: one pass of memory)
WEIGHTS = {
    "Exp": 8, "Log": 8, "Sin": 10, "Cos": 10, "Tanh": 10, "Sqrt": 3, "Pow": 12,
    "RealDiv": 2, "FloorDiv": 4, "FloorMod": 4,
}

_NO_COST = frozenset({"Const", "Placeholder", "Identity", "Reshape", "Shape", "Size"})


def op_cost(op) -> float:
    """Static cost estimate of ``op``: output elements times a weight (0 if unknown)."""
    if op.type in _NO_COST:
        return 0
    if op.type == "MatMul":
        a, b = op.inputs[0].shape, op.inputs[1].shape
        if not (shapes.is_fully_defined(a) and shapes.is_fully_defined(b)) or not a or not b:
            return 0
        out = op.outputs[0].shape
        return math.prod(out) * a[-1] if shapes.is_fully_defined(out) else 0
    total = 0
    for t in op.outputs:
        if shapes.is_fully_defined(t.shape):
            total += math.prod(t.shape)
    return total * WEIGHTS.get(op.type, 1)


def needed_ops(graph) -> set[int]:
    """ids of the ops a run executes: what the outputs need, and every stateful
    op (registered stateful or chained by control inputs) with what it needs."""
    roots = [t.op for t in graph.outputs]
    for op in graph.operations:
        opdef = op_registry.REGISTRY.get(op.type)
        if op.control_inputs or (opdef is not None and opdef.stateful):
            roots.append(op)
            roots.extend(op.control_inputs)
    if graph.last_stateful is not None:
        roots.append(graph.last_stateful)
    needed: set[int] = set()
    while roots:
        op = roots.pop()
        if id(op) not in needed:
            needed.add(id(op))
            roots.extend(t.op for t in op.inputs)
            roots.extend(op.control_inputs)
    return needed


class _Step:
    __slots__ = ("op", "call", "ins", "outs", "single", "uniq_ins")

    def __init__(self, op, call, ins, outs):
        self.op = op
        self.call = call
        self.ins = ins
        self.outs = outs
        self.single = outs[0] if len(outs) == 1 else None
        self.uniq_ins = tuple(sorted(set(ins)))


class ParallelPlan:
    """A dataflow schedule of one graph: steps, their successors and predecessor counts."""

    __slots__ = ("graph", "nargs", "template", "steps", "output_slots", "npreds", "succs", "heavy", "uses",
                 "keep", "n_ops", "outputs")

    def __init__(self, graph):
        self.graph = graph
        self.n_ops = len(graph.operations)
        self.outputs = graph.outputs
        slots: dict[int, int] = {}
        for t in graph.all_inputs:
            slots[id(t)] = len(slots)
        self.nargs = len(slots)
        needed = needed_ops(graph)
        ops, consts = [], {}
        for op in graph.operations:
            for t in op.outputs:
                slots.setdefault(id(t), len(slots))
            if id(op) not in needed or op.type == "Placeholder":
                continue
            if op.type == "Const":
                consts[slots[id(op.outputs[0])]] = op.attrs["value"]
            else:
                ops.append(op)
        self.template = [None] * len(slots)
        for slot, value in consts.items():
            self.template[slot] = value
        self.output_slots = [slots[id(t)] for t in graph.outputs]
        self.steps = []
        for op in ops:
            kwargs = dict(op.attrs)
            if op.type in op_registry.FUNCTION_ATTRS:
                kwargs["library"] = graph.library
            kernel = op_registry.get(op.type).kernel
            call = functools.partial(kernel, **kwargs) if kwargs else kernel
            self.steps.append(_Step(op, call, tuple(slots[id(t)] for t in op.inputs),
                                    tuple(slots[id(t)] for t in op.outputs)))
        index = {id(op): i for i, op in enumerate(ops)}
        producer = {}
        for i, step in enumerate(self.steps):
            for slot in step.outs:
                producer[slot] = i
        preds = [set() for _ in ops]
        for i, step in enumerate(self.steps):
            preds[i].update(producer[slot] for slot in step.ins if slot in producer)
            preds[i].update(index[id(c)] for c in step.op.control_inputs if id(c) in index)
        self.npreds = [len(p) for p in preds]
        self.succs = [[] for _ in ops]
        for i, p in enumerate(preds):
            for j in sorted(p):
                self.succs[j].append(i)
        self.heavy = [op_cost(op) >= HEAVY_COST for op in ops]
        self.keep = frozenset(self.output_slots) | frozenset(range(self.nargs))
        self.uses: dict[int, int] = {}
        for step in self.steps:
            for slot in step.uniq_ins:
                self.uses[slot] = self.uses.get(slot, 0) + 1

    def worthwhile(self) -> bool:
        """True if two heavy steps could run at the same time."""
        reach = [0] * len(self.steps)  # bitset of ancestors; steps are in topological order
        for i in range(len(reach)):
            for j in self.succs[i]:
                reach[j] |= reach[i] | (1 << i)
        heavy = [i for i, h in enumerate(self.heavy) if h]
        for a in range(len(heavy)):
            for b in range(a + 1, len(heavy)):
                i, j = heavy[a], heavy[b]
                if not (reach[j] >> i) & 1 and not (reach[i] >> j) & 1:
                    return True
        return False

    def run(self, args) -> list:
        """The values of the graph's outputs for ``args`` (one per ``graph.all_inputs``)."""
        if len(args) != self.nargs:
            return executor.run_graph(self.graph, args)  # raises the executor's error
        env = self.template.copy()
        env[: self.nargs] = args
        steps = self.steps
        waiting = list(self.npreds)
        uses = dict(self.uses)
        keep = self.keep
        ready = [i for i, n in enumerate(waiting) if n == 0]
        ready.reverse()  # pop() takes them in graph order
        done: "queue.SimpleQueue" = queue.SimpleQueue()
        inflight = 0
        finished = 0
        pool = _pool()

        def complete(i):
            nonlocal finished
            finished += 1
            for slot in steps[i].uniq_ins:
                uses[slot] -= 1
                if uses[slot] == 0 and slot not in keep:
                    env[slot] = None
            for j in self.succs[i]:
                waiting[j] -= 1
                if waiting[j] == 0:
                    ready.append(j)

        while finished < len(steps):
            while ready:
                i = ready.pop()
                if self.heavy[i] and inflight < WORKERS and (ready or inflight):
                    inflight += 1
                    pool.submit(_run_step, steps[i], env, i, done)
                    continue
                error = _run_step(steps[i], env, i, None)
                if error is not None:
                    _drain(done, inflight)
                    raise error
                complete(i)
            if inflight:
                i, error = done.get()
                inflight -= 1
                if error is not None:
                    _drain(done, inflight)
                    raise error
                complete(i)
            elif not ready:
                break
        return [env[s] for s in self.output_slots]


def _run_step(step, env, i, done):
    """Runs one step into ``env``; returns (or posts to ``done``) the wrapped error, if any."""
    error = None
    try:
        result = step.call(*[env[s] for s in step.ins])
        if step.single is not None:
            env[step.single] = result
        else:
            for slot, value in zip(step.outs, result):
                env[slot] = value
    except Exception as e:  # noqa: BLE001 - reported with the op's context, as the executor does
        error = executor._wrap(e, step.op)
        error.__cause__ = e
    if done is None:
        return error
    done.put((i, error))
    return None


def _drain(done, inflight) -> None:
    for _ in range(inflight):
        done.get()


_POOL = None
_POOL_LOCK = threading.Lock()


def _pool():
    global _POOL
    if _POOL is None:
        with _POOL_LOCK:
            if _POOL is None:
                _POOL = concurrent.futures.ThreadPoolExecutor(WORKERS, thread_name_prefix="autograph")
    return _POOL


def parallel_plan(graph):
    """The ``ParallelPlan`` of ``graph``, or None when running it in parallel cannot win."""
    found = graph.__dict__.get("_parallel_plan")
    if found is None or found[0] != len(graph.operations) or found[1] is not graph.outputs:
        candidate = ParallelPlan(graph)
        found = graph._parallel_plan = (len(graph.operations), graph.outputs,
                                        candidate if candidate.worthwhile() else None)
    return found[2]


def run_graph(graph, args, parallel: bool = True) -> list:
    """Runs ``graph`` like ``executor.run_graph``, overlapping independent heavy ops."""
    if parallel:
        pp = parallel_plan(graph)
        if pp is not None:
            return pp.run(args)
    return executor.run_graph(graph, args)
