"""Fast execution plans: buffer donation, parallel branches, hot loops compiled.

A ``Schedule`` is precomputed once per graph (cached on the graph, like the
executor's ``Plan``, and running exactly the ops the executor runs: what the
outputs need plus every stateful op and its dependencies):

* **topological order and slots** -- every value has a slot in a flat
  environment list, constants sit in the template, each step is one kernel
  call with its attributes bound;
* **last uses** -- a value's slot is cleared after its last consumer, so
  large intermediates are freed early;
* **buffer donation** -- an elementwise (ufunc) op whose operand is a large
  temporary that nothing else reads writes its result into that operand's
  buffer (``np.exp(t, out=t)``) instead of allocating: a chain like
  ``exp(x)*2 + sqrt(abs(x)) - x*x`` allocates 3 arrays instead of 7 (numpy
  itself elides some temporaries in Python expressions; a graph must do it
  on purpose).  ``inplace_operands`` is the analysis, shared with ``jit``;
* **parallel branches** -- numpy releases the GIL inside its kernels and its
  elementwise kernels are single-threaded, so independent heavy steps (two
  chains over different large arrays, the halves of a wide expression) run
  on a small thread pool: every step knows its successors and how many
  predecessors (data *and* control inputs, so side effects keep their order)
  it waits for; the calling thread runs ready steps and hands a heavy one
  (static cost -- output elements times a per-op weight -- of at least
  ``HEAVY_COST``) to a worker when other work can run meanwhile.  Only graphs
  with two independent heavy steps take this path (``worthwhile``); others
  stay sequential, with no thread overhead.  Whether threads win also
  depends on the machine's load, so ``Adaptive`` measures both modes and
  keeps to the faster one.

``run_loop`` is the ``While`` kernel's loop with tiering: the first
``HOT_ITERATIONS`` iterations run ``cond``/``body`` through the executor;
a loop that keeps going continues in code compiled by ``jit.compile_loop``
(same results by construction, a fraction of the per-iteration cost).  A
``Schedule`` runs its ``While`` steps that way (``STEP_RULES``).

Entry points: ``runner(graph, parallel)`` (the best way to run a graph),
``run_graph``, ``run_loop``.
"""

from __future__ import annotations

import concurrent.futures
import functools
import math
import operator
import os
import queue
import statistics
import threading
import time

import numpy as np

from autograph.runtime import executor, op_registry, shapes

HEAVY_COST = 1 << 20
WORKERS = max(1, min(4, (os.cpu_count() or 2) - 1))
INPLACE_MIN_ELEMENTS = 1 << 15
HOT_ITERATIONS = 16

# cost per output element, by op type (default 1: one pass over memory)
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
        a, out = op.inputs[0].shape, op.outputs[0].shape
        if not (shapes.is_fully_defined(a) and shapes.is_fully_defined(out)) or not a:
            return 0
        return math.prod(out) * a[-1]
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


def ufunc_of(op_type):
    """The numpy ufunc that is ``op_type``'s kernel (``np.<name>``), or None."""
    opdef = op_registry.REGISTRY.get(op_type)
    kernel = opdef.kernel if opdef is not None else None
    if isinstance(kernel, np.ufunc) and getattr(np, kernel.__name__, None) is kernel:
        return kernel
    return None


def _large(tensor) -> bool:
    return shapes.is_fully_defined(tensor.shape) and math.prod(tensor.shape) >= INPLACE_MIN_ELEMENTS


def inplace_operands(graph, needed=None) -> dict[int, int]:
    """id(op) -> index of the operand whose buffer the op may overwrite with its result.

    The operand must be a large temporary of this graph made by a ufunc op
    (a fresh array: never a view, an input or a constant), with the op's
    dtype and static shape, read by nothing but ufunc ops of this graph, the
    last of which is this op; and it must not be an output.
    """
    needed = needed_ops(graph) if needed is None else needed
    users: dict[int, list] = {}
    for op in graph.operations:
        if id(op) in needed:
            for t in op.inputs:
                users.setdefault(id(t), []).append(op)
    outputs = {id(t) for t in graph.outputs}
    found = {}
    for op in graph.operations:
        if id(op) not in needed or ufunc_of(op.type) is None or not _large(op.outputs[0]):
            continue
        out = op.outputs[0]
        for index, t in enumerate(op.inputs):
            if (
                ufunc_of(t.op.type) is not None and t.op.graph is graph and id(t) not in outputs
                and t.dtype == out.dtype and t.shape == out.shape
                and all(ufunc_of(u.type) is not None for u in users[id(t)])
                and users[id(t)][-1] is op
            ):
                found[id(op)] = index
                break
    return found


class _Step:
    """One op: ``call`` reads ``ins`` slots and writes ``outs``; ``donor`` is the
    slot whose buffer receives the result (None: allocate)."""

    __slots__ = ("op", "call", "ins", "outs", "single", "donor", "frees", "uniq_ins")

    def __init__(self, op, call, ins, outs, donor):
        self.op = op
        self.call = call
        self.ins = ins
        self.outs = outs
        self.single = outs[0] if len(outs) == 1 else None
        self.donor = donor
        self.frees = ()
        self.uniq_ins = tuple(sorted(set(ins)))


class Schedule:
    """The precomputed plan of one graph; ``run`` sequentially, ``run_parallel`` with threads."""

    __slots__ = ("graph", "nargs", "template", "steps", "sequence", "output_slots", "npreds", "succs", "heavy",
                 "uses", "keep", "n_ops", "outputs", "worthwhile", "single_output", "read_outputs", "adaptive")

    def __init__(self, graph):
        self.graph = graph
        self.n_ops = len(graph.operations)
        self.outputs = graph.outputs
        self.adaptive = None
        slots: dict[int, int] = {}
        for t in graph.all_inputs:
            slots[id(t)] = len(slots)
        self.nargs = len(slots)
        needed = needed_ops(graph)
        donations = inplace_operands(graph, needed)
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
        self.single_output = len(self.output_slots) == 1
        self.read_outputs = operator.itemgetter(*self.output_slots) if self.output_slots else (lambda env: ())
        self.steps = []
        for op in ops:
            kwargs = dict(op.attrs)
            if op.type in op_registry.FUNCTION_ATTRS:
                kwargs["library"] = graph.library
            special = STEP_RULES.get(op.type)
            if special is not None:
                call = special(op, graph.library)
            else:
                kernel = op_registry.get(op.type).kernel
                call = functools.partial(kernel, **kwargs) if kwargs else kernel
            donor = donations.get(id(op))
            self.steps.append(_Step(op, call, tuple(slots[id(t)] for t in op.inputs),
                                    tuple(slots[id(t)] for t in op.outputs),
                                    None if donor is None else slots[id(op.inputs[donor])]))
        self.keep = frozenset(self.output_slots) | frozenset(range(self.nargs))
        last_use: dict[int, int] = {}
        for i, step in enumerate(self.steps):
            for slot in step.ins:
                last_use[slot] = i
        frees: dict[int, list] = {}
        for slot, i in last_use.items():
            if slot not in self.keep:
                frees.setdefault(i, []).append(slot)
        for i, step in enumerate(self.steps):
            step.frees = tuple(frees.get(i, ()))
        # the sequential fast path: (call, read, arity, out, donor, frees, op) per step
        self.sequence = [
            (step.call, operator.itemgetter(*step.ins) if step.ins else None, len(step.ins),
             step.single if step.single is not None else step.outs, step.donor, step.frees, step.op)
            for step in self.steps
        ]
        self._dataflow(ops)

    def _dataflow(self, ops) -> None:
        index = {id(op): i for i, op in enumerate(ops)}
        producer = {slot: i for i, step in enumerate(self.steps) for slot in step.outs}
        preds = [set() for _ in ops]
        for i, step in enumerate(self.steps):
            preds[i].update(producer[slot] for slot in step.ins if slot in producer)
            preds[i].update(index[id(c)] for c in step.op.control_inputs if id(c) in index)
        self.npreds = [len(p) for p in preds]
        self.succs = [[] for _ in ops]
        for i, p in enumerate(preds):
            for j in sorted(p):
                self.succs[j].append(i)
        # side effects stay on the calling thread (user callbacks, printing, random streams)
        self.heavy = [op_cost(op) >= HEAVY_COST and not _has_effects(op) for op in ops]
        self.uses: dict[int, int] = {}
        for step in self.steps:
            for slot in step.uniq_ins:
                self.uses[slot] = self.uses.get(slot, 0) + 1
        reach = [0] * len(ops)  # bitsets of ancestors; steps are in topological order
        for i in range(len(ops)):
            for j in self.succs[i]:
                reach[j] |= reach[i] | (1 << i)
        heavy = [i for i, h in enumerate(self.heavy) if h]
        self.worthwhile = any(
            not (reach[j] >> i) & 1 and not (reach[i] >> j) & 1
            for a, i in enumerate(heavy) for j in heavy[a + 1:]
        )

    def _env(self, args):
        if len(args) != self.nargs:
            executor.run_graph(self.graph, args)  # raises the executor's error
        env = self.template.copy()
        env[: self.nargs] = args
        return env

    def run(self, args) -> list:
        """Runs the steps in order (buffer donation, early frees); returns the outputs."""
        if len(args) != self.nargs:
            return executor.run_graph(self.graph, args)  # raises the executor's error
        env = self.template.copy()
        env[: self.nargs] = args
        for call, read, arity, out, donor, frees, op in self.sequence:
            try:
                if donor is not None:
                    result = call(*read(env), out=env[donor]) if arity > 1 else call(read(env), out=env[donor])
                elif arity == 1:
                    result = call(read(env))
                elif arity:
                    result = call(*read(env))
                else:
                    result = call()
            except Exception as e:  # noqa: BLE001 - reported with the op's context, as the executor does
                raise executor.wrap_error(e, op) from e
            if out.__class__ is int:
                env[out] = result
            else:
                for slot, value in zip(out, result):
                    env[slot] = value
            for slot in frees:
                env[slot] = None
        if self.single_output:
            return [self.read_outputs(env)]
        return list(self.read_outputs(env))

    def run_parallel(self, args) -> list:
        """Runs ready heavy steps on worker threads while the caller runs the rest."""
        env = self._env(args)
        steps, succs, heavy, keep = self.steps, self.succs, self.heavy, self.keep
        waiting = list(self.npreds)
        uses = dict(self.uses)
        ready = [i for i, n in enumerate(waiting) if n == 0]
        ready.reverse()  # pop() takes them in graph order
        done: "queue.SimpleQueue" = queue.SimpleQueue()
        inflight = finished = 0
        pool = _pool()
        while finished < len(steps):
            while ready:
                i = ready.pop()
                if heavy[i] and inflight < WORKERS and (ready or inflight):
                    inflight += 1
                    pool.submit(_run_step, steps[i], env, i, done)
                    continue
                error = _run_step(steps[i], env, i, None)
                if error is not None:
                    _drain(done, inflight)
                    raise error
                finished += 1
                _complete(steps[i], succs[i], env, uses, keep, waiting, ready)
            if not inflight:
                break
            i, error = done.get()
            inflight -= 1
            if error is not None:
                _drain(done, inflight)
                raise error
            finished += 1
            _complete(steps[i], succs[i], env, uses, keep, waiting, ready)
        return [env[s] for s in self.output_slots]


def _has_effects(op) -> bool:
    opdef = op_registry.REGISTRY.get(op.type)
    return bool(op.control_inputs) or op is op.graph.last_stateful or (opdef is not None and opdef.stateful)


def _complete(step, succs, env, uses, keep, waiting, ready) -> None:
    """Bookkeeping after a step finished (calling thread only): frees and newly ready steps."""
    for slot in step.uniq_ins:
        uses[slot] -= 1
        if uses[slot] == 0 and slot not in keep:
            env[slot] = None
    for j in succs:
        waiting[j] -= 1
        if waiting[j] == 0:
            ready.append(j)


def _run_step(step, env, i, done):
    """Runs one step into ``env``; returns (or posts to ``done``) the wrapped error, if any."""
    error = None
    try:
        if step.donor is None:
            result = step.call(*[env[s] for s in step.ins])
        else:
            result = step.call(*[env[s] for s in step.ins], out=env[step.donor])
        if step.single is not None:
            env[step.single] = result
        else:
            for slot, value in zip(step.outs, result):
                env[slot] = value
    except Exception as e:  # noqa: BLE001 - reported with the op's context, as the executor does
        error = executor.wrap_error(e, step.op)
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


# -- entry points ---------------------------------------------------------------------


def plan(graph) -> Schedule:
    """The cached ``Schedule`` of ``graph`` (rebuilt if its op list or outputs changed)."""
    found = graph.__dict__.get("_schedule")
    if found is None or found.n_ops != len(graph.operations) or found.outputs is not graph.outputs:
        found = graph._schedule = Schedule(graph)
    return found


class Adaptive:
    """Runs a schedule in parallel or sequentially, whichever is faster *here and now*.

    Whether threads win depends on the machine and its load (a second core
    busy with another process makes the parallel run slower), so the runner
    measures: the first ``2 * TRIALS`` runs alternate between the two modes,
    then it keeps to the faster one (median of the last ``TRIALS`` runs of
    each) and re-measures the other every ``RECHECK`` runs.  Both modes give
    identical results; only heavy graphs (``Schedule.worthwhile``) get here,
    so the two clock reads per run cost nothing measurable.
    """

    TRIALS = 3
    RECHECK = 32

    __slots__ = ("schedule", "times", "calls")

    def __init__(self, schedule):
        self.schedule = schedule
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
        result = (self.schedule.run_parallel if mode else self.schedule.run)(args)
        bucket = self.times[mode]
        bucket.append(time.perf_counter() - start)
        if len(bucket) > self.TRIALS:
            del bucket[0]
        return result


def adaptive(schedule) -> Adaptive:
    """The ``Adaptive`` runner of ``schedule`` (one per schedule, so it keeps learning)."""
    if schedule.adaptive is None:
        schedule.adaptive = Adaptive(schedule)
    return schedule.adaptive


def runner(graph, parallel: bool = True):
    """The fastest way to run ``graph``: ``callable(args) -> outputs`` (``parallel=False``:
    never threads)."""
    schedule = plan(graph)
    return adaptive(schedule).run if parallel and schedule.worthwhile else schedule.run


def run_graph(graph, args, parallel: bool = True) -> list:
    """Runs ``graph`` like ``executor.run_graph``, with donation and, if it pays, threads."""
    return runner(graph, parallel)(args)


def run_loop(cond, body, args, maximum_iterations=None) -> list:
    """The ``While`` loop over library graphs ``cond``/``body``; returns the final loop variables.

    ``args`` are the loop variables then the invariant captures.  The first
    ``HOT_ITERATIONS`` iterations are interpreted; a loop still running then
    continues in code compiled by ``jit.compile_loop`` (if the graphs
    compile), with the remaining iteration budget.
    """
    n = len(body.outputs)
    loop_vars, invariant = list(args[:n]), list(args[n:])
    cond_run, body_run = executor.plan(cond).run, executor.plan(body).run
    count = 0
    while maximum_iterations is None or count < maximum_iterations:
        if count == HOT_ITERATIONS:
            compiled = _compiled_loop(cond, body, maximum_iterations is not None)
            if compiled is not None:
                remaining = None if maximum_iterations is None else maximum_iterations - count
                return compiled(loop_vars + invariant, remaining)
        if not cond_run(loop_vars + invariant)[0]:
            break
        loop_vars = body_run(loop_vars + invariant)
        count += 1
    return loop_vars


def _while_step(op, library):
    """The call of a ``While`` step: ``run_loop`` (tiered), same results as the kernel."""
    cond, body = library[op.attrs["cond"]], library[op.attrs["body"]]
    limit = op.attrs.get("maximum_iterations")
    single = len(op.outputs) == 1

    def call(*args):
        values = run_loop(cond, body, args, limit)
        return values[0] if single else tuple(values)

    return call


# op type -> builder of its step's call, for ops the schedule runs its own way
STEP_RULES = {"While": _while_step}


def _compiled_loop(cond, body, bounded: bool):
    """``jit.compile_loop(cond, body, bounded)``, cached on ``body`` (None if it cannot compile)."""
    key = (id(cond), len(cond.operations), len(body.operations), bounded)
    cache = body.__dict__.setdefault("_compiled_loops", {})
    found = cache.get(bounded)
    if found is None or found[0] != key:
        from autograph.runtime import jit

        try:
            fn = jit.compile_loop(cond, body, bounded)[0]
        except jit.JitUnsupported:
            fn = None
        found = cache[bounded] = (key, fn)
    return found[1]
