"""``for x in ds:`` in converted code while tracing: one ``DatasetReduce`` op over the loop's state.

``for_stmt`` (the operator's contract: ``runtime/operators/statements.py``)
traces the loop body once against the element spec into the ``body``
graph, and the lowered ``break``/``return`` flags (``extra_test``) into the
``cond`` graph; the loop's state -- the variables the body modifies that
are live afterwards -- is the reduction state.  The state rules are the
tensor loops' (``runtime/tracing/loops.py``), applied here:

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

import numpy as np

from autograph.runtime.core import dtypes, shapes
from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import construct_at
from autograph.runtime.core.tensor import Tensor, is_python_number
from autograph.runtime.errors import TracingError
from autograph.runtime import ops
from autograph.runtime.ops import apply
from autograph.runtime.operators import state
from autograph.runtime.tracing.values import (
    as_predicate, describe_value, drop_new_functions, emit, is_numeric_array, is_return_placeholder, is_undefined,
    same_python, to_tensor_in, trace_subgraph, unify_captures,
)
from autograph.runtime.data import structure
from autograph.runtime.data.reduce_op import PipelineAttr

_MAX_TRACES = 10


class _Slot:
    """One flat state value: a loop variable (``dtype``/``shape``/``weak``) or a Python value."""

    __slots__ = ("label", "init", "loop_var", "dtype", "shape", "weak", "speculative", "fill")

    def __init__(self, label, init):
        self.label, self.init = label, init
        self.loop_var = self.weak = self.speculative = self.fill = False
        self.dtype = self.shape = None
        if isinstance(init, Tensor) or is_numeric_array(init):
            self.become(init.dtype, init.shape, weak=isinstance(init, Tensor) and init.weak)
        elif type(init) in (int, float):  # speculated a weak loop variable (most Python numbers are)
            self.become(np.asarray(init).dtype, (), weak=True)
            self.speculative = True

    def become(self, dtype, shape, weak):
        self.loop_var, self.dtype, self.shape, self.weak = True, np.dtype(dtype), shapes.as_shape(shape), weak

    def placeholder(self, graph):
        p = graph.add_placeholder(self.dtype, self.shape, name="state")
        p.weak = self.weak
        return p


def for_stmt(ds, extra_test, body, get_state, set_state, symbol_names, opts):
    """The graph path of ``for x in ds``: a ``DatasetReduce`` whose results bind the state."""
    where = construct_at("the for loop over a dataset")
    init = tuple(get_state())
    names = state.labels(symbol_names, init, opts)
    state.refuse_shared(init, names, where)

    def trace(init, staged):
        if staged:
            index = min(staged)
            raise TracingError(
                f"'{names[index]}' is a list that {where} grows or shrinks; a loop over a dataset carries a "
                "fixed state. Collect the values with Dataset.scan or batch(), or in a tensor."
            )
        flat, labels = state.flatten_state(init, names, staged)
        slots = [_Slot(label, value) for label, value in zip(labels, flat)]
        return _build(ds, slots, init, names, staged, extra_test, body, get_state, set_state, where)

    final, init, staged = state.trace_loop(trace, init)
    state.bind(set_state, init, state.pack_state(init, final, staged), names, where)


def _build(ds, slots, init, names, staged, extra_test, body, get_state, set_state, where):
    outer = current_graph()
    for _ in range(_MAX_TRACES):
        before = set(outer.library)
        cond_g, _ = trace_subgraph("dataset_cond", outer, _trace_cond, slots, init, staged, extra_test,
                                   set_state, where)
        body_g, changed = trace_subgraph("dataset_body", outer, _trace_body, ds, slots, init, names, staged,
                                         body, get_state, set_state, where)
        if not changed:
            break
        drop_new_functions(outer, before)
    else:
        raise TracingError(f"the state of {where} did not settle on fixed dtypes and shapes after {_MAX_TRACES} "
                           "traces of the body. Give the loop's variables their dtypes before the loop.")
    loop_slots = [s for s in slots if s.loop_var]
    initial = [_initial_tensor(s) for s in loop_slots]
    captured = unify_captures([cond_g, body_g])
    attrs = {"dataset": PipelineAttr(ds), "cond": outer.add_function(cond_g, "dataset_cond"),
             "body": outer.add_function(body_g, "dataset_body"), "n_state": len(loop_slots)}
    outputs = iter(emit("DatasetReduce", [*initial, *captured], attrs, [cond_g, body_g]))
    return [next(outputs) if s.loop_var else s.init for s in slots]


def _state_inputs(graph, slots):
    return [s.placeholder(graph) if s.loop_var else s.init for s in slots]


def _trace_cond(graph, slots, init, staged, extra_test, set_state, where):
    values = _state_inputs(graph, slots)
    set_state(state.fresh(state.pack_state(init, values, staged)))
    keep_going = True if extra_test is None else extra_test()
    if isinstance(keep_going, Tensor):
        graph.outputs = [as_predicate(keep_going, where)]
    else:
        graph.outputs = [apply.constant(bool(keep_going))]


def _trace_body(graph, ds, slots, init, names, staged, body, get_state, set_state, where):
    values = _state_inputs(graph, slots)
    element = [graph.add_placeholder(s.dtype, s.shape, name="element") for s in structure.flat(ds.element_spec)]
    set_state(state.fresh(state.pack_state(init, values, staged)))
    body(structure.pack(ds.element_spec, element))
    after = state.flatten_like(init, state.read_state(get_state, where), names, where, staged)
    changed = False
    outputs = []
    for s, placeholder, value in zip(slots, values, after):
        if not s.loop_var:
            changed |= _classify(s, value, where)
            continue
        if s.speculative and value is placeholder:  # a Python number the body leaves alone stays one
            s.loop_var = s.speculative = False
            changed = True
            continue
        tensor, retrace = _body_output(graph, s, value, where)
        outputs.append(tensor)
        changed |= retrace
    graph.outputs = outputs
    return changed


def _classify(s, after, where) -> bool:
    """What a Python-valued slot becomes from what the body made of it; True if it changed."""
    init = s.init
    if after is init or same_python(init, after) or (is_undefined(init) and is_undefined(after)):
        return False
    if is_undefined(init):
        raise TracingError(
            f"'{s.label}' is not defined before {where} but the loop assigns it and it is used after the loop; "
            f"the dataset may be empty, so {s.label} needs a value before the loop. Assign it before the loop."
        )
    numeric = isinstance(after, Tensor) or is_numeric_array(after) or is_python_number(after)
    if numeric and (is_return_placeholder(init) or type(init) in (bool, int, float)):
        if is_python_number(after):
            s.become(np.asarray(after).dtype, (), weak=True)
        else:
            weak = isinstance(after, Tensor) and after.weak
            dtype = after.dtype if is_return_placeholder(init) or weak else dtypes.result_type(after.dtype, init)
            s.become(dtype, () if not is_return_placeholder(init) else after.shape, weak)
        s.fill = is_return_placeholder(init)
        return True
    raise TracingError(
        f"'{s.label}' is {describe_value(init)} before {where} and {describe_value(after)} after an iteration; "
        "a loop over a dataset can only carry tensors and numbers whose dtype does not change. Give "
        f"{s.label} its final kind of value before the loop."
    )


def _body_output(graph, s, value, where):
    """The body graph's tensor for loop variable ``s``; (tensor, needs another trace)."""
    if not (isinstance(value, Tensor) or is_numeric_array(value) or is_python_number(value)):
        raise TracingError(
            f"'{s.label}' is a {s.dtype.name} tensor before {where} but {describe_value(value)} after an "
            "iteration; a loop variable must stay a tensor of one dtype."
        )
    weak = is_python_number(value) or (isinstance(value, Tensor) and value.weak)
    if is_python_number(value):
        dtype = dtypes.result_type(s.dtype if not s.weak else _example(s.dtype), value)
    else:
        dtype = value.dtype
    if s.weak:  # NEP 50: a weak variable takes a strong value's dtype, widened to keep its own kind
        target = dtypes.result_type(dtype, _example(s.dtype)) if not weak else dtypes.result_type(s.dtype, dtype)
    else:
        target = dtypes.result_type(s.dtype, _example(dtype)) if weak else dtype
    if target != s.dtype and not s.weak:
        raise TracingError(
            f"'{s.label}' is {s.dtype.name} before {where} but {target.name} after an iteration; a loop "
            f"variable must keep its dtype. Cast it before the loop or cast the new value in the body "
            f"(rt.cast(..., '{s.dtype.name}'))."
        )
    retrace = target != s.dtype or (s.weak and not weak)
    s.dtype, s.weak = target, s.weak and weak
    tensor = to_tensor_in(graph, value, s.dtype, weak=s.weak)
    if not shapes.is_subshape(tensor.shape, s.shape):
        s.shape, retrace = shapes.relax(s.shape, tensor.shape), True
    return tensor, retrace


def _example(dtype):
    """A Python number of ``dtype``'s kind: what a weakly typed value of it stands for (NEP 50)."""
    return np.zeros((), dtype).item()


def _initial_tensor(s):
    init = s.init
    if s.fill or is_return_placeholder(init):
        shape = tuple(0 if d is None else d for d in (s.shape or ()))
        return apply.constant(np.zeros(shape, s.dtype), s.dtype, weak=s.weak)
    if isinstance(init, Tensor):
        tensor = apply.capture(current_graph(), init)
        if tensor.dtype != s.dtype:
            tensor = ops.cast(tensor, s.dtype, weak=s.weak)
        return tensor
    return apply.constant(init, s.dtype, weak=s.weak and is_python_number(init))
