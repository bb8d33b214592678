"""The plan of a graph: its environment layout and schedule, computed once.

A ``Plan`` is what the interpreter (``exec/interpreter.py``) runs; it is
built on a graph's first run and cached on the graph (``interpreter.plan``).
Building it decides:

* **environment** -- every tensor gets a slot in a flat list (no dict keyed
  by tensors, whose ``==`` builds ops); the graph's inputs take the first
  slots, ``Const`` values sit in the environment template;
* **schedule** -- only the operations needed run, in graph (topological)
  order: those the outputs depend on and every stateful operation with
  everything it depends on (the chain of automatic control dependencies
  ending at ``graph.last_stateful``), so side effects run even when their
  results are unused (``needed_ops``);
* **steps** -- for each scheduled op, how it is called: what the
  interpreter's rule for its kind makes of it (``rule_of``), the slots it
  reads and writes, the buffer it writes into and the slots it is the last
  user of (``exec/memory.py``).

``Plan.run`` is the interpreter's loop over ``program`` (the steps as flat
tuples), bound when the plan is built.
"""

from __future__ import annotations

import operator
import types

from autograph.runtime.core import opdef
from autograph.runtime.exec import memory

# How a step is called (the ``kind`` of its program entry).
NO_INPUTS, ONE_INPUT, INPUTS, DONATED = 0, 1, 2, 3


class Step:
    """One scheduled op: read the ``ins`` slots, ``call`` the kernel, write ``outs``.

    ``call`` is what the op's rule made of it (its kernel with the attributes
    bound, or the equivalent Python operator); ``single`` is the
    output slot of a one-output op (None otherwise: unpack into ``outs``);
    ``donor`` is the slot whose buffer receives the result (``out=``; None:
    allocate); ``frees`` are the slots whose last user this is.
    """

    __slots__ = ("op", "call", "ins", "outs", "single", "donor", "frees")

    def __init__(self, op, call, ins, outs, donor, frees):
        self.op = op
        self.call = call
        self.ins = ins
        self.outs = outs
        self.single = outs[0] if len(outs) == 1 else None
        self.donor = donor
        self.frees = frees

    def program_entry(self):
        """``(call, read, kind, out, donor, frees, op)``: the step as ``Plan.run`` executes it."""
        ins = self.ins
        if self.donor is not None:
            kind = DONATED
            read = operator.itemgetter(*ins) if len(ins) > 1 else (lambda env, s=ins[0]: (env[s],))
        else:
            kind = min(len(ins), INPUTS)
            read = operator.itemgetter(*ins) if ins else None
        out = self.single if self.single is not None else self.outs
        return (self.call, read, kind, out, self.donor, self.frees, self.op)


class Plan:
    """The precomputed schedule of one graph; ``run(args)`` executes it.

    ``steps`` (``Step`` objects in execution order), ``nargs`` (inputs take
    slots ``0 .. nargs-1``), ``output_slots``, ``template`` (the environment
    before the inputs are stored: ``Const`` values in place).  ``run`` walks
    ``program``, the same steps as flat tuples (``Step.program_entry``).
    The remaining fields are what ``interpreter.plan()`` compares to see
    whether the graph changed.

    ``rule_of(builder, op, donated)`` is the interpreter's: the call of
    ``op``'s step, or None for an op without a step (``donated``: the step
    writes into a buffer, so it must be the ufunc itself); ``run(plan,
    args)`` is its loop.
    """

    __slots__ = (
        "graph", "n_ops", "outputs", "n_outputs", "last_stateful", "nargs", "output_slots",
        "template", "steps", "program", "run", "_read_outputs", "_single_output",
    )

    def __init__(self, graph, rule_of, run):
        self.graph = graph
        self.n_ops = len(graph.operations)
        self.outputs = graph.outputs
        self.n_outputs = len(graph.outputs)
        self.last_stateful = graph.last_stateful
        builder = Builder(graph, rule_of)
        self.nargs = builder.nargs
        self.template = builder.template
        self.steps = builder.steps
        self.output_slots = builder.output_slots
        self.program = [step.program_entry() for step in self.steps]
        self._single_output = len(self.output_slots) == 1
        self._read_outputs = operator.itemgetter(*self.output_slots) if self.output_slots else (lambda env: ())
        self.run = types.MethodType(run, self)

    def environment(self, args) -> list:
        """A fresh environment holding ``args`` (one per ``all_inputs``) and the constants."""
        n = self.nargs
        if len(args) != n:
            raise TypeError(
                f"graph {self.graph.name!r} takes {n} input value(s) (declared inputs, then "
                f"captures), got {len(args)}: pass one numpy value per graph.all_inputs"
            )
        env = self.template.copy()
        env[:n] = args
        return env

    def outputs_of(self, env) -> list:
        """The output values held in ``env``."""
        if self._single_output:
            return [self._read_outputs(env)]
        return list(self._read_outputs(env))


class Builder:
    """Computes a plan's environment layout, steps, last uses and donations.

    Rules read ``graph``, ``slots`` (id(tensor) -> slot) and store constants
    in ``constants`` (slot -> value).
    """

    def __init__(self, graph, rule_of):
        self.graph = graph
        self.slots: dict[int, int] = {}  # id(tensor) -> slot; declared inputs and captures come first
        self.constants: dict[int, object] = {}
        inputs = graph.all_inputs
        for t in inputs:
            self.slot(t)
        self.nargs = len(inputs)
        if len(self.slots) != self.nargs:
            raise ValueError(f"graph {graph.name!r} lists the same input tensor twice")
        needed = needed_ops(graph)
        donated = memory.donations(graph, needed)
        scheduled = []  # (op, call)
        for op in graph.operations:
            for t in op.outputs:
                self.slot(t)
            if id(op) not in needed:
                continue
            call = rule_of(self, op, False)
            if call is not None:
                scheduled.append((op, call))
        self.output_slots = [self.output_slot(t) for t in graph.outputs]
        donors = [donated.get(id(op)) for op, _ in scheduled]
        donors = [None if t is None else self.slots[id(t)] for t in donors]
        frees_at = memory.last_uses([op for op, _ in scheduled], self.slots, donors, set(self.output_slots))
        self.steps = []
        for index, (op, call) in enumerate(scheduled):
            if donors[index] is not None:  # called with out=: the ufunc itself
                call = rule_of(self, op, True)
            self.steps.append(Step(
                op, call, tuple([self.slots[id(t)] for t in op.inputs]), tuple([self.slots[id(t)] for t in op.outputs]),
                donors[index], tuple(frees_at.get(index, ())),
            ))
        self.template = [None] * len(self.slots)
        for s, value in self.constants.items():
            self.template[s] = value

    def slot(self, tensor) -> int:
        found = self.slots.get(id(tensor))
        if found is None:
            found = self.slots[id(tensor)] = len(self.slots)
        return found

    def output_slot(self, tensor) -> int:
        found = self.slots.get(id(tensor))
        if found is None:
            raise ValueError(
                f"output {getattr(tensor, 'name', tensor)!r} of graph {self.graph.name!r} is not a tensor "
                "of this graph: graph.outputs must list tensors its operations or inputs produce"
            )
        return found


def needed_ops(graph) -> set[int]:
    """ids of the ops a run executes: what the outputs need, and every stateful op
    (registered stateful, chained by control inputs, or ``graph.last_stateful``)
    with what it needs."""
    roots = [t.op for t in graph.outputs if hasattr(t, "op")]
    for op in graph.operations:
        definition = opdef.REGISTRY.get(op.type)
        if op.control_inputs or (definition is not None and definition.stateful):
            roots.append(op)
            roots.extend(op.control_inputs)
    if graph.last_stateful is not None:
        roots.append(graph.last_stateful)
    needed: set[int] = set()
    while roots:
        op = roots.pop()
        if id(op) not in needed:
            needed.add(id(op))
            roots.extend([t.op for t in op.inputs])
            roots.extend(op.control_inputs)
    return needed
