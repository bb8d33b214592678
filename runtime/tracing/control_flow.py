"""Tracing functional control flow: branches and loop bodies into sub-graphs.

``build_cond`` traces two branches and emits an ``If``; ``build_while``
traces a loop condition and body and emits a ``While`` (the ops are defined
in ``ops/control_flow``).  ``rt.cond``, ``rt.while_loop`` and the operators of
converted code all go through them.

Rules:

* Branch outputs: every output must exist in both branches with the same
  dtype; shapes merge to the most specific shape covering both (``[3]`` and
  ``[4]`` give ``[?]``).  Python values equal in both branches pass through
  without becoming tensors; Python numbers that differ become tensors.
* Weak typing (NEP 50, ``Tensor.weak``): Python numbers and weakly typed
  tensors take the dtype of a strongly typed counterpart: ``x = 0`` in one
  branch and an int32 tensor in the other gives an int32 output.  An output
  that is weakly typed in both branches (``y = 1.0`` / ``y = 2.0``) is a
  weakly typed ``If`` output, so ``y * x`` with a float32 ``x`` is float32,
  as in Python.
* Loop variables keep their dtype: a tensor whose dtype changes across an
  iteration is a ``TracingError`` (cast it before the loop).  A variable
  that starts as a Python number (or a weak tensor) stays weakly typed
  while the body keeps it a number (``n = 0; for ...: n += 1`` is a weak
  counter, so ``s / n`` keeps a float32 ``s`` float32); it takes the dtype
  a tensor in the loop gives it (``i = 0; while i < n: i += 1`` with an
  int32 ``n`` gives an int32 ``i``), and becomes strongly typed, with the
  body traced again, when the body makes it a strongly typed tensor
  (``t = 0.0; while ...: t = t + x`` with a float32 ``x`` gives a float32
  ``t``).
* Shapes: a loop variable whose static shape changes across an iteration
  is **relaxed automatically**: the dimensions that change become unknown
  (``None``; a changing rank becomes an unknown rank) and the body is traced
  again with the relaxed shape.  ``shape_invariants`` states a shape up
  front instead; a body result that does not fit a stated invariant is a
  ``TracingError``.
* Undefined variables (the operators' ``Undefined``): one defined in only
  one branch, or first assigned in a tensor loop and used after it, is a
  ``TracingError`` naming it and the statement.  The return lowering's
  ``UndefinedReturnValue`` (a return value set on every path that reaches
  the end of the function) is filled with zeros where it is still unset.
* Python values the body leaves alone pass through the loop unchanged; a
  Python list the body appends to is staged (``staged_list``); any other
  Python value the body changes is a ``TracingError``.
* The body is traced more than once when needed (a first trace discovers
  which Python values become tensors, further traces relax shapes), so
  Python side effects in a tensor loop body (a Python ``print``) may run
  more than once while tracing; ``rt.print`` runs once per iteration.
  Library functions of traces that are thrown away are removed again.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import nest
from autograph.runtime import ops
from autograph.runtime.core import dtypes, opdef, shapes
from autograph.runtime.ops import apply
from autograph.runtime.tracing import staged_list
from autograph.runtime.errors import TracingError
from autograph.runtime.core.graph import Graph, current_graph
from autograph.runtime.core.tensor import (
    KIND_NUMBERS,
    Tensor,
    TensorSpec,
    is_python_number,
    is_weak,
    weak_number,
)

__all__ = ["build_cond", "build_while", "as_predicate", "is_undefined", "is_return_placeholder",
           "expand_return_placeholder",
           "UndefinedReturnValue"]

_MAX_TRACES = 10


# --------------------------------------------------------------------------
# Values: what kind of leaf a control-flow value is
# --------------------------------------------------------------------------


def is_undefined(value) -> bool:
    """True for the operators' ``Undefined`` placeholder of an unbound variable."""
    return type(value).__name__ == "Undefined"


class UndefinedReturnValue:
    """The initial value of the return variable of a function that returns on every path.

    The return lowering initializes ``retval_`` with it when every path of the
    original function ends in a ``return``: the value is then always replaced
    before the function returns, so a tensor ``if``/loop may give it any
    value where it is still unset.  Control flow fills it with zeros of the
    dtype and shape the other branch (or the loop body) gives it, instead of
    raising the error an ``Undefined`` variable gets.  It is recognized by
    class name, so the operators may define their own.
    """

    __slots__ = ()

    def __repr__(self):
        return "UndefinedReturnValue()"


def is_return_placeholder(value) -> bool:
    return type(value).__name__ == "UndefinedReturnValue"


def _zeros_like_value(value, dtype, weak=False):
    """A Const of zeros shaped like ``value`` (unknown dimensions become 0) in the current graph."""
    shape = shapes.as_shape(getattr(value, "shape", ())) if not is_python_number(value) else ()
    shape = () if shape is None else tuple(0 if d is None else d for d in shape)
    return apply.constant(np.zeros(shape, dtype), dtype, weak=weak and shape == ())


def _is_numeric_array(value) -> bool:
    return isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "biuf"


def _is_strong(value) -> bool:
    """A strongly typed tensor or numpy value."""
    return (isinstance(value, Tensor) and not value.weak) or _is_numeric_array(value)


def _same_python(a, b) -> bool:
    """True if two non-tensor values are the same for control flow purposes."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (bool, int, float, str, bytes, type(None))):
        return bool(a == b)
    return False


def _describe_value(value) -> str:
    if isinstance(value, Tensor):
        weak = "weakly typed " if value.weak else ""
        return f"a {weak}{value.dtype.name}{shapes.format_shape(value.shape)} tensor"
    if is_undefined(value):
        return "undefined"
    if _is_numeric_array(value):
        return f"the numpy {value.dtype.name} value {value!r}"
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"the Python {type(value).__name__} {text}"


def _weak_dtype(*values) -> np.dtype:
    """The dtype of weakly typed values combined: numpy's for Python numbers, a weak tensor's own."""
    return dtypes.result_type(*[v.dtype if isinstance(v, Tensor) else v for v in values])


def _to_tensor_in(graph, value, dtype, weak=False):
    """``value`` as a tensor of ``graph`` with ``dtype`` (capturing, casting or making a Const).

    ``weak``: a Python number becomes a weakly typed Const, a cast keeps weak typing.
    """
    with graph.as_default():
        if isinstance(value, Tensor):
            value = apply.capture(graph, value)
            if value.dtype != dtype:
                value = ops.cast(value, dtype, weak=weak and value.weak)
            return value
        return apply.constant(value, dtype, weak=weak and is_python_number(value))


def as_predicate(value, where: str):
    """``value`` as a scalar bool tensor of the current graph, with Python truth semantics."""
    if is_undefined(value):
        raise TracingError(
            f"the condition of {where} reads the variable '{value.symbol_name}', which is not defined "
            f"there. Assign it before {where.split(' at ')[0]}."
        )
    if isinstance(value, Tensor):
        value = apply.capture(current_graph(), value)
        if value.shape is not None and any(d != 1 for d in value.shape):
            raise TracingError(
                f"the condition of {where} is a tensor of shape {shapes.format_shape(value.shape)} "
                f"({value.name}); it must hold a single value. Reduce it with rt.reduce_any(...) or "
                "rt.reduce_all(...)."
            )
        if value.dtype != dtypes.bool_:
            value = ops.not_equal(value, 0)
        return value
    if _is_numeric_array(value) and value.size != 1:
        raise TracingError(
            f"the condition of {where} is a numpy array of shape {value.shape}; it must hold a single "
            "value. Reduce it with .any() or .all()."
        )
    return apply.constant(bool(value), dtypes.bool_)


# --------------------------------------------------------------------------
# Sub-graph bookkeeping
# --------------------------------------------------------------------------


def _unify_captures(graphs) -> list:
    """Makes every graph capture the same outer tensors in the same order; returns them."""
    order, seen = [], set()
    for g in graphs:
        for outer_tensor, _ in g.captures:
            if id(outer_tensor) not in seen:
                seen.add(id(outer_tensor))
                order.append(outer_tensor)
    position = {id(t): i for i, t in enumerate(order)}
    for g in graphs:
        have = {id(outer_tensor) for outer_tensor, _ in g.captures}
        for t in order:
            if id(t) not in have:
                apply.capture(g, t)
        g.captures.sort(key=lambda pair: position[id(pair[0])])
    return order


def _drop_new_functions(outer, before: set) -> None:
    """Forgets library functions added by a trace that is thrown away."""
    for name in [n for n in outer.library if n not in before]:
        del outer.library[name]


def _trace(name, outer, fn, *args):
    """Runs ``fn(*args)`` with a new sub-graph of ``outer`` as the current graph."""
    graph = Graph(name, outer=outer)
    with graph.as_default():
        result = fn(graph, *args)
    return graph, result


def _emit(op_type, inputs, attrs, graphs):
    stateful = any(g.is_stateful() for g in graphs)
    result = apply.apply_op(op_type, inputs, attrs, stateful=stateful)
    if isinstance(result, tuple):
        return list(result)
    return [result]


# --------------------------------------------------------------------------
# cond
# --------------------------------------------------------------------------


def _stack_differing_lists(then_out, else_out, then_g, else_g):
    """Top-level lists that differ in length between branches become stacked tensors."""
    then_out, else_out = list(then_out), list(else_out)
    for i, (a, b) in enumerate(zip(then_out, else_out)):
        if type(a) is list and type(b) is list and len(a) != len(b):
            like = a if a else b
            with then_g.as_default():
                then_out[i] = staged_list.stack(a, like=like)
            with else_g.as_default():
                else_out[i] = staged_list.stack(b, like=like)
    return then_out, else_out


def build_cond(pred, true_fn, false_fn, *, labels, where, stage_lists=False):
    """Traces both branches and emits an ``If``; returns the merged outputs.

    ``true_fn``/``false_fn`` return a sequence with one (possibly nested)
    entry per name in ``labels``; the result has the same entries, with
    tensors for the outputs of the ``If`` and the Python values both branches
    agree on.  ``where`` (``"the if at f.py:3"``) is used in error messages.
    With ``stage_lists``, top-level lists of different lengths become stacked
    tensors (a list appended to in one branch only).
    """
    outer = current_graph()
    pred = as_predicate(pred, where)
    then_g, then_out = _trace("if_true", outer, lambda g: list(true_fn()))
    else_g, else_out = _trace("if_false", outer, lambda g: list(false_fn()))
    if stage_lists:
        then_out, else_out = _stack_differing_lists(then_out, else_out, then_g, else_g)

    results = []
    then_flat, else_flat, slots = [], [], []  # slots: (entry, leaf index, dtype)
    for index, (label, a, b) in enumerate(zip(labels, then_out, else_out)):
        a, b = expand_return_placeholder(a, b), expand_return_placeholder(b, a)
        diff = nest.mismatch(a, b)
        missing = nest.missing_key(a, b) if diff is not None else None
        if missing is not None:
            path, in_true = missing
            only, other = ("true", "false") if in_true else ("false", "true")
            raise TracingError(
                f"'{label}{path}' is set only in the {only} branch of {where}; a tensor if must give a dict "
                f"the same keys on both paths. Set {label}{path} before the if, or in the {other} branch too."
            )
        if diff is not None:
            raise TracingError(
                f"'{label}' has a different structure in the two branches of {where}: {diff} (true "
                "branch vs false branch). Make both branches give it the same structure."
            )
        leaves_a, leaves_b = nest.flatten(a), nest.flatten(b)
        merged = list(leaves_a)
        for j, (path, x, y) in enumerate(zip(nest.leaf_paths(a), leaves_a, leaves_b)):
            merged_type = _merge_dtype(label + path, x, y, where)
            if merged_type is not None:
                dtype, weak = merged_type
                then_flat.append(_branch_tensor(then_g, x, y, dtype, weak))
                else_flat.append(_branch_tensor(else_g, y, x, dtype, weak))
                slots.append((index, j))
        results.append((a, merged))

    then_g.outputs, else_g.outputs = then_flat, else_flat
    captured = _unify_captures([then_g, else_g])
    then_name = outer.add_function(then_g, "if_true")
    else_name = outer.add_function(else_g, "if_false")
    outputs = _emit("If", [pred, *captured], {"then_branch": then_name, "else_branch": else_name}, [then_g, else_g])
    for (index, j), tensor in zip(slots, outputs):
        results[index][1][j] = tensor
    return [nest.pack_as(structure, merged) for structure, merged in results]


def expand_return_placeholder(value, like):
    """An unset return value shaped like the nested value ``like`` (one placeholder per leaf).

    A function may return a tuple on one path; where the return value is
    still unset it takes that structure, each leaf filled with zeros.
    """
    if is_return_placeholder(value) and nest.is_nested(like):
        return nest.pack_as(like, [value] * len(nest.flatten(like)))
    return value


def _branch_tensor(graph, value, other, dtype, weak):
    """The branch graph's output for ``value`` (zeros for a still unset return value)."""
    if is_return_placeholder(value):
        with graph.as_default():
            return _zeros_like_value(other, dtype, weak)
    return _to_tensor_in(graph, value, dtype, weak)


def _merge_dtype(label, a, b, where):
    """``(dtype, weak)`` of the ``If`` output merging ``a`` and ``b``; None if ``a`` passes through.

    Two weakly typed values merge weakly typed (numpy's dtype for both); a
    weak value next to a strong one takes the strong one's dtype (NEP 50).
    """
    if a is b:  # the same value in both branches (a tensor from outside them, or a Python value)
        return None
    unset_a, unset_b = is_return_placeholder(a), is_return_placeholder(b)
    if unset_a and unset_b:
        return None
    if unset_a or unset_b:
        other = b if unset_a else a
        if _is_strong(other):
            return other.dtype, False
        if is_weak(other):
            return _weak_dtype(other), True
    undefined_a, undefined_b = is_undefined(a), is_undefined(b)
    if undefined_a and undefined_b:
        return None
    if undefined_a or undefined_b:
        only = "false" if undefined_a else "true"
        raise TracingError(
            f"'{label}' must be defined in both branches of {where}; it is defined only in the {only} "
            f"branch. Assign {label} before the if or in both branches."
        )
    if not _is_strong(a) and not _is_strong(b):
        if _same_python(a, b):
            return None
        if is_weak(a) and is_weak(b):
            return _weak_dtype(a, b), True
        raise TracingError(
            f"'{label}' is {_describe_value(a)} in the true branch but {_describe_value(b)} in the false "
            f"branch of {where}; a tensor if can only merge tensors and numbers. Compute {label} outside "
            "the if, or make it a tensor in both branches."
        )
    if not all(_is_strong(v) or is_weak(v) for v in (a, b)):
        raise TracingError(
            f"'{label}' is {_describe_value(a)} in the true branch but {_describe_value(b)} in the false "
            f"branch of {where}; a tensor if can only merge tensors and numbers. Give {label} a tensor or "
            "a number in both branches."
        )
    strong = [v.dtype for v in (a, b) if _is_strong(v)]
    if len(strong) == 2 and strong[0] != strong[1]:
        raise TracingError(
            f"'{label}' is {strong[0].name} in the true branch but {strong[1].name} in the false branch of "
            f"{where}; both branches must give it the same dtype. Cast one of them, e.g. "
            f"rt.cast({label}, '{strong[1].name}')."
        )
    weak = [weak_number(v) for v in (a, b) if is_weak(v)]
    return dtypes.result_type(strong[0], *weak), False


# --------------------------------------------------------------------------
# while
# --------------------------------------------------------------------------


class _Slot:
    """What build_while knows about one flat loop value."""

    __slots__ = ("label", "init", "kind", "dtype", "shape", "invariant", "fill", "weak", "settled")

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
        self.dtype = None
        self.shape = None
        self.weak = False
        if isinstance(init, Tensor) or _is_numeric_array(init):
            self.kind = "weak" if is_weak(init) else "tensor"
            self.weak = is_weak(init)
            self.dtype = init.dtype
            self.shape = shapes.as_shape(init.shape)
        else:
            self.kind = "open"

    @property
    def is_loop_var(self) -> bool:
        return self.kind in ("tensor", "weak", "list")


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

    for _ in range(_MAX_TRACES):
        before = set(outer.library)
        cond_g, _ = _trace("while_cond", outer, _trace_cond, cond_fn, slots, where)
        body_g, changed = _trace("while_body", outer, _trace_body, body_fn, slots, where, stage_lists, cond_g)
        if not changed:
            break
        _drop_new_functions(outer, before)
    else:
        raise TracingError(
            f"the loop variables of {where} did not settle on fixed dtypes and shapes after {_MAX_TRACES} "
            "traces of the body. Give them explicit dtypes before the loop and shape_invariants."
        )

    loop_slots = [s for s in slots if s.is_loop_var]
    initial = [_initial_tensor(s, where) for s in loop_slots]
    captured = _unify_captures([cond_g, body_g])
    cond_name = outer.add_function(cond_g, "while_cond")
    body_name = outer.add_function(body_g, "while_body")
    attrs = {"cond": cond_name, "body": body_name}
    if maximum_iterations is not None:
        attrs["maximum_iterations"] = maximum_iterations
    outputs = iter(_emit("While", [*initial, *captured], attrs, [cond_g, body_g]))
    return [next(outputs) if s.is_loop_var else s.init for s in slots]


def _loop_inputs(graph, slots):
    """The values the traced cond/body sees: placeholders for loop variables."""
    values = []
    for s in slots:
        if s.is_loop_var:
            placeholder = graph.add_placeholder(s.dtype, s.shape, name="loop_var")
            placeholder.weak = s.weak
            values.append(placeholder)
        elif type(s.init) is list:
            values.append(list(s.init))  # the body may append to it: never to the user's list
        else:
            values.append(s.init)
    return values


def _trace_cond(graph, cond_fn, slots, where):
    values = _loop_inputs(graph, slots)
    graph.outputs = [as_predicate(cond_fn(values), where)]


def _trace_body(graph, body_fn, slots, where, stage_lists, cond_graph):
    """Traces the body; updates ``slots``; returns True if another trace is needed."""
    values = _loop_inputs(graph, slots)
    results = list(body_fn(list(values)))
    if len(results) != len(slots):
        raise TracingError(
            f"the body of {where} returns {len(results)} loop values but the loop has {len(slots)}; "
            "return the same structure as the loop variables."
        )
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
    if is_return_placeholder(init) and (_is_strong(after) or is_weak(after)):
        s.kind, s.fill = "weak", True
        s.dtype = after.dtype if _is_strong(after) else _weak_dtype(after)
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
    if after is init or _same_python(init, after):
        s.kind = "pass"
        return False
    if is_python_number(init) and (is_weak(after) or _is_strong(after)):
        s.kind = "weak"
        if _is_strong(after):
            s.dtype = _strong_dtype(after.dtype, np.asarray(init).dtype)
        elif isinstance(after, Tensor):
            s.dtype = _weak_dtype(init, after)
        else:
            s.dtype = _weak_dtype(init, after)  # numpy's default; _settle_weak_dtypes may narrow it
        s.weak = not _is_strong(after)
        s.shape = s.invariant if s.invariant is not None else ()
        return True
    raise TracingError(
        f"'{s.label}' is {_describe_value(init)} before {where} and {_describe_value(after)} after an "
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

    1. the dtype of the strongly typed tensor it is combined with in the
       condition or the body, if that is one dtype (``i = 0; while i < n``
       with an int32 ``n``: int32);
    2. else the dtype of the strongly typed tensors the loop condition
       computes with, if that is one dtype (a counter in ``while n > 1`` or
       ``for _ in range(n)`` with an int32 ``n``: int32), whatever else the
       body does;
    3. else numpy's default for its Python type (int64, float64).

    ``traced`` is ``[(cond graph, its loop placeholders), (body graph, ...)]``.
    """
    changed = False
    loop_vars = [s for s in slots if s.is_loop_var]
    cond_graph = traced[0][0]
    for index, s in enumerate(loop_vars):
        if not s.weak or s.settled or s.kind != "weak":
            continue
        s.settled = True
        kind = np.dtype(s.dtype).kind
        placeholders = [inputs[index] for _, inputs in traced]
        targets = {
            op.attrs["dtype"] for graph, _ in traced for op in graph.operations
            if op.type == "Cast" and any(op.inputs[0] is p for p in placeholders)
        }
        targets = {t for t in targets if np.dtype(t).kind == kind}
        if not targets:
            targets = {
                t.dtype for op in cond_graph.operations for t in (*op.inputs, *op.outputs)
                if not t.weak and np.dtype(t.dtype).kind == kind
            }
        if len(targets) == 1:
            (target,) = targets
            if target != s.dtype:
                s.dtype = target
                changed = True
    return changed


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
    dtype, elem_shape = staged_list.element_spec(elements, like, s.label, where)
    s.kind = "list"
    s.dtype = dtype
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
                f"'{s.label}' is a list appended to in {where} but becomes {_describe_value(value)} in the "
                "body; keep it a list."
            )
    if not (_is_strong(value) or is_weak(value)):
        raise TracingError(
            f"'{s.label}' is a {s.dtype.name} tensor before {where} but {_describe_value(value)} after an "
            f"iteration; a loop variable must stay a tensor of one dtype."
        )
    retrace = False
    if s.weak and _is_strong(value):
        # a weakly typed loop variable the body makes strongly typed takes that dtype: trace again
        s.weak = False
        s.dtype = _strong_dtype(value.dtype, s.dtype)
        retrace = True
    if s.weak:
        dtype = dtypes.result_type(s.dtype, value) if is_python_number(value) else value.dtype
        tensor = _to_tensor_in(graph, value, dtype, weak=True)
    elif is_weak(value):
        tensor = _to_tensor_in(graph, value, dtype=dtypes.result_type(s.dtype, weak_number(value)))
    else:
        tensor = _to_tensor_in(graph, value, value.dtype)
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
    if s.kind == "list":
        return staged_list.stack(list(s.init), dtype=s.dtype, elem_shape=None if s.shape is None else s.shape[1:],
                                 label=s.label, where=where)
    if isinstance(s.init, Tensor):
        if s.init.dtype != s.dtype:  # a weakly typed initial value that widened or became strongly typed
            return ops.cast(s.init, s.dtype, weak=s.weak)
        return s.init
    if s.fill:
        shape = () if s.shape is None else tuple(0 if d is None else d for d in s.shape)
        return apply.constant(np.zeros(shape, s.dtype), s.dtype, weak=s.weak and shape == ())
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


