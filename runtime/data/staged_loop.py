"""``for x in ds:`` in converted code while tracing: one ``DatasetReduce`` op over the loop's state.

``for_stmt`` (the operator's contract: ``runtime/operators/loop_statements.py``)
traces the loop body once against the element spec into the ``body``
graph, and the lowered ``break``/``return`` flags (``extra_test``) into the
``cond`` graph; the loop's state -- the variables the body modifies that
are live afterwards -- is the reduction state.  The state rules are the
tensor loops', with their code: each flat state value is a
``tracing.loop_slots.Slot``, classified and checked as a ``While``'s, and
the rounds of traces are ``tracing.retrace``'s (``settle``, and
and ``restaging``):

* a tensor keeps its dtype (a change is a ``TracingError`` naming the
  variable); a dimension that changes is relaxed to unknown and the body
  traced again;
* a Python number is weakly typed and takes the dtype the body gives it
  (``total = 0; total += x`` sums in ``x``'s dtype); a Python value the
  body leaves alone stays that Python value;
* a variable undefined before the loop but assigned in it and used after
  it is a ``TracingError`` (the dataset may be empty), as is a Python value
  the body turns into something that is not a number or tensor;
* nested state (tuples, dicts, attributes) is flattened to its leaves; a
  list the body grows or shrinks is refused (use ``scan`` or a tensor).
"""

from __future__ import annotations

from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import construct_at
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.errors import TracingError
from autograph.runtime.ops import apply
from autograph.runtime.operators import aliases, container_identity, statement_state
from autograph.runtime.tracing import retrace
from autograph.runtime.tracing.loop_slots import (
    Slot, body_output, classify, initial_tensor, loop_inputs, refute_speculation,
)
from autograph.runtime.tracing.values import as_predicate, emit, trace_subgraph, unify_captures
from autograph.runtime.data import structure
from autograph.runtime.data.reduce_op import PipelineAttr

_ZERO_TRIPS = "the dataset may be empty"


def for_stmt(ds, extra_test, body, get_state, set_state, symbol_names, opts):
    """The graph path of ``for x in ds``: a ``DatasetReduce`` whose results bind the state."""
    where = construct_at("the for loop over a dataset")
    init = tuple(get_state())
    names = statement_state.labels(symbol_names, init, opts)
    statement_state.refuse_shared(init, names, where)
    found = []  # the last body trace's origins: which list or dict each of the state's is after it

    def trace(init, staged):
        if staged:
            index = min(staged)
            raise TracingError(
                f"'{names[index]}' is a list that {where} grows or shrinks; a loop over a dataset carries a "
                "fixed state. Collect the values with Dataset.scan or batch(), or in a tensor."
            )
        flat, labels = statement_state.flatten_state(init, names, staged)
        slots = [Slot(label, value) for label, value in zip(labels, flat)]
        for s in slots:
            if s.kind == "open" and type(s.init) in (int, float):  # most Python numbers become loop variables
                s.speculate()
        return _build(ds, slots, init, names, staged, extra_test, body, get_state, set_state, where, found)

    with aliases.copies_of_state():
        final, init, staged = retrace.restaging(trace, init)
    origins = container_identity.loop_origins(found[-1], init, names, where, statement_state.ROLES) if found else None
    statement_state.bind(set_state, init, statement_state.pack_state(init, final, staged), names, where, origins)


def _build(ds, slots, init, names, staged, extra_test, body, get_state, set_state, where, found):
    outer = current_graph()

    def trace_round(before):
        cond_g, _ = trace_subgraph("dataset_cond", outer, _trace_cond, slots, init, staged, extra_test,
                                   set_state, where)
        body_g, changed = trace_subgraph("dataset_body", outer, _trace_body, ds, slots, init, names, staged,
                                         body, get_state, set_state, where, found)
        return (cond_g, body_g), changed

    cond_g, body_g = retrace.settle(trace_round, outer, f"the state of {where}",
                                    "Give the loop's variables their dtypes before the loop.")
    loop_slots = [s for s in slots if s.is_loop_var]
    initial = [initial_tensor(s, where) for s in loop_slots]
    captured = unify_captures([cond_g, body_g])
    attrs = {"dataset": PipelineAttr(ds), "cond": outer.add_function(cond_g, "dataset_cond"),
             "body": outer.add_function(body_g, "dataset_body"), "n_state": len(loop_slots)}
    outputs = iter(emit("DatasetReduce", [*initial, *captured], attrs, [cond_g, body_g]))
    return [next(outputs) if s.is_loop_var else s.init for s in slots]


def _trace_cond(graph, slots, init, staged, extra_test, set_state, where):
    values = loop_inputs(graph, slots, where, name="state")
    set_state(statement_state.fresh(statement_state.pack_state(init, values, staged)))
    keep_going = True if extra_test is None else extra_test()
    if isinstance(keep_going, Tensor):
        graph.outputs = [as_predicate(keep_going, where)]
    else:
        graph.outputs = [apply.constant(bool(keep_going))]


def _trace_body(graph, ds, slots, init, names, staged, body, get_state, set_state, where, found):
    """Traces the body on one element; updates ``slots`` (and ``found``: the body's origins, which
    list or dict each of the state's is after it); returns True if another trace is needed."""
    values = loop_inputs(graph, slots, where, name="state")
    element = [graph.add_placeholder(s.dtype, s.shape, name="element") for s in structure.flat(ds.element_spec)]
    given = statement_state.fresh(statement_state.pack_state(init, values, staged))
    watch = container_identity.Watch(given)
    set_state(given)
    body(structure.pack(ds.element_spec, element))
    state = statement_state.read_state(get_state, where)
    found[:] = [watch.ended(state, init, names, where)]
    after = statement_state.flatten_like(init, state, names, where, staged)
    if refute_speculation(slots, values, after):  # a Python number the body leaves alone stays one
        return True
    changed = False
    outputs = []
    for s, before, value in zip(slots, values, after):
        if not s.is_loop_var:
            changed |= classify(s, before, value, where, stage_lists=False, zero_trips=_ZERO_TRIPS)
            continue
        tensor, retrace_ = body_output(graph, s, value, where)
        outputs.append(tensor)
        changed |= retrace_
    graph.outputs = outputs
    return changed
