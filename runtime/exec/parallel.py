"""The parallel runner: independent heavy steps of a plan on worker threads.

numpy releases the GIL inside its kernels and its elementwise kernels are
single-threaded, so independent heavy steps (two chains over different
large arrays, the halves of a wide expression) can run on a small thread
pool.  ``Dataflow`` annotates a plan's steps (``exec/plan.py``) with their
successors and how many predecessors each waits for: data inputs, control
inputs (so side effects keep their order) and, for a step that writes into
a donated buffer, every other reader of that buffer.  The calling thread
runs ready steps and hands a heavy one (static cost -- output elements
times a per-op weight -- of at least ``HEAVY_COST``) to a worker when other
work can run meanwhile.  Only plans with two independent heavy steps
(``Dataflow.worthwhile``) take this path; others stay on the sequential
``Plan.run``, with no thread overhead.  Whether threads win also depends on
the machine's load, so ``Adaptive`` measures both modes and keeps to the
faster one.

Entry points: ``runner(graph, parallel)`` (the best way to run a graph),
``run_graph``, ``dataflow``.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import os
import queue
import statistics
import threading
import time

from autograph.runtime.core import opdef

from autograph.runtime.exec import fp_warnings, interpreter as executor, limits

HEAVY_COST = 1 << 20
WORKERS = max(1, min(4, (os.cpu_count() or 2) - 1))

# the static cost of a step is its op definition's (``opdef.cost_of``)
op_cost = opdef.cost_of


class Dataflow:
    """The dependency structure of a ``Plan``, for running it with threads.

    Per step (same indices as ``plan.steps``): ``npreds`` (how many steps it
    waits for), ``succs`` (the steps waiting for it), ``heavy`` (worth a
    worker thread), ``releases`` (the slots it uses: inputs and the buffer
    it writes into).  ``uses`` counts each slot's using steps, so a parallel
    run frees a value when its last user finishes, whatever the order;
    ``keep`` are the slots never freed (inputs, outputs).

    Work is handed out by ``segments``: a heavy step followed by the heavy
    steps that only it feeds and that wait for nothing else (a chain such
    as ``sin(exp(sin(x)))``) runs as one task, so a worker goes through a
    whole chain without waiting for the calling thread between its steps.
    ``segments[i]`` is the tuple of steps started by step ``i`` (empty for
    a step inside another's segment).
    """

    __slots__ = ("plan", "npreds", "succs", "heavy", "uses", "releases", "keep", "segments", "worthwhile",
                 "adaptive")

    def __init__(self, plan):
        self.plan = plan
        steps = plan.steps
        producer = {s: i for i, step in enumerate(steps) for s in step.outs}
        index = {id(step.op): i for i, step in enumerate(steps)}
        # the slots each step uses: its inputs and the buffer it writes into
        self.releases = [tuple(set(step.ins) | ({step.donor} if step.donor is not None else set())) for step in steps]
        readers: dict[int, list[int]] = {}
        for i, used in enumerate(self.releases):
            for s in used:
                readers.setdefault(s, []).append(i)
        preds = []
        for i, step in enumerate(steps):
            p = {producer[s] for s in step.ins if s in producer}
            p.update(index[id(c)] for c in step.op.control_inputs if id(c) in index)
            if step.donor is not None:  # the buffer is overwritten: whoever uses it goes first
                p.add(producer[step.donor])
                p.update(j for j in readers[step.donor] if j != i)
            preds.append(p)
        self.npreds = [len(p) for p in preds]
        self.succs = [[] for _ in steps]
        for i, p in enumerate(preds):
            for j in sorted(p):
                self.succs[j].append(i)
        # side effects stay on the calling thread (user callbacks, printing, random streams)
        self.heavy = [op_cost(step.op) >= HEAVY_COST and not _has_effects(step.op) for step in steps]
        self.uses = {s: len(r) for s, r in readers.items()}
        self.keep = frozenset(plan.output_slots) | frozenset(range(plan.nargs))
        self.segments = self._segments()
        self.worthwhile = _independent_pair(self.heavy, self.succs)
        # (a loaded graph's run keeps one iteration budget, on the workers too: exec/limits.py)
        self.adaptive = Adaptive(plan.run, limits.scoped(self.run, plan.graph))

    def _segments(self) -> list[tuple[int, ...]]:
        heavy, succs, npreds = self.heavy, self.succs, self.npreds
        segments: list[tuple[int, ...]] = [()] * len(heavy)
        inside = set()
        for i in range(len(heavy)):
            if i in inside:
                continue
            segment = [i]
            while heavy[segment[-1]] and len(succs[segment[-1]]) == 1:
                j = succs[segment[-1]][0]
                if not heavy[j] or npreds[j] != 1:
                    break
                segment.append(j)
                inside.add(j)
            segments[i] = tuple(segment)
        return segments

    def run(self, args) -> list:
        """Runs the plan with heavy segments on worker threads; returns the outputs."""
        env = self.plan.environment(args)
        state = _RunState(self, env)
        steps, segments, heavy, ready = self.plan.steps, self.segments, self.heavy, state.ready
        pool = _pool()
        while state.finished < len(steps):
            while ready:
                i = ready.pop()
                if heavy[i] and state.inflight < WORKERS and (ready or state.inflight):
                    state.inflight += 1
                    pool.submit(contextvars.copy_context().run, _run_segment, steps, segments[i], env, state.done)
                    continue
                state.finish(_run_segment(steps, segments[i], env, None))
                # hand finished workers' successors out before running on here
                while state.inflight and not state.done.empty():
                    state.collect()
            if not state.inflight:
                break
            state.collect()
        return self.plan.outputs_of(env)


class _RunState:
    """The bookkeeping of one parallel run (calling thread only)."""

    __slots__ = ("flow", "env", "waiting", "uses", "ready", "done", "inflight", "finished")

    def __init__(self, flow, env):
        self.flow = flow
        self.env = env
        self.waiting = list(flow.npreds)
        self.uses = dict(flow.uses)
        self.ready = [i for i, n in enumerate(self.waiting) if n == 0]
        self.ready.reverse()  # pop() takes them in graph order
        self.done: queue.SimpleQueue = queue.SimpleQueue()
        self.inflight = 0
        self.finished = 0

    def collect(self) -> None:
        """Waits for a worker's segment and does its bookkeeping."""
        self.inflight -= 1
        self.finish(self.done.get())

    def finish(self, outcome) -> None:
        """After a segment ran: raises its error (once no worker still runs), else frees
        the values it used last and queues the segments now ready."""
        segment, error = outcome
        if error is not None:
            for _ in range(self.inflight):
                self.done.get()
            raise error
        flow, env, uses, keep, waiting = self.flow, self.env, self.uses, self.flow.keep, self.waiting
        for i in segment:
            self.finished += 1
            for s in flow.releases[i]:
                uses[s] -= 1
                if uses[s] == 0 and s not in keep:
                    env[s] = None
            for j in flow.succs[i]:
                waiting[j] -= 1
                if waiting[j] == 0 and flow.segments[j]:
                    self.ready.append(j)


def _independent_pair(heavy, succs) -> bool:
    """Whether two heavy steps exist of which neither depends on the other."""
    marked = [i for i, h in enumerate(heavy) if h]
    if len(marked) < 2:
        return False
    reach = [0] * len(heavy)  # bitsets of ancestors; steps are in topological order
    for i in range(len(heavy)):
        for j in succs[i]:
            reach[j] |= reach[i] | (1 << i)
    return any(
        not (reach[j] >> i) & 1 and not (reach[i] >> j) & 1
        for a, i in enumerate(marked) for j in marked[a + 1:]
    )


def _has_effects(op) -> bool:
    definition = opdef.REGISTRY.get(op.type)
    return bool(op.control_inputs) or op is op.graph.last_stateful or (definition is not None and definition.stateful)


def _run_segment(steps, segment, env, done):
    """Runs the steps of ``segment`` into ``env``; returns (or posts to ``done``) the
    outcome ``(segment, wrapped error or None)``."""
    error = None
    for i in segment:
        step = steps[i]
        try:
            if step.donor is None:
                result = step.call(*[env[s] for s in step.ins])
            else:
                result = step.call(*[env[s] for s in step.ins], out=env[step.donor])
            if step.single is not None:
                env[step.single] = result
            else:
                for s, value in zip(step.outs, result):
                    env[s] = value
        except Exception as e:  # noqa: BLE001 - reported with the op's context, as the executor does
            error = executor.wrap_error(e, step.op)
            if error is not e:
                error.__cause__ = e
            break
    if done is None:
        return segment, error
    done.put((segment, error))
    return None


_POOL = None
_POOL_LOCK = threading.Lock()


def _pool():
    global _POOL
    if _POOL is None:
        with _POOL_LOCK:
            if _POOL is None:
                _POOL = concurrent.futures.ThreadPoolExecutor(WORKERS, thread_name_prefix="autograph")
    return _POOL


class Adaptive:
    """Runs a graph in parallel or sequentially, whichever is faster *here and now*.

    Whether threads win depends on the machine and its load (a second core
    busy with another process makes the parallel run slower), so the runner
    measures: the first ``2 * TRIALS`` runs alternate between the two modes,
    then it keeps to the faster one (median of the last ``TRIALS`` runs of
    each) and re-measures the other every ``RECHECK`` runs.  Both modes give
    identical results; only heavy graphs (``Dataflow.worthwhile``) get here,
    so the two clock reads per run cost nothing measurable.
    """

    TRIALS = 3
    RECHECK = 32

    __slots__ = ("sequential", "parallel", "times", "calls")

    def __init__(self, sequential, parallel):
        self.sequential = sequential
        self.parallel = parallel
        self.times = ([], [])  # seconds of recent sequential, parallel runs
        self.calls = 0

    def choice(self) -> bool:
        """True to run in parallel next."""
        sequential, parallel = self.times
        if len(sequential) < self.TRIALS or len(parallel) < self.TRIALS:
            return len(parallel) < len(sequential)
        faster = statistics.median(parallel) < statistics.median(sequential)
        return (not faster) if self.calls % self.RECHECK == 0 else faster

    def run(self, args) -> list:
        self.calls += 1
        mode = self.choice()
        start = time.perf_counter()
        result = (self.parallel if mode else self.sequential)(args)
        bucket = self.times[mode]
        bucket.append(time.perf_counter() - start)
        if len(bucket) > self.TRIALS:
            del bucket[0]
        return result


# -- entry points ---------------------------------------------------------------------


def dataflow(graph) -> Dataflow:
    """The cached ``Dataflow`` of ``graph``'s current executor plan."""
    plan = executor.plan(graph)
    found = graph.__dict__.get("_dataflow")
    if found is None or found.plan is not plan:
        found = graph._dataflow = Dataflow(plan)
    return found


def runner(graph, parallel: bool = True):
    """The fastest way to run ``graph``: ``callable(args) -> outputs``.

    The plan's sequential ``run``, or -- when ``parallel`` and the graph has
    independent heavy work -- the adaptive runner that also tries threads.
    """
    plan = executor.plan(graph)
    if parallel and _two_heavy_steps(plan):
        flow = dataflow(graph)
        if flow.worthwhile:
            return flow.adaptive.run
    return fp_warnings.naming_user_lines(plan.run, graph)


def _two_heavy_steps(plan) -> bool:
    """Whether ``plan`` has two steps costly enough for a worker (without which no
    ``Dataflow`` is worthwhile: most graphs are decided here, without building one)."""
    heavy = 0
    for step in plan.steps:
        if op_cost(step.op) >= HEAVY_COST:
            heavy += 1
            if heavy == 2:
                return True
    return False


def run_graph(graph, args, parallel: bool = True) -> list:
    """Runs ``graph`` like ``executor.run_graph``, with threads when it pays."""
    return runner(graph, parallel)(args)
