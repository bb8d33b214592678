"""Graph paths of the operators converted code calls, for symbolic tensors.

``autograph.runtime.operators`` runs Python control flow on Python values
and hands a call here, with the same arguments, when the condition or the
iterable is a ``Tensor`` (see its docstring for the state contract):

* ``if_stmt`` traces both branches into sub-graphs and emits an ``If``;
  ``while_stmt`` and ``for_stmt`` trace the condition and body and emit a
  ``While`` (``tracing.branches.build_cond`` / ``tracing.loops.build_while`` hold the rules:
  dtypes, shapes, Python values, undefined variables, staged lists);
* ``for_stmt`` loops (``operators/iterables.py``) over the first dimension of a tensor, over
  ``range_(t)`` (a ``iterables.TensorRange``) or ``rt.range`` (counted, not
  materialized), ``enumerate_`` and ``zip_`` of those, or a Python range or
  list handed over mid-loop, with a hidden counter; ``extra_test`` (lowered
  ``break`` and ``return`` flags) joins the loop condition;
* ``if_exp``, ``and_``, ``or_`` emit an ``If`` so the lazy operand runs
  only when Python would evaluate it -- except a bool ``and``/``or`` whose
  lazy operand is a cheap scalar expression that cannot fail, which becomes
  ``LogicalAnd``/``LogicalOr``; ``not_`` is ``LogicalNot``;
* builtins on tensors: ``range_``, ``len_`` (the static first dimension
  when known), ``abs_``, ``enumerate_``, ``zip_``, ``print_`` (``rt.print``,
  which prints at every execution); ``max``/``min``/``int``/``float``/...
  are ``operators/tensor_builtins.py``; what Python gives as a Python
  number -- ``len()``, the items of ``range()`` and the positions of
  ``enumerate()`` -- is a weakly typed tensor (NEP 50); iterating
  ``rt.range`` gives strongly typed numpy values, as ``np.arange`` does;
* ``list_append``/``list_pop`` on staged lists (``staged_list``) (``x[i] = v``
  on a tensor is ``ops/indexing.setitem``); ``assert_`` emits a stateful ``Assert``.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime import ops
from autograph.runtime.core import dtypes
from autograph.runtime.core.location import construct_at, user_location
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.errors import TracingError
from autograph.runtime.operators import aliases, iterables, outside_writes, raises, recursion, state
from autograph.runtime.operators.iterables import len_
from autograph.runtime.ops import apply, list_operators
from autograph.runtime.ops import state as effects
from autograph.runtime.tracing import staged_list
from autograph.runtime.tracing.branches import build_cond
from autograph.runtime.tracing.loops import build_while
from autograph.runtime.tracing.values import as_predicate

__all__ = [
    "if_stmt", "while_stmt", "for_stmt", "if_exp", "and_", "or_", "not_", "assert_",
    "range_", "len_", "abs_", "enumerate_", "zip_", "print_",
    "list_append", "list_pop",
]



# --------------------------------------------------------------------------
# State: the variables a statement changes, flattened to loop values
# --------------------------------------------------------------------------


# --------------------------------------------------------------------------
# if / while / for
# --------------------------------------------------------------------------


def if_stmt(cond, body, orelse, get_state, set_state, symbol_names, nouts, opts=None):
    """Graph path of ``if``: both branches traced, one ``If`` op, outputs bound by ``set_state``.

    The state is the ``nouts`` outputs followed by the names the branches
    use but that are dead after the ``if``: every branch starts from the
    same state, and afterwards the outputs take the ``If``'s results while
    the rest gets its values from before back.
    """
    if not isinstance(cond, Tensor):
        return body() if cond else orelse()
    # attributes and items calls in the branches change are added to the state (outside_writes)
    return outside_writes.as_state(lambda get, put, names, outs: _if_graph(cond, body, orelse, get, put, names, outs,
                                                                           opts),
                                   get_state, set_state, symbol_names, nouts)


def _if_graph(cond, body, orelse, get_state, set_state, symbol_names, nouts, opts):
    where = construct_at("the if")
    init = tuple(get_state())
    names = state.labels(symbol_names, init, opts)
    outside = outside_writes.Snapshot(symbol_names or (), (body, orelse))

    dead = []  # the branches that reached a staged raise (operators/raises.py)

    def branch(fn):
        def run():
            set_state(state.fresh(init))
            aliases.refuse_unseen(init, names, symbol_names or (), (fn,), where)
            try:
                with raises.branch():
                    fn()
            except raises.DeadBranch:
                outside.check(where)
                dead.append(fn)
                return raises.no_values(nouts)  # the outputs are the other branch's
            outside.check(where)
            return state.read_state(get_state, where)[:nouts]

        return run

    with recursion.guard(body, where):
        outputs = build_cond(cond, branch(body), branch(orelse), labels=names[:nouts], where=where, stage_lists=True)
    if len(dead) == 2:
        outputs = raises.both_branches_raise(init[:nouts])
    state.bind(set_state, init, tuple(outputs) + init[nouts:], names, where)


def _loop(where, get_state, set_state, symbol_names, opts, lead, lead_labels, test, step, bodies):
    """A ``While`` over the state, after the ``lead`` loop values (``for_stmt``'s hidden counter).

    ``test(lead_values)`` gives the condition and ``step(lead_values)`` runs the
    body and gives the next lead values; ``set_state`` has bound the state first.
    Attributes and items that calls in the body change are added to the state (``outside_writes``).
    """
    outside_writes.as_state(
        lambda get, put, names, _: _loop_graph(where, get, put, names, opts, lead, lead_labels, test, step, bodies),
        get_state, set_state, symbol_names, None)


def _loop_graph(where, get_state, set_state, symbol_names, opts, lead, lead_labels, test, step, bodies):
    init = tuple(get_state())
    names = state.labels(symbol_names, init, opts)
    state.refuse_shared(init, names, where)
    outside = outside_writes.Snapshot(symbol_names or (), bodies)
    opts = opts or {}
    k = len(lead)

    def trace(init, staged):
        flat, labels = state.flatten_state(init, names, staged)

        def cond_fn(values):
            set_state(state.pack_state(init, values[k:], staged))
            condition = test(values[:k])
            outside.check(where)
            return condition

        def body_fn(values):
            set_state(state.pack_state(init, values[k:], staged))
            aliases.refuse_unseen(init, names, symbol_names or (), bodies, where)
            new_lead = raises.run_body(step, values[:k])
            outside.check(where)
            return [*new_lead, *state.flatten_like(init, state.read_state(get_state, where), names, where, staged)]

        invariants = state.loop_invariants(opts, flat, labels, where)
        return build_while(cond_fn, body_fn, [*lead, *flat], labels=[*lead_labels, *labels], where=where,
                           invariants=None if invariants is None else [None] * k + invariants,
                           maximum_iterations=opts.get("maximum_iterations"), stage_lists=True)

    final, init, staged = state.trace_loop(trace, init)
    state.bind(set_state, init, state.pack_state(init, final[k:], staged), names, where)


def while_stmt(test, body, get_state, set_state, symbol_names, opts):
    """Graph path of ``while``: a ``While`` op whose loop variables are the state."""

    def step(lead):
        body()
        return []

    _loop(construct_at("the while loop"), get_state, set_state, symbol_names, opts, [], [], lambda lead: test(), step,
          (test, body))


def for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names, opts):
    """Graph path of ``for``: a ``While`` over a hidden counter that indexes the iterable."""
    where = construct_at("the for loop")
    sequence = iterables.as_sequence(iter_, where)
    length = sequence.length()
    counter0 = apply.constant(0, sequence.index_dtype, weak=True)  # an index: a Python int

    def test(lead):
        more = ops.less(lead[0], length)
        if extra_test is None:
            return more
        extra = extra_test()
        if isinstance(extra, Tensor):
            return ops.logical_and(more, as_predicate(extra, where))
        return more if extra else apply.constant(False)

    def step(lead):
        body(sequence.item(lead[0]))
        return [lead[0] + 1]

    _loop(where, get_state, set_state, symbol_names, opts, [counter0], ["<loop counter>"], test, step,
          (body, extra_test))


# --------------------------------------------------------------------------
# What a tensor for loop iterates over
# --------------------------------------------------------------------------


# --------------------------------------------------------------------------
# Expressions: a if c else b, and, or, not, assert
# --------------------------------------------------------------------------


def if_exp(cond, if_true, if_false, expr_repr):
    """``if_true() if cond else if_false()`` for a tensor ``cond``: an ``If``."""
    if not isinstance(cond, Tensor):
        return if_true() if cond else if_false()
    where = construct_at(f"the conditional expression `... if {expr_repr} else ...`")
    (value,) = build_cond(cond, lambda: (if_true(),), lambda: (if_false(),), labels=["value"], where=where)
    return value


def and_(a, b):
    """``a() and b()`` where ``a()`` is a tensor: ``b`` runs (in an ``If``) only when ``a`` is true."""
    value = a()
    if not isinstance(value, Tensor):
        return value and b()
    where = construct_at("the `and`")
    right, seen = _recording(b)
    (result,) = build_cond(value, right, lambda: (value,), labels=["result"], where=where)
    if _decided(seen, False, value, result):
        return False
    return _without_branching(result, value, "then_branch", "else_branch", "logical_and")


def or_(a, b):
    """``a() or b()`` where ``a()`` is a tensor: ``b`` runs (in an ``If``) only when ``a`` is false."""
    value = a()
    if not isinstance(value, Tensor):
        return value or b()
    where = construct_at("the `or`")
    right, seen = _recording(b)
    (result,) = build_cond(value, lambda: (value,), right, labels=["result"], where=where)
    if _decided(seen, True, value, result):
        return True
    return _without_branching(result, value, "else_branch", "then_branch", "logical_or")


def _recording(b):
    """``b`` as a branch function, and the list of the values it gave while traced."""
    seen = []

    def right():
        v = b()
        seen.append(v)
        return (v,)

    return right, seen


def _decided(seen, constant, value, result) -> bool:
    """True if a bool ``value and b`` (``constant`` False) or ``value or b`` (True) is ``constant``
    whatever ``value`` is, because ``b`` is that Python bool (``t > 0 and len(l) > 0`` with an
    empty ``l``): then the ``If`` is removed, and an ``if`` on it runs (and traces) one branch only,
    as in Python.  Otherwise False, and ``result`` stays."""
    if value.dtype != dtypes.bool_ or value.shape != () or not seen:
        return False
    if not all(type(v) in _PYTHON_BOOLS and bool(v) is constant for v in seen):
        return False
    op = result.op
    graph = op.graph
    if op.type != "If" or graph.operations[-1] is not op:
        return False
    graph.operations.pop()
    for attr in ("then_branch", "else_branch"):
        del graph.library[op.attrs[attr]]
    return True


_PYTHON_BOOLS = (bool, np.bool_)


# Ops that cannot fail and have no side effects: a right operand of and/or
# computed only with these, on scalars, needs no If -- evaluating it always
# gives the same result, more cheaply (LogicalAnd / LogicalOr).
_TOTAL_OPS = frozenset({
    "Const", "Identity", "Cast", "Add", "Sub", "Mul", "Neg", "Abs", "Square", "Maximum", "Minimum",
    "Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual",
    "LogicalAnd", "LogicalOr", "LogicalNot",
})


def _without_branching(result, value, operand_attr, passthrough_attr, logical_op):
    """Replaces the ``If`` of a bool ``and``/``or`` by ``LogicalAnd``/``LogicalOr`` when that is safe.

    Safe when the lazy operand's branch holds only ``_TOTAL_OPS`` on scalars
    and the other branch just passes ``value`` through.  The ``If`` was the
    last op added, so it is removed and its operand branch inlined.
    """
    op = result.op
    graph = op.graph
    if op.type != "If" or graph.operations[-1] is not op or len(op.outputs) != 1:
        return result
    if value.dtype != dtypes.bool_ or result.dtype != dtypes.bool_ or value.shape != ():
        return result
    operand = graph.library[op.attrs[operand_attr]]
    passthrough = graph.library[op.attrs[passthrough_attr]]
    pred = op.inputs[0]  # ``value`` in this graph
    outer_of = {id(inner): outer for outer, inner in operand.captures}
    passed = {id(inner): outer for outer, inner in passthrough.captures}.get(id(passthrough.outputs[0]))
    if passed is not pred:
        return result
    if operand.is_stateful() or any(o.type != "Placeholder" and o.type not in _TOTAL_OPS for o in operand.operations):
        return result
    if any(t.shape != () for o in operand.operations for t in o.outputs):
        return result
    graph.operations.pop()
    for attr in (operand_attr, passthrough_attr):
        del graph.library[op.attrs[attr]]
    rhs = _inline(operand, outer_of, graph)
    return getattr(ops, logical_op)(pred, rhs)


def _inline(sub_graph, outer_of, graph):
    """Copies the ops of ``sub_graph`` into ``graph`` (captures mapped by ``outer_of``); returns its output."""
    mapped = dict(outer_of)
    for op in sub_graph.operations:
        if op.type == "Placeholder":
            continue
        inputs = [mapped[id(t)] for t in op.inputs]
        copy = graph.add_op(op.type, inputs, op.attrs, [(t.dtype, t.shape) for t in op.outputs],
                            location=op.location, name=op.name)
        for old, new in zip(op.outputs, copy.outputs):
            new.weak = old.weak
            mapped[id(old)] = new
    return mapped[id(sub_graph.outputs[0])]


def not_(a):
    """``not a`` for a tensor: ``LogicalNot`` (``a == 0`` for numbers, as Python's truth)."""
    if not isinstance(a, Tensor):
        return not a
    if a.list_label:  # a staged list is false when empty, as a Python list
        return ops.equal(len_(a), 0)
    if a.shape != ():  # numpy's truth of an array: one element, else its ValueError when the graph runs
        from autograph.runtime.operators import tensor_builtins
        return ops.logical_not(tensor_builtins.bool_(a, "`not`"))
    if a.dtype == dtypes.bool_:
        return ops.logical_not(a)
    return ops.equal(a, 0)


def assert_(cond, message=None):
    """``assert cond, message()`` for a tensor ``cond``: a stateful ``Assert`` checked at every run."""
    if not isinstance(cond, Tensor):
        if not cond:
            raise AssertionError(message() if message is not None else None)
        return None
    location = user_location() or "<unknown>"
    text = message() if message is not None else None
    if isinstance(text, Tensor):
        text = f"assertion failed at {location} (message tensor {text.name})"
    elif text is None:
        text = f"assertion failed at {location}"
    else:
        text = str(text)
    if cond.dtype != dtypes.bool_:
        cond = ops.not_equal(cond, 0)
    apply.apply_op("Assert", [cond], {"message": text})
    return None


# --------------------------------------------------------------------------
# Builtins on tensors
# --------------------------------------------------------------------------


def range_(*args):
    """``range(...)`` with a tensor bound: a ``iterables.TensorRange`` that ``for_stmt`` loops over."""
    if not 1 <= len(args) <= 3:
        raise TypeError(f"range expected 1 to 3 arguments, got {len(args)}")
    if len(args) == 1:
        return iterables.TensorRange(0, args[0], 1)
    if len(args) == 2:
        return iterables.TensorRange(args[0], args[1], 1)
    return iterables.TensorRange(*args)


def abs_(x):
    return ops.abs(x)


def enumerate_(iterable, start=0):
    """``enumerate(t)``: pairs ``(index, row)`` that ``for_stmt`` loops over."""
    return iterables.Enumerate(iterables.as_sequence(iterable, construct_at("enumerate()")), start)


def zip_(*sources, strict=False):
    """``zip(a, b, ...)`` with tensors: tuples of rows that ``for_stmt`` loops over."""
    where = construct_at("zip()")
    if strict:
        raise TracingError(f"{where}: zip(strict=True) over tensors is not supported; check lengths first.")
    return iterables.Zip([iterables.as_sequence(x, where) for x in sources])


def print_(*args, sep=" ", end="\n", file=None, flush=False):
    """``print(...)`` with tensors: ``rt.print``, which prints at every execution of the graph."""
    del flush
    return effects.print(*args, sep=sep, end=end, output_stream=file)


# --------------------------------------------------------------------------
# Lists and item updates
# --------------------------------------------------------------------------


def list_append(target, item):
    """``l.append(x)`` on a staged list (a tensor of stacked elements)."""
    return staged_list.list_append(target, item)


def list_extend(target, items):
    """``l.extend(xs)`` on a staged list (or a Python list extended by rows of an unknown number,
    which is staged here): the items of ``xs`` (a list, or a tensor's rows) appended."""
    if type(target) is list:
        target = staged_list.stack(target, like=items, label="list", where=construct_at("the extend"))
    return list_operators.extended(target, items if isinstance(items, Tensor) else list(items))


def list_pop(target, index=None):
    """``l.pop(i)`` on a staged list: ``(rest, item)``."""
    return staged_list.list_pop(target, index)
