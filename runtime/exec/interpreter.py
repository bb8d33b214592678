"""The executor: the one interpreter that runs a graph on numpy values.

``run_graph(graph, args)`` takes one numpy value per ``graph.all_inputs``
(declared inputs, then capture placeholders, in that order) and returns the
values of ``graph.outputs`` as a list.

How it works.  The first run of a graph builds a ``Plan`` (cached on the graph,
rebuilt automatically when its number of ops, its ``outputs`` list or its
stateful chain change; after other in-place edits -- rewiring an op's
inputs, replacing one output -- call ``invalidate(graph)``).  The plan is
computed once, so running it costs a few attribute loads and one kernel
call per op:

* **environment** -- every tensor gets a slot in a flat list (no dict keyed
  by tensors, whose ``==`` builds ops); the graph's inputs take the first
  slots, ``Const`` values sit in the environment template;
* **schedule** -- only the operations needed run, in graph (topological)
  order: those the outputs depend on and every stateful operation with
  everything it depends on (the chain of automatic control dependencies
  ending at ``graph.last_stateful``), so side effects run even when their
  results are unused (``needed_ops``);
* **one rule per op kind** (``RULES``, default ``_kernel_rule``): how a step
  of that kind is called -- its kernel from the default backend's table
  (``core/backend.py``, looked up once per plan) with the attributes bound
  once (``functools.partial``), or for a ufunc spelled as a Python operator
  that operator (``operator.add`` is ``np.add`` on numpy values, without
  the ufunc call's overhead on scalars).  The functional ops have no
  kernel: their rules are the executor's own -- ``If`` runs the taken
  branch's plan, ``While`` the scheduler's loop (``schedule.run_loop``);
  both get ``library=graph.library``, the shared ``{name: Graph}`` function
  library, and resolve sub-graphs by name when they run;
* **last uses** -- the slot of a value that is not a small fixed-size array
  is cleared right after its last reader, so large intermediates are freed
  early (scalar loop bodies skip the bookkeeping);
* **buffer donation** -- an elementwise (ufunc) op whose operand is a large
  temporary that nothing reads afterwards writes its result into that
  operand's buffer (``np.exp(t, out=t)``), or into a dead temporary's
  buffer of its dtype and shape: a chain like ``exp(x)*2 + sqrt(abs(x)) -
  x*x`` allocates 2 arrays instead of 7 (``donations``, shared with ``jit``).

``runtime/exec/schedule.py`` runs the same ``Plan`` with threads when it has
independent heavy work; ``runtime/backends/numpy/codegen.py`` compiles the same schedule to
Python source.

A failing kernel is reported as ``ExecutionError`` naming the op, its printed
form and the user's ``file:line`` that created it; a failure inside a
sub-graph also lists the ``If``/``While`` ops it was nested in
(``wrap_error``).  An exception of the user's own code (a ``py_function``,
a failing assert: ``USER_ERRORS``) keeps its type, so ``except
RuntimeError`` still catches it; the op and ``file:line`` are attached as
notes (PEP 678).
"""

from __future__ import annotations

import functools
import math
import operator

import numpy as np

from autograph.runtime.core import backend, opdef, printer, shapes, spellings
from autograph.runtime.errors import USER_ERROR_ATTR, ExecutionError, mark_user_error

# Values smaller than this many elements are not worth freeing early (the
# bookkeeping would cost more than it saves): scalar loop bodies skip it.
FREE_MIN_ELEMENTS = 1024
# Temporaries at least this large are worth writing into instead of allocating.
INPLACE_MIN_ELEMENTS = 1 << 15

# How a step is called (the ``kind`` of its program entry).
_NO_INPUTS, _ONE_INPUT, _INPUTS, _DONATED = 0, 1, 2, 3


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
            kind = _DONATED
            read = operator.itemgetter(*ins) if len(ins) > 1 else (lambda env, s=ins[0]: (env[s],))
        else:
            kind = min(len(ins), _INPUTS)
            read = operator.itemgetter(*ins) if ins else None
        out = self.single if self.single is not None else self.outs
        return (self.call, read, kind, out, self.donor, self.frees, self.op)


class Plan:
    """The precomputed schedule of one graph; ``run(args)`` executes it.

    ``steps`` (``Step`` objects in execution order), ``nargs`` (inputs take
    slots ``0 .. nargs-1``), ``output_slots``, ``template`` (the environment
    before the inputs are stored: ``Const`` values in place).  ``run`` walks
    ``program``, the same steps as flat tuples (``Step.program_entry``).
    The remaining fields are what ``plan()`` compares to see whether the
    graph changed.
    """

    __slots__ = (
        "graph", "n_ops", "outputs", "n_outputs", "last_stateful", "nargs", "output_slots",
        "template", "steps", "program", "_read_outputs", "_single_output",
    )

    def __init__(self, graph):
        self.graph = graph
        self.n_ops = len(graph.operations)
        self.outputs = graph.outputs
        self.n_outputs = len(graph.outputs)
        self.last_stateful = graph.last_stateful
        builder = _Builder(graph)
        self.nargs = builder.nargs
        self.template = builder.template
        self.steps = builder.steps
        self.output_slots = builder.output_slots
        self.program = [step.program_entry() for step in self.steps]
        self._single_output = len(self.output_slots) == 1
        self._read_outputs = operator.itemgetter(*self.output_slots) if self.output_slots else (lambda env: ())

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

    def run(self, args) -> list:
        """The values of the graph's outputs for ``args`` (one per ``all_inputs``)."""
        env = self.environment(args)
        for call, read, kind, out, donor, frees, op in self.program:
            try:
                if kind == _ONE_INPUT:
                    result = call(read(env))
                elif kind == _INPUTS:
                    result = call(*read(env))
                elif kind == _NO_INPUTS:
                    result = call()
                else:
                    result = call(*read(env), out=env[donor])
            except Exception as e:  # noqa: BLE001 - every failure gets the op's context
                wrapped = wrap_error(e, op)
                if wrapped is e:  # the user's own exception, with a note added
                    raise
                raise wrapped from e
            if out.__class__ is int:
                env[out] = result
            else:
                for s, value in zip(out, result):
                    env[s] = value
            if frees:
                for s in frees:
                    env[s] = None
        return self.outputs_of(env)


class _Builder:
    """Computes a plan's environment layout, steps, last uses and donations."""

    def __init__(self, graph):
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
        donated = donations(graph, needed)
        scheduled = []  # (op, call)
        for op in graph.operations:
            for t in op.outputs:
                self.slot(t)
            if id(op) not in needed:
                continue
            call = RULES.get(op.type, _kernel_rule)(self, op)
            if call is not None:
                scheduled.append((op, call))
        self.output_slots = [self.output_slot(t) for t in graph.outputs]
        donors = [donated.get(id(op)) for op, _ in scheduled]
        donors = [None if t is None else self.slots[id(t)] for t in donors]
        frees_at = self.frees([op for op, _ in scheduled], donors)
        self.steps = []
        for index, (op, call) in enumerate(scheduled):
            if donors[index] is not None:  # called with out=: the ufunc itself
                call = _kernel_rule(self, op, python_operators=False)
            self.steps.append(Step(
                op, call, tuple(self.slots[id(t)] for t in op.inputs), tuple(self.slots[id(t)] for t in op.outputs),
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

    def frees(self, ops, donors) -> dict[int, list[int]]:
        """step index -> slots whose last user that step is (outputs and small values excluded).

        A donated buffer's last user is the step that writes into it.
        """
        last_use: dict[int, int] = {}
        for index, op in enumerate(ops):
            for t in op.inputs:
                if _worth_freeing(t):
                    last_use[self.slots[id(t)]] = index
            if donors[index] is not None:
                last_use[donors[index]] = index
        kept = set(self.output_slots)
        frees_at: dict[int, list[int]] = {}
        for s, index in last_use.items():
            if s not in kept:
                frees_at.setdefault(index, []).append(s)
        return frees_at


# -- rules: op kind -> the call of its step (None: no step) ------------------------------


def _placeholder_rule(builder, op):
    """Inputs are stored by ``Plan.environment``."""
    return None


def _const_rule(builder, op):
    """Constants live in the environment template (0-d ones as numpy scalars, which
    numpy computes with far faster than with 0-d arrays)."""
    value = op.attrs["value"]
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    builder.constants[builder.slots[id(op.outputs[0])]] = value
    return None


# op type -> the Python operator that calls its ufunc kernel on numpy values
# (``ndarray.__add__`` is ``np.add``): the same results, and on numpy scalars ~10x cheaper
# than the ufunc call.  Derived from the one table of spellings; the bool-only spellings
# are left out, since on a Python ``bool`` operand ``~``/``&`` are integer operations,
# not logical ones.
PYTHON_OPERATORS = {s.op_type: getattr(operator, s.dunder) for s in spellings.SPELLINGS if s.kinds != "b"}
_NUMERIC_KINDS = frozenset("biufc")


def _kernel_rule(builder, op, python_operators=True):
    """The backend's kernel with the op's attributes bound (plus the library for functional
    ops); a ufunc with a Python operator spelling on numeric operands is called as that operator."""
    kernel = backend.get().kernel(op.type)
    if (
        python_operators and not op.attrs and isinstance(kernel, np.ufunc) and op.type in PYTHON_OPERATORS
        and all(t.dtype.kind in _NUMERIC_KINDS for t in op.inputs)
    ):
        return PYTHON_OPERATORS[op.type]
    kwargs = dict(op.attrs)
    if opdef.function_attr_names(op.type):
        kwargs["library"] = builder.graph.library
    return functools.partial(kernel, **kwargs) if kwargs else kernel


# The functional ops run sub-graphs through their cached plans; ``plan`` is resolved
# when the step runs (the library's graphs may be replaced), a While resolves its
# cond/body plans once per execution, and arguments go to ``Plan.run`` as they come
# (a tuple), so an iteration costs the sub-graph runs and little more.


def _run_if(pred, *args, then_branch, else_branch, library):
    values = plan(library[then_branch] if pred else library[else_branch]).run(args)
    return values[0] if len(values) == 1 else tuple(values)


def _if_rule(builder, op):
    """``If``: runs the taken branch's plan."""
    return functools.partial(_run_if, **op.attrs, library=builder.graph.library)


def _while_rule(builder, op):
    """``While``: the loop itself (interpreted, then compiled once hot) is the scheduler's."""
    from autograph.runtime.exec import schedule  # schedule builds on this module's plans

    run_loop = schedule.run_loop

    def run_while(*args, cond, body, library, maximum_iterations=None):
        loop_vars = run_loop(library[cond], library[body], args, maximum_iterations)
        return loop_vars[0] if len(loop_vars) == 1 else tuple(loop_vars)

    return functools.partial(run_while, **op.attrs, library=builder.graph.library)


RULES = {"Placeholder": _placeholder_rule, "Const": _const_rule, "If": _if_rule, "While": _while_rule}


# -- analyses shared with the parallel runner and jit ------------------------------------


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
            roots.extend(t.op for t in op.inputs)
            roots.extend(op.control_inputs)
    return needed


def ufunc_of(op_type):
    """The numpy ufunc that is ``op_type``'s kernel (``np.<name>``), or None."""
    kernel = backend.get().kernels.get(op_type)
    if isinstance(kernel, np.ufunc) and getattr(np, kernel.__name__, None) is kernel:
        return kernel
    return None


def donations(graph, needed=None) -> dict:
    """id(op) -> the dead temporary whose buffer the op writes its result into.

    Only ufunc ops with a large static-shaped output write into a buffer.
    A buffer is a temporary of this graph made by a ufunc op (a fresh array:
    never a view, an input or a constant), not an output, read by nothing but
    ufunc ops of this graph; it becomes free at its last reader in graph
    order.  That reader itself takes it when it has the output's dtype and
    shape (``np.exp(t, out=t)``: an operand overwritten in place); else any
    later op with that dtype and shape may take it (``np.multiply(x, x,
    out=t)``) instead of allocating.  Each buffer is handed out once; the
    value written into it can be handed on when it dies in turn.  (A
    parallel run must therefore finish a buffer's readers before the op
    that takes it: ``schedule.Dataflow`` adds those edges.)
    """
    needed = needed_ops(graph) if needed is None else needed
    ops = [op for op in graph.operations if id(op) in needed]
    users: dict[int, list] = {}
    for op in ops:
        for t in op.inputs:
            users.setdefault(id(t), []).append(op)
    outputs = {id(t) for t in graph.outputs}

    def reusable(t):
        return (
            ufunc_of(t.op.type) is not None and t.op.graph is graph and id(t) not in outputs and _large(t)
            and all(ufunc_of(u.type) is not None for u in users[id(t)])
        )

    free: dict[tuple, list] = {}  # (dtype, shape) -> dead buffers, the latest last
    found = {}
    for op in ops:
        dying = {}  # id -> tensor (tensors compare by building ops: never ``in`` a list)
        for t in op.inputs:
            if users[id(t)][-1] is op and reusable(t):
                dying[id(t)] = t
        if ufunc_of(op.type) is not None and _large(op.outputs[0]):
            key = (op.outputs[0].dtype, op.outputs[0].shape)
            donor = next((t for t in dying.values() if (t.dtype, t.shape) == key), None)
            if donor is not None:
                del dying[id(donor)]
            elif free.get(key):
                donor = free[key].pop()
            if donor is not None:
                found[id(op)] = donor
        for t in dying.values():
            free.setdefault((t.dtype, t.shape), []).append(t)
    return found


def _large(tensor) -> bool:
    return shapes.is_fully_defined(tensor.shape) and math.prod(tensor.shape) >= INPLACE_MIN_ELEMENTS


def _worth_freeing(tensor) -> bool:
    shape = tensor.shape
    if shape is None or None in shape:
        return True
    return math.prod(shape) >= FREE_MIN_ELEMENTS


# -- entry points -------------------------------------------------------------------------


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


def _location(op) -> str:
    return op.location or "<unknown location>"


# op type -> the exception its kernel raises for the user (a failing assert is the
# user's AssertionError).  Exceptions of user code run by a kernel (py_function)
# are marked by the kernel (``errors.mark_user_error``).  Both keep their type:
# ``except RuntimeError`` must still catch them; the op's context becomes a note.
USER_ERRORS = {"Assert": AssertionError}


def add_note(error: BaseException, note: str) -> None:
    """``error.add_note(note)`` (PEP 678); on Python 3.10 the same ``__notes__`` list, set by hand."""
    if hasattr(error, "add_note"):
        error.add_note(note)
    else:  # pragma: no cover - Python 3.10
        error.__notes__ = [*getattr(error, "__notes__", []), note]


def wrap_error(error: Exception, op):
    """``error`` raised by ``op``'s kernel, with the op's context.

    Usually an ``ExecutionError`` naming the op; an exception of the user's
    own code (marked by its kernel, or in ``USER_ERRORS``, or passing through an
    ``If``/``While`` around one) is returned itself, with a note naming the
    op and its ``file:line`` added.
    """
    if getattr(error, "__autograph_noted__", False):  # already noted by an inner op
        add_note(error, f"  inside {op.type} op '{op.name}' created at {_location(op)}")
        return error
    user = getattr(error, USER_ERROR_ATTR, False) or isinstance(error, USER_ERRORS.get(op.type, ()))
    if user and mark_user_error(error):
        add_note(error, f"raised in graph {op.graph.name!r} by {op.type} op '{op.name}' created at {_location(op)}")
        error.__autograph_noted__ = True
        return error
    return _execution_error(error, op)


def _execution_error(error: Exception, op) -> ExecutionError:
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
