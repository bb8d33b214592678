"""Tracing a tensor loop: condition and body into sub-graphs, one ``While`` op (``build_while``).

The rules (loop-variable dtypes and shapes, Python values, staged lists,
retracing) are stated in ``autograph.runtime.tracing``'s docstring.
"""

from __future__ import annotations

import contextlib

import numpy as np

from autograph.runtime import ops
from autograph.runtime.core import dtypes, shapes
from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.tensor import KIND_NUMBERS, Tensor, TensorSpec, is_python_number, is_weak, weak_number
from autograph.runtime.errors import TracingError
from autograph.runtime.ops import _common, apply, list_operators
from autograph.runtime.tracing import staged_list
from autograph.runtime.tracing.values import (
    as_predicate, describe_value, drop_new_functions, emit, is_numeric_array, is_return_placeholder, is_strong,
    is_undefined, same_python, to_tensor_in, trace_subgraph, unify_captures, weak_dtype,
)

__all__ = ["build_while"]

_MAX_TRACES = 10


class _Slot:
    """What build_while knows about one flat loop value."""

    __slots__ = ("label", "init", "kind", "dtype", "shape", "invariant", "fill", "weak", "settled", "speculative",
                 "unsettled_dtype", "evidence")

    # kind: 'tensor' (strongly typed loop variable), 'weak' (a Python number
    # or weak tensor that became a loop variable: its dtype may still widen),
    # 'list' (a staged list), 'pass' (a value the body leaves alone), 'open'
    # (not known yet: traced as its Python value).  ``weak``: the loop
    # variable is weakly typed (it started weak and the body keeps it weak).

    def __init__(self, label, init, invariant):
        self.label = label
        self.init = init
        self.invariant = invariant
        self.fill = False  # the initial value is zeros (an unset return value)
        self.settled = False  # a weak variable's dtype was checked against its uses
        self.speculative = False  # a Python number traced as a weak loop variable before that is known
        self.unsettled_dtype = None  # a weak variable's dtype before it is settled (_settle_weak_dtypes)
        self.evidence = set()  # the dtypes ops gave its placeholders in this round's traces (_watching)
        self.dtype = None
        self.shape = None
        self.weak = False
        if isinstance(init, Tensor) or is_numeric_array(init):
            self.kind = "weak" if is_weak(init) else "tensor"
            self.weak = is_weak(init)
            self.dtype = init.dtype
            self.shape = shapes.as_shape(init.shape)
        else:
            self.kind = "open"

    @property
    def is_loop_var(self) -> bool:
        return self.kind in ("tensor", "weak", "list")

    def speculate(self):
        """Traces this Python int or float as a weak loop variable of numpy's default dtype from the
        first trace, instead of one trace on its Python value only to find out that it is one."""
        self.kind, self.weak, self.speculative = "weak", True, True
        self.dtype = np.asarray(self.init).dtype
        self.shape = self.invariant if self.invariant is not None else ()

    def unspeculate(self):
        self.kind, self.weak, self.speculative, self.settled = "open", False, False, False
        self.dtype = self.shape = self.unsettled_dtype = None

    @property
    def unsettled(self) -> bool:
        """A weakly typed loop variable whose dtype ``_settle_weak_dtypes`` has not settled yet (not a
        staged list of Python numbers: it keeps numpy's dtype until a strongly typed element joins)."""
        return self.kind == "weak" and self.weak and not self.settled and not getattr(self.init, "list_label", None)

    def list_label(self, where):
        """What messages call this slot if it is a staged list (one this loop stages, or one staged
        before it), else None."""
        if isinstance(self.init, Tensor) and self.init.list_label:
            return self.init.list_label
        return f"the staged list '{self.label}' of {where}" if self.kind == "list" else None


def _as_invariant(value, label, where):
    if value is None:
        return None
    if isinstance(value, TensorSpec):
        return value.shape
    try:
        return shapes.as_shape(value)
    except (TypeError, ValueError):
        raise TracingError(
            f"the shape invariant of '{label}' in {where} is {value!r}; give a shape such as (None, 3) "
            "or an rt.TensorSpec."
        ) from None


def build_while(cond_fn, body_fn, init, *, labels, where, invariants=None, maximum_iterations=None,
                stage_lists=False):
    """Traces ``cond_fn``/``body_fn`` into sub-graphs and emits a ``While``.

    ``init`` is the flat list of loop values (tensors and Python values);
    ``cond_fn(values)`` returns the loop condition and ``body_fn(values)``
    the next flat list of values.  Returns the flat list of final values:
    While outputs for loop variables, the unchanged Python value for values
    the body leaves alone.  ``labels`` name the values in error messages.
    With ``stage_lists``, a Python list the body appends to becomes a staged
    list (a tensor of the stacked elements).
    """
    outer = current_graph()
    invariants = invariants or [None] * len(init)
    slots = [_Slot(label, value, _as_invariant(invariant, label, where))
             for label, value, invariant in zip(labels, init, invariants)]
    for s in slots:
        if s.is_loop_var and s.invariant is not None:
            if not shapes.is_subshape(s.shape, s.invariant):
                raise TracingError(
                    f"'{s.label}' has shape {shapes.format_shape(s.shape)} before {where}, which does not fit "
                    f"its shape invariant {shapes.format_shape(s.invariant)}. Fix the invariant or the "
                    "initial value."
                )
            s.shape = s.invariant
    if isinstance(maximum_iterations, Tensor):
        return _while_with_counter(cond_fn, body_fn, init, labels=labels, where=where, invariants=invariants,
                                   maximum_iterations=maximum_iterations, stage_lists=stage_lists)
    if maximum_iterations is not None:
        maximum_iterations = int(maximum_iterations)

    for s in slots:
        if s.kind == "open" and type(s.init) in (int, float):
            s.speculate()
    for _ in range(_MAX_TRACES):
        before = set(outer.library)
        for s in slots:
            s.evidence.clear()
        try:
            cond_g, _ = trace_subgraph("while_cond", outer, _trace_cond, cond_fn, slots, where)
            if _guess_weak_dtypes(slots, cond_g):  # the condition alone decides most counters' dtypes
                drop_new_functions(outer, before)
                cond_g, _ = trace_subgraph("while_cond", outer, _trace_cond, cond_fn, slots, where)
            body_g, changed = trace_subgraph("while_body", outer, _trace_body, body_fn, slots, where, stage_lists,
                                             cond_g)
        except Exception:
            if not any(s.speculative for s in slots):
                raise
            changed = True  # traced again on the Python values, as if nothing had been speculated
            for s in slots:
                if s.speculative:
                    s.unspeculate()
        if not changed:
            break
        drop_new_functions(outer, before)
    else:
        raise TracingError(
            f"the loop variables of {where} did not settle on fixed dtypes and shapes after {_MAX_TRACES} "
            "traces of the body. Give them explicit dtypes before the loop and shape_invariants."
        )

    loop_slots = [s for s in slots if s.is_loop_var]
    initial = [_initial_tensor(s, where) for s in loop_slots]
    captured = unify_captures([cond_g, body_g])
    cond_name = outer.add_function(cond_g, "while_cond")
    body_name = outer.add_function(body_g, "while_body")
    attrs = {"cond": cond_name, "body": body_name}
    if maximum_iterations is not None:
        attrs["maximum_iterations"] = maximum_iterations
    outputs = iter(emit("While", [*initial, *captured], attrs, [cond_g, body_g]))
    final = [next(outputs) if s.is_loop_var else s.init for s in slots]
    for s, value in zip(slots, final):
        if s.is_loop_var:
            value.list_label = s.list_label(where)
    return final


def _loop_inputs(graph, slots, where):
    """The values the traced cond/body sees: placeholders for loop variables."""
    values = []
    for s in slots:
        if s.is_loop_var:
            placeholder = graph.add_placeholder(s.dtype, s.shape, name="loop_var")
            placeholder.weak = s.weak
            placeholder.list_label = s.list_label(where)
            values.append(placeholder)
        elif type(s.init) is list:
            values.append(list(s.init))  # the body may append to it: never to the user's list
        else:
            values.append(s.init)
    return values


@contextlib.contextmanager
def _watching(slots, values):
    """Records, while tracing, into each unsettled weak slot's ``evidence`` the dtypes that ops
    combining its placeholder with strongly typed operands give it (``_common.promote``)."""
    watched = [(s, v) for s, v in zip(slots, values) if s.unsettled]
    for s, v in watched:
        _common.watch_promotions(v, s.evidence)
    try:
        yield
    finally:
        for _, v in watched:
            _common.unwatch_promotions(v)


def _trace_cond(graph, cond_fn, slots, where):
    values = _loop_inputs(graph, slots, where)
    with _watching(slots, values):
        graph.outputs = [as_predicate(cond_fn(values), where)]


def _trace_body(graph, body_fn, slots, where, stage_lists, cond_graph):
    """Traces the body; updates ``slots``; returns True if another trace is needed."""
    values = _loop_inputs(graph, slots, where)
    with _watching(slots, values):
        results = list(body_fn(list(values)))
    if len(results) != len(slots):
        raise TracingError(
            f"the body of {where} returns {len(results)} loop values but the loop has {len(slots)}; "
            "return the same structure as the loop variables."
        )
    if _refuted(slots, values, results):
        return True
    # Python values the body turned into something else become loop variables;
    # the outputs of this trace are then meaningless (they were computed from
    # Python values), so only a trace that reclassifies nothing checks them.
    # Lists are decided last, from a trace where everything else is settled:
    # their element dtype comes from what the body appends.
    # Weak variables' dtypes are settled before lists too (a trace with the
    # default dtype is traced again with the settled one).
    pending = [(s, b, a) for s, b, a in zip(slots, values, results) if not s.is_loop_var]
    reclassified = False
    for s, before, after in pending:
        if type(s.init) is not list:
            reclassified |= _classify(s, before, after, where, stage_lists)
    if reclassified:
        return True
    loop_vars = sum(1 for s in slots if s.is_loop_var)
    cond_inputs = cond_graph.inputs[:loop_vars]
    body_inputs = [v for s, v in zip(slots, values) if s.is_loop_var]
    if _settle_weak_dtypes(slots, [(cond_graph, cond_inputs), (graph, body_inputs)]):
        return True
    for s, before, after in pending:
        if type(s.init) is list:
            reclassified |= _classify(s, before, after, where, stage_lists)
    if reclassified:
        return True
    changed = False
    outputs = []
    for s, after in zip(slots, results):
        if s.is_loop_var:
            tensor, retrace = _body_output(graph, s, after, where)
            outputs.append(tensor)
            changed |= retrace
    graph.outputs = outputs
    return changed


def _refuted(slots, values, results) -> bool:
    """Checks the speculated slots (``_Slot.speculate``) against the first trace: each must come
    out a tensor other than its placeholder (not a Python value).  True if one does not: then all
    go back to their Python values and the body is traced again."""
    speculated = [(s, before, after) for s, before, after in zip(slots, values, results) if s.speculative]
    if not speculated:
        return False
    refuted = any(after is before or not isinstance(after, Tensor) for _, before, after in speculated)
    for s, _, _ in speculated:
        if refuted:
            s.unspeculate()
        else:
            s.speculative = False
    return refuted


def _classify(s, before, after, where, stage_lists) -> bool:
    """Decides what an 'open'/'pass' slot is from what the body made of it; True if it changed."""
    init = s.init
    if is_undefined(init):
        if is_undefined(after):
            s.kind = "pass"
            return False
        raise TracingError(
            f"'{s.label}' is not defined before {where} but the loop assigns it and it is used after the "
            f"loop; a tensor loop may run zero times, so {s.label} needs a value before the loop. Assign "
            f"{s.label} before the loop (with the dtype and shape the loop gives it)."
        )
    if is_return_placeholder(init) and (is_strong(after) or is_weak(after)):
        # unset until the loop returns: zeros (an empty list, for a staged list) before that
        s.kind = "list" if isinstance(after, Tensor) and after.list_label else "weak"
        s.fill = True
        s.dtype = after.dtype if is_strong(after) else weak_dtype(after)
        s.weak = is_weak(after)
        s.shape = s.invariant if s.invariant is not None else shapes.as_shape(getattr(after, "shape", ()))
        return True
    if type(init) is list and stage_lists:
        unchanged = type(after) is list and after is before and len(after) == len(init) and all(
            x is y for x, y in zip(after, init)
        )
        if unchanged or (after is init):
            s.kind = "pass"
            return False
        _check_list_change(s, before, after, where)
        _stage_list_slot(s, after, where)
        return True
    if after is init or same_python(init, after):
        s.kind = "pass"
        return False
    if is_python_number(init) and (is_weak(after) or is_strong(after)):
        s.kind = "weak"
        if is_strong(after):
            s.dtype = _strong_dtype(after.dtype, np.asarray(init).dtype)
        elif isinstance(after, Tensor):
            s.dtype = weak_dtype(init, after)
        else:
            s.dtype = weak_dtype(init, after)  # numpy's default; _settle_weak_dtypes may narrow it
        s.weak = not is_strong(after)
        s.shape = s.invariant if s.invariant is not None else ()
        return True
    raise TracingError(
        f"'{s.label}' is {describe_value(init)} before {where} and {describe_value(after)} after an "
        "iteration; a tensor loop can only carry tensors and numbers whose dtype does not change. Give "
        f"{s.label} its final kind of value before the loop."
    )


def _strong_dtype(dtype, weak_dtype) -> np.dtype:
    """The dtype of a weak (``weak_dtype``) loop variable the body makes a strongly typed ``dtype`` tensor.

    NEP 50: the strong dtype, unless the weak value's kind is higher
    (``t = 0.0`` then an int32 tensor gives float64).
    """
    return dtypes.result_type(dtype, KIND_NUMBERS[np.dtype(weak_dtype).kind])


def _settle_weak_dtypes(slots, traced) -> bool:
    """Gives each weakly typed loop variable the dtype the loop gives it; True if one changed.

    The rule (NEP 50, applied to loop variables) for a variable that starts
    as a Python number and stays one (``steps = 0; ... steps += 1``): it
    takes, among the dtypes of its own kind (integer, floating),

    1. the dtype of the strongly typed tensors it is combined with (or cast
       to) in the condition or the body, if that is one dtype (``i = 0;
       while i < n`` with an int32 ``n``: int32);
    2. else, if it is combined with none, the dtype of the strongly typed
       tensors the loop condition computes with, if that is one dtype (a
       counter in ``while n > 1`` or ``for _ in range(n)`` with an int32
       ``n``: int32), whatever else the body does;
    3. else numpy's default for its Python type (int64, float64).

    The evidence is what the ops recorded (``_watching``), not the graph's
    casts, so it is the same whatever dtype the variable was traced with:
    ``_guess_weak_dtypes`` may trace the body with the dtype the condition
    alone gives, and a guess the rule confirms needs no other trace.
    ``traced`` is ``[(cond graph, its loop placeholders), (body graph, ...)]``.
    """
    changed = False
    loop_vars = [s for s in slots if s.is_loop_var]
    cond_graph = traced[0][0]
    for index, s in enumerate(loop_vars):
        if not s.unsettled:
            continue
        s.settled = True
        target = _weak_target(s, [(graph, inputs[index]) for graph, inputs in traced], cond_graph)
        if target != s.dtype:
            s.dtype = target
            changed = True
    return changed


def _guess_weak_dtypes(slots, cond_graph) -> bool:
    """Gives each unsettled weak loop variable the dtype ``_settle_weak_dtypes``' rule gives it from
    the condition alone, to trace the body with; True if one changed (trace the condition again)."""
    changed = False
    loop_vars = [s for s in slots if s.is_loop_var]
    for index, s in enumerate(loop_vars):
        if not s.unsettled:
            continue
        target = _weak_target(s, [(cond_graph, cond_graph.inputs[index])], cond_graph)
        if target != s.dtype:
            s.dtype = target
            changed = True
    return changed


def _weak_target(s, traced, cond_graph):
    """The dtype the rule of ``_settle_weak_dtypes`` gives slot ``s`` from its evidence and the
    ``(graph, placeholder)`` pairs it was traced as."""
    if s.unsettled_dtype is None:
        s.unsettled_dtype = s.dtype
    kind = np.dtype(s.unsettled_dtype).kind
    targets = set(s.evidence)
    targets.update(
        op.attrs["dtype"] for graph, placeholder in traced for op in graph.operations
        if op.type == "Cast" and op.inputs[0] is placeholder
    )
    targets = {t for t in targets if np.dtype(t).kind == kind}
    if not targets:
        targets = {
            t.dtype for op in cond_graph.operations for t in (*op.inputs, *op.outputs)
            if not t.weak and np.dtype(t.dtype).kind == kind
        }
    if len(targets) == 1:
        return np.dtype(next(iter(targets)))
    return s.unsettled_dtype


def _check_list_change(s, before, after, where):
    """Refuses list changes a staged list cannot represent.

    A staged list is one tensor of stacked elements: the body may update
    its items in place or build a list of the same length, and may grow it
    through ``append`` (``ag__.list_append``: the same list object, its
    items so far unchanged) or shrink it through ``pop``; anything else
    (``l = l + [x]``, ``l.insert(0, x)``) would later run tensor arithmetic
    where the program means list operations.
    """
    if type(after) is not list:
        return
    if after is not before and len(after) != len(s.init):
        raise TracingError(
            f"'{s.label}' is rebound to a list of another length in the body of {where}; a tensor loop can "
            f"only grow a list in place. Use {s.label}.append(...) instead of building a new list."
        )
    if after is before and len(after) > len(s.init) and not all(x is y for x, y in zip(after, s.init)):
        raise TracingError(
            f"'{s.label}' is changed other than by appending in the body of {where}; a tensor loop can grow "
            f"a list only with {s.label}.append(...). Build the list in another order, or use rt.concat."
        )


def _stage_list_slot(s, after, where):
    elements = list(s.init) + (list(after) if type(after) is list else [])
    like = after if isinstance(after, Tensor) else None
    dtype, elem_shape, weak = staged_list.element_spec(elements, like, s.label, where)
    s.kind = "list"
    s.dtype = dtype
    s.weak = weak
    s.shape = s.invariant if s.invariant is not None else (None, *elem_shape) if elem_shape is not None else None


def _body_output(graph, s, value, where):
    """The body graph's tensor for loop variable ``s``; (tensor, needs another trace)."""
    if is_undefined(value):
        raise TracingError(
            f"'{s.label}' becomes undefined in the body of {where}; assign it on every path through the body."
        )
    if s.kind == "list":
        if type(value) is list:
            with graph.as_default():
                value = staged_list.stack(value, dtype=s.dtype)
        elif not isinstance(value, Tensor):
            raise TracingError(
                f"'{s.label}' is a list appended to in {where} but becomes {describe_value(value)} in the "
                "body; keep it a list."
            )
    if not (is_strong(value) or is_weak(value)):
        raise TracingError(
            f"'{s.label}' is a {s.dtype.name} tensor before {where} but {describe_value(value)} after an "
            f"iteration; a loop variable must stay a tensor of one dtype."
        )
    retrace = False
    if s.weak and is_strong(value):
        # a weakly typed loop variable the body makes strongly typed takes that dtype: trace again
        s.weak = False
        s.dtype = (dtypes.staged_list_result_type(s.dtype, value.dtype) if s.kind == "list"
                   else _strong_dtype(value.dtype, s.dtype))
        retrace = True
    if s.weak:
        dtype = dtypes.result_type(s.dtype, value) if is_python_number(value) else value.dtype
        tensor = to_tensor_in(graph, value, dtype, weak=True)
    elif is_weak(value) and isinstance(value, Tensor) and value.list_label:  # Python numbers joining a list
        with graph.as_default():
            tensor = apply.capture(graph, value)
            tensor.list_label = value.list_label
            dtype = dtypes.staged_list_result_type(value.dtype, s.dtype)
            if tensor.dtype != dtype:
                tensor = list_operators.cast_numbers(tensor, dtype)
    elif is_weak(value):
        tensor = to_tensor_in(graph, value, dtype=dtypes.result_type(s.dtype, weak_number(value)))
    else:
        tensor = to_tensor_in(graph, value, value.dtype)
    if tensor.dtype != s.dtype:
        if s.kind == "tensor":
            example = f"rt.cast(<initial value>, '{tensor.dtype.name}')"
            if s.label.isidentifier():
                example = f"{s.label} = rt.cast({s.label}, '{tensor.dtype.name}')"
            raise TracingError(
                f"'{s.label}' is {s.dtype.name} before {where} but {tensor.dtype.name} after an iteration; a "
                f"loop variable must keep its dtype. Cast it before the loop, e.g. {example}, or cast the new "
                f"value in the body (rt.cast(..., '{s.dtype.name}'))."
            )
        # A weakly typed variable widens to hold both (monotonic, so retracing ends).
        joined = dtypes.result_type(s.dtype, tensor.dtype)
        if joined == s.dtype:
            with graph.as_default():
                tensor = ops.cast(tensor, s.dtype, weak=s.weak)
        else:
            s.dtype = joined
            retrace = True
    if not shapes.is_subshape(tensor.shape, s.shape):
        if s.invariant is not None:
            raise TracingError(
                f"'{s.label}' has shape {shapes.format_shape(tensor.shape)} after an iteration of {where}, "
                f"which does not fit its shape invariant {shapes.format_shape(s.invariant)}. Relax the "
                "invariant (None for a dimension that changes)."
            )
        s.shape = shapes.relax(s.shape, tensor.shape)
        retrace = True
    return tensor, retrace


def _initial_tensor(s, where):
    """The While input for loop variable ``s`` before the first iteration."""
    if s.fill and s.kind == "list":
        return staged_list.empty(s.dtype, None if s.shape is None else s.shape[1:], s.weak)
    if s.kind == "list":
        elem_shape = None if s.shape is None else s.shape[1:]
        if not s.init:
            return staged_list.empty(s.dtype, elem_shape, s.weak)
        return staged_list.stack(list(s.init), dtype=s.dtype, elem_shape=elem_shape, weak=s.weak, label=s.label,
                                 where=where)
    if isinstance(s.init, Tensor):
        if s.init.dtype != s.dtype:  # a weakly typed initial value that widened or became strongly typed
            return list_operators.cast_numbers(s.init, s.dtype, weak=s.weak)
        return s.init
    if s.fill:
        shape = () if s.shape is None else tuple(0 if d is None else d for d in s.shape)
        return apply.constant(np.zeros(shape, s.dtype), s.dtype, weak=s.weak)
    return apply.constant(s.init, s.dtype, weak=s.weak and is_python_number(s.init))


def _while_with_counter(cond_fn, body_fn, init, *, labels, where, invariants, maximum_iterations, stage_lists):
    """A While whose ``maximum_iterations`` is a tensor: an extra counter joins the condition."""
    limit = maximum_iterations
    counter0 = apply.constant(0, limit.dtype)

    def counted_cond(values):
        keep_going = as_predicate(cond_fn(values[1:]), where)
        return ops.logical_and(ops.less(values[0], limit), keep_going)

    def counted_body(values):
        return [values[0] + 1, *body_fn(values[1:])]

    final = build_while(counted_cond, counted_body, [counter0, *init], labels=["<iteration counter>", *labels],
                        where=where, invariants=[None, *invariants], stage_lists=stage_lists)
    return final[1:]
