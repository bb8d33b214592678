"""The executor: an interpreter that runs a graph on numpy values.

``run_graph(graph, args)`` takes one numpy value per ``graph.all_inputs``
(declared inputs, then capture placeholders, in that order) and returns the
values of ``graph.outputs`` as a list.

How it works.  The first run of a graph builds a ``Plan`` (cached on the graph,
rebuilt automatically when its number of ops, its ``outputs`` list or its
stateful chain change; after other in-place edits -- rewiring an op's
inputs, replacing one output -- call ``invalidate(graph)``):

* every tensor gets a slot in a flat environment list (no dict keyed by
  tensors, whose ``==`` builds ops); the graph's inputs take the first slots;
* only the operations needed are scheduled: those the outputs depend on and
  every stateful operation with everything it depends on (the chain of
  automatic control dependencies ending at ``graph.last_stateful``), so side
  effects run even when their results are unused;
* ``Const`` values are stored in the environment template once;
* each step is one kernel call (attributes bound once with
  ``functools.partial``, inputs read with one ``itemgetter``); the slot of a
  value that is not a small fixed-size array is cleared right after its
  last use, so large intermediates are freed early.

Kernels are called as ``kernel(*input_values, **attrs)``.  Functional ops --
the types listed in ``op_registry.FUNCTION_ATTRS`` (``If``, ``While``, ...)
-- also get ``library=graph.library``: the shared ``{name: Graph}`` function
library, so the kernel resolves its sub-graphs by the names in its attrs and
runs them with ``run_graph`` (or keeps ``plan(sub_graph)`` to run a loop body
many times without even the cache lookup).

A failing kernel is reported as ``ExecutionError`` naming the op, its printed
form and the user's ``file:line`` that created it; a failure inside a
sub-graph also lists the ``If``/``While`` ops it was nested in.
"""

from __future__ import annotations

import functools
import operator

from autograph.runtime import op_registry
from autograph.runtime.errors import ExecutionError


class Step:
    """One scheduled op, as data for other schedulers (``runtime/schedule.py``).

    Read the ``ins`` slots of the environment, call
    ``kernel(*values, **kwargs)``, write the result to ``single`` (one
    output) or unpack it into ``outs``; ``frees`` are the slots whose last
    use this is.
    """

    __slots__ = ("op", "kernel", "ins", "outs", "single", "kwargs", "frees")

    def __init__(self, op, kernel, ins, outs, kwargs, frees):
        self.op = op
        self.kernel = kernel
        self.ins = ins
        self.outs = outs
        self.single = outs[0] if len(outs) == 1 else None
        self.kwargs = kwargs
        self.frees = frees


# Values smaller than this many elements are not worth freeing early (the
# bookkeeping would cost more than it saves): scalar loop bodies skip it.
_FREE_MIN_ELEMENTS = 1024


class Plan:
    """A precomputed schedule of one graph; ``run(args)`` executes it.

    Public, for other schedulers: ``steps`` (``Step`` objects in execution
    order), ``input_slots`` (``0 .. nargs-1``), ``output_slots``, ``template``
    (the environment before the inputs are stored: ``Const`` values in
    place), ``nargs``.  ``run`` itself uses ``_program``, the same steps as
    tuples ``(call, read, arity, out, frees, op)``: the kernel with its
    attributes bound, an ``operator.itemgetter`` of the input slots, the
    number of inputs, the output slot (int) or slots (tuple).
    """

    __slots__ = (
        "graph", "n_ops", "outputs", "n_outputs", "last_stateful", "nargs", "input_slots", "output_slots",
        "template", "steps", "_program", "_read_outputs", "_single_output",
    )

    def __init__(self, graph):
        self.graph = graph
        # what the cache in plan() compares to see whether the graph changed
        self.n_ops = len(graph.operations)
        self.outputs = graph.outputs
        self.n_outputs = len(graph.outputs)
        self.last_stateful = graph.last_stateful
        slots: dict[int, int] = {}  # id(tensor) -> slot; declared inputs and captures come first

        def slot(tensor):
            found = slots.get(id(tensor))
            if found is None:
                found = slots[id(tensor)] = len(slots)
            return found

        inputs = graph.all_inputs
        self.nargs = len(inputs)
        for t in inputs:
            slot(t)
        if len(slots) != self.nargs:
            raise ValueError(f"graph {graph.name!r} lists the same input tensor twice")
        needed = _needed_ops(graph)
        scheduled = []
        consts = {}
        for op in graph.operations:
            for t in op.outputs:
                slot(t)
            if id(op) not in needed or op.type == "Placeholder":
                continue
            if op.type == "Const":
                consts[slots[id(op.outputs[0])]] = op.attrs["value"]
            else:
                scheduled.append(op)
        output_slots = [_output_slot(graph, t, slots) for t in graph.outputs]
        self.input_slots = list(range(self.nargs))
        self.output_slots = output_slots
        self._single_output = len(output_slots) == 1
        self._read_outputs = operator.itemgetter(*output_slots) if output_slots else (lambda env: ())

        last_use: dict[int, int] = {}
        for index, op in enumerate(scheduled):
            for t in op.inputs:
                if _worth_freeing(t):
                    last_use[slots[id(t)]] = index
        kept = set(output_slots)
        frees_at: dict[int, list[int]] = {}
        for s, index in last_use.items():
            if s not in kept:
                frees_at.setdefault(index, []).append(s)

        self.steps = []
        self._program = []
        for index, op in enumerate(scheduled):
            kernel = op_registry.get(op.type).kernel
            kwargs = dict(op.attrs)
            if op.type in op_registry.FUNCTION_ATTRS:
                kwargs["library"] = graph.library
            call = functools.partial(kernel, **kwargs) if kwargs else kernel
            ins = [slots[id(t)] for t in op.inputs]
            read = operator.itemgetter(*ins) if ins else None
            outs = tuple(slots[id(t)] for t in op.outputs)
            frees = tuple(frees_at.get(index, ()))
            self.steps.append(Step(op, kernel, tuple(ins), outs, kwargs, frees))
            self._program.append((call, read, len(ins), outs[0] if len(outs) == 1 else outs, frees, op))

        self.template = [None] * len(slots)
        for s, value in consts.items():
            self.template[s] = value

    def run(self, args) -> list:
        """The values of the graph's outputs for ``args`` (one per ``all_inputs``)."""
        n = self.nargs
        if len(args) != n:
            raise TypeError(
                f"graph {self.graph.name!r} takes {n} input value(s) (declared inputs, then "
                f"captures), got {len(args)}: pass one numpy value per graph.all_inputs"
            )
        env = self.template.copy()
        env[:n] = args
        for call, read, arity, out, frees, op in self._program:
            try:
                if arity == 1:
                    result = call(read(env))
                elif arity:
                    result = call(*read(env))
                else:
                    result = call()
            except Exception as e:  # noqa: BLE001 - every failure gets the op's context
                raise wrap_error(e, op) from e
            if out.__class__ is int:
                env[out] = result
            else:
                for s, value in zip(out, result):
                    env[s] = value
            if frees:
                for s in frees:
                    env[s] = None
        if self._single_output:
            return [self._read_outputs(env)]
        return list(self._read_outputs(env))


def plan(graph) -> Plan:
    """The cached ``Plan`` of ``graph`` (built on first use, rebuilt if the graph changed)."""
    found = graph.__dict__.get("_executor_plan")
    if (
        found is None
        or found.n_ops != len(graph.operations)
        or found.outputs is not graph.outputs
        or found.n_outputs != len(graph.outputs)
        or found.last_stateful is not graph.last_stateful
    ):
        found = graph._executor_plan = Plan(graph)
    return found


def invalidate(graph) -> None:
    """Drops the cached plan of ``graph``; call it after editing an op in place."""
    graph.__dict__.pop("_executor_plan", None)


def run_graph(graph, args) -> list:
    """Runs ``graph`` on numpy ``args`` (one per ``graph.all_inputs``); returns its output values."""
    return plan(graph).run(args)


def _worth_freeing(tensor) -> bool:
    shape = tensor.shape
    if shape is None or None in shape:
        return True
    size = 1
    for d in shape:
        size *= d
    return size >= _FREE_MIN_ELEMENTS


def _output_slot(graph, tensor, slots):
    found = slots.get(id(tensor))
    if found is None:
        raise ValueError(
            f"output {getattr(tensor, 'name', tensor)!r} of graph {graph.name!r} is not a tensor of "
            "this graph: graph.outputs must list tensors its operations or inputs produce"
        )
    return found


def _needed_ops(graph) -> set[int]:
    """ids of the ops the outputs or any stateful op depend on (through inputs and control inputs)."""
    roots = [t.op for t in graph.outputs if hasattr(t, "op")]
    for op in graph.operations:
        if op.control_inputs:
            roots.extend(op.control_inputs)
            roots.append(op)
        elif op_registry.REGISTRY.get(op.type) is not None and op_registry.REGISTRY[op.type].stateful:
            roots.append(op)
    if graph.last_stateful is not None:
        roots.append(graph.last_stateful)
    needed: set[int] = set()
    stack = roots
    while stack:
        op = stack.pop()
        if id(op) in needed:
            continue
        needed.add(id(op))
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return needed


def _location(op) -> str:
    return op.location or "<unknown location>"


def wrap_error(error: Exception, op) -> ExecutionError:
    """``error`` raised by ``op``'s kernel, as an ExecutionError with the op's context."""
    from autograph.runtime import printer

    if isinstance(error, ExecutionError):
        message = f"{error}\n  inside {op.type} op '{op.name}' created at {_location(op)}"
        return ExecutionError(message, error.original)
    cause = f"{type(error).__name__}: {error}"
    message = (
        f"{op.type} op '{op.name}' created at {_location(op)} failed while running graph "
        f"{op.graph.name!r}: {cause}\n"
        f"    {printer.format_op(op)}\n"
        f"  Check the values reaching this operation at {_location(op)} (for example with "
        "rt.print before it)."
    )
    return ExecutionError(message, error)
