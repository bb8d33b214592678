"""Control flow v1 lowering: a small stateless ``If`` becomes ops of the graph around it.

An ``If`` keeps its branches in functions of their own (TensorFlow's control
flow v2); the interpreter runs the taken one through its plan, which for a
branch of a few small ops costs more than the ops, and nothing outside the
branch sees into it.  This pass moves the ops of both branches of such an
``If`` into the enclosing graph and picks its results with ``Choose(pred, x,
y)`` (``x if pred else y``, whole values: the v1 form, with a select)::

    %y = If(%p, %x)  then: Neg(%x)  else: Mul(%x, 0.5)

    %t = Neg(%x)                 Neg of floats never fails: it runs on %x as it is
    %s = Choose(%p, 1.0, %x)     Mul may warn (overflow): untaken, it runs on a
    %e = Mul(%s, 0.5)            stand-in constant, checked not to warn
    %y = Choose(%p, %t, %e)

Computing a branch the program does not take must never raise, warn,
allocate without limit or have an effect, so an ``If`` is lowered only if
(``_lowering``):

- its predicate is a bool scalar, it is stateless and has outputs, and no
  other op calls its branches (``graph_util.is_shared``);
- every op of its branches is a ``Const`` or an op that cannot raise
  (``hazards.never_raises``; its warnings are numpy's floating-point ones),
  calls no sub-graph (an inner ``If`` is lowered first, or the outer stays),
  and every tensor has a static shape of at most ``MAX_ELEMENTS`` elements;
- the ops that may warn (``hazards.never_fails`` false) run quietly on
  *stand-ins*: every branch input they depend on reaches them through
  ``Choose(%p, input, stand-in)`` (``Choose(%p, stand-in, input)`` in the
  else branch), and a stand-in (ones of the input's dtype and shape, else
  zeros) is used only if those ops computed on it here, under
  ``np.errstate(all="raise")``, as their kernel and as the Python operator
  the interpreter and jit call, neither raise nor warn: at run time they
  compute exactly those values again.  No stand-in works: the ``If`` stays;
- it pays: computing the untaken branch (and the ``Choose`` ops) costs less
  than the call it saves (``COSTS``, measured on the interpreter).

The taken branch computes what the ``If`` computed, on the same values with
the same kernels: its results, errors and warnings are the program's; the
results have the ``If``'s dtypes, shapes and weak flags.  The pass is on for
the interpreter and the parallel runner; ``jit_compile`` and the JAX backend,
for which a branch costs nothing, keep the ``If`` (``optimize(...,
lower_ifs=False)``), and so do a ``While`` body, which the interpreter
compiles once the loop is hot (``exec/tiering.py``), and a graph the
parallel runner may run on threads (``threaded``), whose steps cost more.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from autograph.runtime.core import backend, dtypes, opdef, shapes
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.exec import interpreter, parallel
from autograph.runtime.optimizer import graph_util, hazards, inline
from autograph.runtime.optimizer.rewrite import has_rule, rewrite

MAX_ELEMENTS = 1024

# Interpreter time, in units of one step on numpy scalars (~0.1 us; measured with
# ``benchmarks/v1_lowering.py``: an If costs ~0.7 us beyond its ops, an op on a small array ~0.4 us).
COSTS = {
    "if": 7.0,  # calling a branch's plan, beyond its ops
    "choose": 1.0,
    "scalar": 1.0,  # an op on 0-d values
    "array": 4.0,  # an op on a small array (plus 1 per ARRAY_ELEMENTS elements)
}
ARRAY_ELEMENTS = 256

STAND_INS = (1, 0)  # fill values tried in turn


def _small(t) -> bool:
    return t.shape is not None and shapes.is_fully_defined(t.shape) and math.prod(t.shape) <= MAX_ELEMENTS


def _may_run_untaken(op) -> bool:
    """An op that no value makes raise, whose warnings (if any) are numpy's floating-point
    ones, which a stand-in can be checked against: not a cast from complex numbers (a
    ``ComplexWarning`` for any value), nothing of an empty array (``Mean``: a warning)."""
    if op.type == "Const" or hazards.never_fails(op):
        return True
    if not hazards.never_raises(op) or (op.type == "Cast" and op.inputs[0].dtype.kind == "c"):
        return False
    return all(math.prod(t.shape) > 0 for t in (*op.inputs, *op.outputs))


def _branch_ops(branch, args):
    """The ops of ``branch`` but its placeholders, if every one may run untaken, or None."""
    for placeholder, arg in zip(branch.all_inputs, args):
        if (arg.dtype, arg.shape, arg.weak) != (placeholder.dtype, placeholder.shape, placeholder.weak):
            return None
    inside = {id(t) for op in branch.operations for t in op.outputs}
    if not all(isinstance(t, Tensor) and id(t) in inside for t in branch.outputs):
        return None
    ops = []
    for op in branch.operations:
        if op.type == "Placeholder":
            if not _small(op.outputs[0]):
                return None
            continue
        if (op.control_inputs or graph_util.is_functional(op) or graph_util.is_stateful(op)
                or not all(_small(t) for t in (*op.inputs, *op.outputs)) or not _may_run_untaken(op)):
            return None
        ops.append(op)
    return ops


def _cost(op) -> float:
    if op.type == "Const":
        return 0.0
    if all(t.shape == () for t in (*op.inputs, *op.outputs)):
        return COSTS["scalar"]
    return COSTS["array"] + max(math.prod(t.shape) for t in op.outputs) / ARRAY_ELEMENTS


def _guarded_inputs(branch, ops) -> list:
    """The placeholders of ``branch`` that an op which may warn depends on."""
    found, seen = [], set()
    stack = [t for op in ops if not hazards.never_fails(op) for t in op.inputs]
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        if t.op.type == "Placeholder":
            found.append(t)
        else:
            stack.extend(t.op.inputs)
    order = {id(p): i for i, p in enumerate(branch.all_inputs)}
    return sorted(found, key=lambda p: order[id(p)])


def _runtime_value(value):
    """A value as the interpreter holds it: a 0-d one as a numpy scalar."""
    return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value


def _quiet_result(op, values):
    """``op``'s outputs on ``values`` if neither its kernel nor its Python operator raises or
    warns on them and they have its dtypes and shapes, else None."""
    kernel = backend.get().kernels.get(op.type)
    if kernel is None:
        return None
    forms = [functools.partial(kernel, **op.attrs) if op.attrs else kernel]
    if not op.attrs and op.type in interpreter.PYTHON_OPERATORS:
        forms.append(interpreter.PYTHON_OPERATORS[op.type])
    outputs = None
    for form in forms:
        try:
            with np.errstate(all="raise"):
                result = form(*values)
        except Exception:  # noqa: BLE001 - any failure: this stand-in does not do
            return None
        results = result if len(op.outputs) > 1 else (result,)
        if len(results) != len(op.outputs) or any(
            np.asarray(v).dtype != t.dtype or np.shape(v) != t.shape for v, t in zip(results, op.outputs)
        ):
            return None
        outputs = outputs or [_runtime_value(v) for v in results]
    return outputs


def _stand_ins(ops, guarded, fill):
    """id(placeholder) -> its stand-in array, if the ops that may warn are quiet on them."""
    stand_ins = {id(p): np.full(p.shape, fill, p.dtype) for p in guarded}
    env = {key: _runtime_value(value) for key, value in stand_ins.items()}
    for op in ops:
        if op.type == "Const":
            env[id(op.outputs[0])] = _runtime_value(op.attrs["value"])
            continue
        if any(id(t) not in env for t in op.inputs):  # it reads an input that is not guarded:
            if hazards.never_fails(op):  # as it should, for it never fails
                continue
            return None
        outputs = _quiet_result(op, [env[id(t)] for t in op.inputs])
        if outputs is None:
            return None
        env.update((id(t), v) for t, v in zip(op.outputs, outputs))
    return stand_ins


def _lowering(op):
    """``[(branch, its ops, its stand-ins)]`` for the then and else branches, or None."""
    pred = op.inputs[0]
    if (pred.dtype != dtypes.bool_ or pred.shape != () or not op.outputs or op.control_inputs
            or graph_util.is_stateful(op)):
        return None
    branches, cost, chooses = [], 0.0, len(op.outputs)
    for branch in graph_util.subgraphs(op):
        ops = None if graph_util.is_shared(branch) else _branch_ops(branch, op.inputs[1:])
        if ops is None:  # (a function other ops call too is never inlined: a graph file's chain
            return None  # of Ifs calling one function twice would double at every level)
        guarded = _guarded_inputs(branch, ops)
        branches.append((branch, ops, guarded))
        cost = max(cost, sum(_cost(o) for o in ops))
        chooses += len(guarded)
    if cost + COSTS["choose"] * chooses >= COSTS["if"]:
        return None
    found = []
    for branch, ops, guarded in branches:
        stand_ins = next((s for s in (_stand_ins(ops, guarded, f) for f in STAND_INS) if s is not None), None)
        if stand_ins is None:
            return None
        found.append((branch, ops, stand_ins))
    return found


def _choose(rw, pred, x, y, like, location):
    """A new ``Choose(pred, x, y)`` typed as tensor ``like``."""
    op = graph_util.new_op(rw.graph, "Choose", [pred, x, y], {}, [(like.dtype, like.shape, like.weak)],
                           location=location, name="choose")
    rw.emit(op)
    return op.outputs[0]


def _inline(rw, op, branch, ops, stand_ins, taken):
    """Copies ``ops`` of ``branch`` before ``op``; returns its outputs in the enclosing graph.
    ``taken``: the value of the predicate for which this branch runs."""
    pred, local = op.inputs[0], {}
    for placeholder, arg in zip(branch.all_inputs, op.inputs[1:]):
        value = stand_ins.get(id(placeholder))
        if value is None:
            local[id(placeholder)] = arg
            continue
        const = graph_util.const_op(rw.graph, value, arg.weak, location=op.location)
        rw.emit(const)
        stand_in = const.outputs[0]
        pair = (arg, stand_in) if taken else (stand_in, arg)
        local[id(placeholder)] = _choose(rw, pred, *pair, arg, op.location)
    inline.copy_in(rw, ops, local)
    return [local[id(t)] for t in branch.outputs]


def _lower_if(rw, op):
    found = _lowering(op)
    if found is None:
        return None
    (then_graph, then_ops, then_in), (else_graph, else_ops, else_in) = found
    then_out = _inline(rw, op, then_graph, then_ops, then_in, True)
    else_out = _inline(rw, op, else_graph, else_ops, else_in, False)
    results = []
    for out, t, e in zip(op.outputs, then_out, else_out):
        same = t is e and (t.dtype, t.shape, t.weak) == (out.dtype, out.shape, out.weak)
        results.append(t if same else _choose(rw, op.inputs[0], t, e, out, op.location))
    return results


RULES = {"If": _lower_if}


def in_loop(graph) -> bool:
    """Whether ``graph`` is (inside) the condition or body of a ``While``."""
    while graph.outer is not None:
        callers = [op for op in graph.outer.operations if any(sub is graph for sub in graph_util.subgraphs(op))]
        if any(op.type == "While" for op in callers):
            return True
        graph = graph.outer
    return False


def threaded(graph) -> bool:
    """Whether the parallel runner may run ``graph`` on threads (a root graph with two heavy
    steps, ``exec/parallel.py``), where a step costs several times what it costs the
    interpreter: there a lowered ``If``'s three or four steps cost more than its one."""
    heavy = (op for op in graph.operations if opdef.cost_of(op) >= parallel.HEAVY_COST)
    return graph.outer is None and next(heavy, None) is not None and next(heavy, None) is not None


def run(graph) -> bool:
    """Lowers the small stateless ``If`` ops of ``graph`` (not its sub-graphs); True if it changed."""
    if not has_rule(graph, RULES) or in_loop(graph) or threaded(graph):
        return False
    return rewrite(graph, RULES)
