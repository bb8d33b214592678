"""The interpreter: runs a graph on numpy values, one rule per op kind.

``run_graph(graph, args)`` takes one numpy value per ``graph.all_inputs``
(declared inputs, then capture placeholders, in that order) and returns the
values of ``graph.outputs`` as a list.

The first run of a graph builds its ``Plan`` (``exec/plan.py``: slots,
schedule, last uses and buffer donation), cached on the graph and rebuilt
automatically when its number of ops, its ``outputs`` list or its stateful
chain change; after other in-place edits -- rewiring an op's inputs,
replacing one output -- call ``invalidate(graph)``.  Running it costs a few
attribute loads and one kernel call per op (``run``, the loop).

**One rule per op kind** (``RULES``, default ``_kernel_rule``) says how a
step of that kind is called -- its kernel from the default backend's table
(``core/backend.py``, looked up once per plan) with the attributes bound
once (``functools.partial``), or, for an op type the backend declares a
Python operator (``Backend.operator_kernels``), that operator
(``operator.add`` is ``np.add`` on numpy values, without the ufunc call's
overhead on scalars).  The functional ops have no kernel:
their rules are the interpreter's own -- ``If`` runs the taken branch's
plan, ``While`` the tiered loop (``tiering.run_loop``, whose rule ``tiering``
adds to ``RULES``); both get
``library=graph.library``, the shared ``{name: Graph}`` function library,
and resolve sub-graphs by name when they run.

``runtime/exec/parallel.py`` runs the same ``Plan`` with threads when it has
independent heavy work; ``runtime/backends/numpy/codegen.py`` compiles the
same schedule to Python source.

A failing kernel is reported as ``ExecutionError`` naming the op, its printed
form and the user's ``file:line`` that created it; a failure inside a
sub-graph also lists the ``If``/``While`` ops it was nested in
(``wrap_error``).  An exception of the user's own code (a ``py_function``,
a failing assert: ``USER_ERRORS``) keeps its type, so ``except
RuntimeError`` still catches it; the op and ``file:line`` are attached as
notes (PEP 678).  Either way the traceback ends at the user's lines that
made the failing op and its ``If``/``While`` ops (``exec/user_frames.py``).
"""

from __future__ import annotations

import functools
import operator

import numpy as np

from autograph.runtime.core import backend, opdef, printer, spellings
from autograph.runtime.errors import USER_ERROR_ATTR, ExecutionError, ResourceLimitError, mark_user_error
from autograph.runtime.exec import limits, user_frames
from autograph.runtime.exec.plan import INPUTS, NO_INPUTS, ONE_INPUT, Plan


def run(plan, args) -> list:
    """The values of the graph's outputs for ``args`` (one per ``all_inputs``): ``Plan.run``."""
    env = plan.environment(args)
    for call, read, kind, out, donor, frees, op in plan.program:
        try:
            if kind == ONE_INPUT:
                result = call(read(env))
            elif kind == INPUTS:
                result = call(*read(env))
            elif kind == NO_INPUTS:
                result = call()
            else:  # plan.DONATED
                result = call(*read(env), out=env[donor])
        except Exception as e:  # noqa: BLE001 - every failure gets the op's context
            wrapped = wrap_error(e, op)
            if wrapped is e:  # the user's own exception, with a note added
                raise
            raise wrapped from user_frames.cause_of(wrapped, e)
        if out.__class__ is int:
            env[out] = result
        else:
            for s, value in zip(out, result):
                env[s] = value
        if frees:
            for s in frees:
                env[s] = None
    return plan.outputs_of(env)


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


# op type -> the Python operator of its spelling, called for the op types whose kernel the
# backend declares to be that operator (``Backend.operator_kernels``; numpy: ``ndarray.__add__``
# is ``np.add``): the same results, and on numpy scalars ~10x cheaper than the ufunc call.
# Derived from the one table of spellings; the bool-only spellings are left out, since on a
# Python ``bool`` operand ``~``/``&`` are integer operations, not logical ones.
PYTHON_OPERATORS = {s.op_type: getattr(operator, s.dunder) for s in spellings.SPELLINGS if s.kinds != "b"}
_NUMERIC_KINDS = frozenset("biufc")


def _kernel_rule(builder, op, python_operators=True):
    """The backend's kernel with the op's attributes bound (plus the library for functional
    ops); a ufunc with a Python operator spelling on numeric operands is called as that operator.
    An op of a loaded graph that could grow past ``max_elements`` checks its result's size first."""
    call = _kernel_call(builder, op, python_operators)
    check = limits.guard(op)  # None for traced graphs
    return call if check is None else limits.guarded(call, check)


def _kernel_call(builder, op, python_operators):
    record = backend.get()
    kernel = record.kernel(op.type)
    if (
        python_operators and not op.attrs and op.type in record.operator_kernels and op.type in PYTHON_OPERATORS
        and all([t.dtype.kind in _NUMERIC_KINDS for t in op.inputs])
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


# ``While``'s rule is the tiered loop's (``exec/tiering.py`` adds it, with ``add_rule``, when the
# ``exec`` package is imported): tiering runs this module's plans, so this module does not import it.
RULES = {"Placeholder": _placeholder_rule, "Const": _const_rule, "If": _if_rule}


def add_rule(op_type, rule) -> None:
    """Makes ``rule(builder, op)`` the rule of ``op_type``'s steps (plans built from now on)."""
    RULES[op_type] = rule




def _rule_of(builder, op, donated):
    """The call of ``op``'s step (``Plan``'s ``rule_of``); a donated step calls the kernel itself (with ``out=``)."""
    if donated:
        return _kernel_rule(builder, op, python_operators=False)
    return RULES.get(op.type, _kernel_rule)(builder, op)


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
        found = graph._executor_plan = Plan(graph, _rule_of, run)
        found.run = limits.scoped(found.run, graph)  # a loaded graph: one iteration budget per run
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
USER_ERRORS = {"Assert": AssertionError, "Pow": ValueError}  # Pow: numpy's "integers to negative integer powers"


def add_note(error: BaseException, note: str) -> None:
    """``error.add_note(note)`` (PEP 678); on Python 3.10 the same ``__notes__`` list, set by hand."""
    if hasattr(error, "add_note"):
        error.add_note(note)
    else:  # pragma: no cover - Python 3.10
        error.__notes__ = [*getattr(error, "__notes__", []), note]


def wrap_error(error: Exception, op):
    """``error`` raised by ``op``'s kernel, with the op's context and a traceback of the user's
    lines (``exec/user_frames.py``).

    Usually an ``ExecutionError`` naming the op; an exception of the user's
    own code (marked by its kernel, or in ``USER_ERRORS``, or passing through an
    ``If``/``While`` around one) is returned itself, with a note naming the
    op and its ``file:line`` added.
    """
    wrapped = _wrapped(error, op)
    user_frames.at_user_lines(wrapped, op, error)
    return wrapped


def _wrapped(error: Exception, op):
    if getattr(error, "__autograph_noted__", False):  # already noted by an inner op
        add_note(error, f"  inside {op.type} op '{op.name}' created at {_location(op)}")
        return error
    user = getattr(error, USER_ERROR_ATTR, False) or isinstance(error, USER_ERRORS.get(op.type, ()))
    if (user and mark_user_error(error)) or isinstance(error, ResourceLimitError):  # (a limit: not the op's fault)
        add_note(error, f"raised in graph {op.graph.name!r} by {op.type} op '{op.name}' created at {_location(op)}")
        error.__autograph_noted__ = True
        return error
    return _execution_error(error, op)


def _execution_error(error: Exception, op) -> ExecutionError:
    if isinstance(error, ExecutionError):
        message = f"{error}\n  inside {op.type} op '{op.name}' created at {_location(op)}"
        return ExecutionError.of(message, error.original) if error.original is not None else ExecutionError(message)
    cause = f"{type(error).__name__}: {error}"
    message = (
        f"{op.type} op '{op.name}' created at {_location(op)} failed while running graph "
        f"{op.graph.name!r}: {cause}\n"
        f"    {printer.format_op(op)}\n"
        f"  Check the values reaching this operation at {_location(op)} (for example with "
        "rt.print before it)."
    )
    return ExecutionError.of(message, error)
