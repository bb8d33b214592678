"""Functional control flow: the ``If`` and ``While`` ops, ``rt.cond`` and ``rt.while_loop``.

As in TensorFlow's control flow v2, a branch or a loop body is a separate
``Graph`` in the function library, and the op that runs it refers to it by
name:

* ``If(pred, *captures; then_branch, else_branch)`` -- both branch graphs
  take the same inputs (the union of what either captured from the
  enclosing graph) and produce the op's outputs.
* ``While(*loop_vars, *captures; cond, body, maximum_iterations)`` -- the
  ``cond`` and ``body`` graphs both take the loop variables followed by the
  union of their captures; ``body`` returns the next loop variables, the
  captures are loop-invariant and pass through unchanged.  The op's outputs
  are the final loop variables.

An ``If``/``While`` is stateful exactly when one of its sub-graphs is
(``graph.is_stateful()``), so automatic control dependencies keep side
effects inside branches and loops in program order.

Tracing rules (``build_cond`` / ``build_while``, shared by ``rt.cond``,
``rt.while_loop`` and the operators of converted code):

* Branch outputs: every output must exist in both branches with the same
  dtype; shapes merge to the most specific shape covering both (``[3]`` and
  ``[4]`` give ``[?]``).  Python values equal in both branches pass through
  without becoming tensors; Python numbers that differ become tensors,
  weakly typed (NEP 50): ``x = 0`` in one branch and an int32 tensor in the
  other gives an int32 output.
* Loop variables keep their dtype: a tensor whose dtype changes across an
  iteration is a ``TracingError`` (cast it before the loop).  A variable
  that starts as a Python number is weakly typed and takes the dtype of the
  tensor it becomes in the body (``i = 0; while i < n: i += 1`` with an
  int32 ``n`` gives an int32 ``i``).
* Shapes: a loop variable whose static shape changes across an iteration
  is **relaxed automatically**: the dimensions that change become unknown
  (``None``; a changing rank becomes an unknown rank) and the body is traced
  again with the relaxed shape.  ``shape_invariants`` states a shape up
  front instead; a body result that does not fit a stated invariant is a
  ``TracingError``.
* The body is traced more than once when needed (a first trace discovers
  which Python values become tensors, further traces relax shapes), so
  Python side effects in a tensor loop body (a Python ``print``) may run
  more than once while tracing; ``rt.print`` runs once per iteration.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime import cf_nest as nest
from autograph.runtime import dtypes, op_registry, shapes
from autograph.runtime.errors import TracingError
from autograph.runtime.graph import Graph, current_graph, user_location
from autograph.runtime.tensor import Tensor, TensorSpec

__all__ = ["cond", "while_loop", "build_cond", "build_while", "as_predicate"]

_MAX_TRACES = 10


def _rt():
    """The op library (imported lazily: importing ``autograph.runtime`` imports this module)."""
    from autograph.runtime import ops

    return ops


# --------------------------------------------------------------------------
# Op registration: inference, kernels and verification of If / While
# --------------------------------------------------------------------------


def _library_of(inputs):
    if inputs:
        return inputs[0].graph.library
    return current_graph().library


def _infer_if(inputs, attrs):
    library = _library_of(inputs)
    then_g, else_g = library[attrs["then_branch"]], library[attrs["else_branch"]]
    if len(then_g.outputs) != len(else_g.outputs):
        raise ValueError(
            f"branches {then_g.name!r} and {else_g.name!r} return {len(then_g.outputs)} and "
            f"{len(else_g.outputs)} values"
        )
    specs = []
    for t, e in zip(then_g.outputs, else_g.outputs):
        if t.dtype != e.dtype:
            raise ValueError(f"branch outputs {t.name} and {e.name} have dtypes {t.dtype} and {e.dtype}")
        specs.append((t.dtype, shapes.relax(t.shape, e.shape)))
    return specs


def _if_kernel(pred, *args, then_branch, else_branch, library):
    from autograph.runtime import executor

    branch = library[then_branch] if pred else library[else_branch]
    values = executor.plan(branch).run(list(args))
    if len(values) == 1:
        return values[0]
    return tuple(values)


def _infer_while(inputs, attrs):
    body = _library_of(inputs)[attrs["body"]]
    return [(t.dtype, t.shape) for t in body.inputs]


def _while_kernel(*args, cond, body, library, maximum_iterations=None):
    from autograph.runtime import executor

    body_graph = library[body]
    cond_run = executor.plan(library[cond]).run
    body_run = executor.plan(body_graph).run
    n = len(body_graph.outputs)
    loop_vars = list(args[:n])
    invariant = list(args[n:])
    count = 0
    while maximum_iterations is None or count < maximum_iterations:
        if not cond_run(loop_vars + invariant)[0]:
            break
        loop_vars = body_run(loop_vars + invariant)
        count += 1
    if n == 1:
        return loop_vars[0]
    return tuple(loop_vars)


def _check_signature(op, graph, arg_tensors, role):
    """ValueError if ``graph`` cannot take ``arg_tensors`` as its ``all_inputs``."""
    params = graph.all_inputs
    if len(params) != len(arg_tensors):
        raise ValueError(f"{role} {graph.name!r} takes {len(params)} inputs but {op.name} passes {len(arg_tensors)}")
    for param, arg in zip(params, arg_tensors):
        if param.dtype != arg.dtype:
            raise ValueError(f"{role} {graph.name!r} input {param.name} is {param.dtype} but {op.name} passes {arg.dtype}")
        if not shapes.is_compatible(param.shape, arg.shape):
            raise ValueError(
                f"{role} {graph.name!r} input {param.name} has shape {shapes.format_shape(param.shape)} but "
                f"{op.name} passes {shapes.format_shape(arg.shape)}"
            )


def _verify_if(op, library):
    branches = [library.get(op.attrs["then_branch"]), library.get(op.attrs["else_branch"])]
    if None in branches:
        raise ValueError(f"{op.name} refers to a branch missing from the function library")
    if op.inputs[0].dtype != dtypes.bool_:
        raise ValueError(f"{op.name} predicate is {op.inputs[0].dtype}, not bool")
    for role, graph in zip(("then_branch", "else_branch"), branches):
        _check_signature(op, graph, op.inputs[1:], role)
        if len(graph.outputs) != len(op.outputs):
            raise ValueError(f"{role} {graph.name!r} returns {len(graph.outputs)} values, {op.name} has {len(op.outputs)}")
        for out, result in zip(graph.outputs, op.outputs):
            if out.dtype != result.dtype or not shapes.is_subshape(out.shape, result.shape):
                raise ValueError(f"{role} output {out.name} does not match {result.name}")


def _verify_while(op, library):
    cond_g, body_g = library.get(op.attrs["cond"]), library.get(op.attrs["body"])
    if cond_g is None or body_g is None:
        raise ValueError(f"{op.name} refers to a cond/body missing from the function library")
    _check_signature(op, cond_g, op.inputs, "cond")
    _check_signature(op, body_g, op.inputs, "body")
    if len(cond_g.outputs) != 1 or cond_g.outputs[0].dtype != dtypes.bool_:
        raise ValueError(f"cond {cond_g.name!r} of {op.name} must return one bool")
    if len(body_g.outputs) != len(op.outputs) or len(body_g.inputs) != len(op.outputs):
        raise ValueError(f"body {body_g.name!r} of {op.name} must take and return {len(op.outputs)} loop variables")
    for param, out in zip(body_g.inputs, body_g.outputs):
        if param.dtype != out.dtype or not shapes.is_subshape(out.shape, param.shape):
            raise ValueError(f"body {body_g.name!r} returns {out.name} that does not fit loop variable {param.name}")


op_registry.register("If", infer=_infer_if, kernel=_if_kernel, verify=_verify_if,
                     function_attrs=("then_branch", "else_branch"))
op_registry.register("While", infer=_infer_while, kernel=_while_kernel, verify=_verify_while,
                     function_attrs=("cond", "body"))


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


def _zeros_like_value(value, dtype):
    """A Const of zeros shaped like ``value`` (unknown dimensions become 0) in the current graph."""
    shape = shapes.as_shape(getattr(value, "shape", ())) if not _is_weak(value) else ()
    shape = () if shape is None else tuple(0 if d is None else d for d in shape)
    return op_registry.constant(np.zeros(shape, dtype), dtype)


def _is_weak(value) -> bool:
    return type(value) in (bool, int, float)


def _is_numeric_array(value) -> bool:
    return isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "biuf"


def _is_strong(value) -> bool:
    return isinstance(value, Tensor) or _is_numeric_array(value)


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
        return f"a {value.dtype.name}{shapes.format_shape(value.shape)} tensor"
    if is_undefined(value):
        return "undefined"
    if _is_numeric_array(value):
        return f"the numpy {value.dtype.name} value {value!r}"
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"the Python {type(value).__name__} {text}"


def _weak_dtype(*values) -> np.dtype:
    """The dtype numpy gives Python numbers on their own (bool, int64, float64)."""
    return dtypes.result_type(*values)


def _to_tensor_in(graph, value, dtype):
    """``value`` as a tensor of ``graph`` with ``dtype`` (capturing, casting or making a Const)."""
    with graph.as_default():
        if isinstance(value, Tensor):
            if value.graph is not graph:
                value = graph.capture(value)
            if value.dtype != dtype:
                value = _rt().cast(value, dtype)
            return value
        return op_registry.constant(value, dtype)


def as_predicate(value, where: str):
    """``value`` as a scalar bool tensor of the current graph, with Python truth semantics."""
    if is_undefined(value):
        raise TracingError(
            f"the condition of {where} reads the variable '{value.symbol_name}', which is not defined "
            f"there. Assign it before {where.split(' at ')[0]}."
        )
    if isinstance(value, Tensor):
        if value.graph is not current_graph():
            value = current_graph().capture(value)
        if value.shape is not None and any(d != 1 for d in value.shape):
            raise TracingError(
                f"the condition of {where} is a tensor of shape {shapes.format_shape(value.shape)} "
                f"({value.name}); it must hold a single value. Reduce it with rt.reduce_any(...) or "
                "rt.reduce_all(...)."
            )
        if value.dtype != dtypes.bool_:
            value = _rt().not_equal(value, 0)
        return value
    if _is_numeric_array(value) and value.size != 1:
        raise TracingError(
            f"the condition of {where} is a numpy array of shape {value.shape}; it must hold a single "
            "value. Reduce it with .any() or .all()."
        )
    return op_registry.constant(bool(value), dtypes.bool_)


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
                g.capture(t)
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
    result = op_registry.apply_op(op_type, inputs, attrs, stateful=stateful)
    if isinstance(result, tuple):
        return list(result)
    return [result]


# --------------------------------------------------------------------------
# cond
# --------------------------------------------------------------------------


def _stack_differing_lists(then_out, else_out, then_g, else_g):
    """Top-level lists that differ in length between branches become stacked tensors."""
    from autograph.runtime import staged_list

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
        diff = nest.mismatch(a, b)
        if diff is not None:
            raise TracingError(
                f"'{label}' has a different structure in the two branches of {where}: {diff} (true "
                "branch vs false branch). Make both branches give it the same structure."
            )
        leaves_a, leaves_b = nest.flatten(a), nest.flatten(b)
        merged = list(leaves_a)
        for j, (path, x, y) in enumerate(zip(nest.leaf_paths(a), leaves_a, leaves_b)):
            dtype = _merge_dtype(label + path, x, y, where)
            if dtype is not None:
                then_flat.append(_branch_tensor(then_g, x, y, dtype))
                else_flat.append(_branch_tensor(else_g, y, x, dtype))
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


def _branch_tensor(graph, value, other, dtype):
    """The branch graph's output for ``value`` (zeros for a still unset return value)."""
    if is_return_placeholder(value):
        with graph.as_default():
            return _zeros_like_value(other, dtype)
    return _to_tensor_in(graph, value, dtype)


def _merge_dtype(label, a, b, where):
    """The dtype of the ``If`` output merging ``a`` and ``b``; None if ``a`` passes through."""
    if a is b:  # the same value in both branches (a tensor from outside them, or a Python value)
        return None
    unset_a, unset_b = is_return_placeholder(a), is_return_placeholder(b)
    if unset_a and unset_b:
        return None
    if unset_a or unset_b:
        other = b if unset_a else a
        if _is_strong(other):
            return other.dtype
        if _is_weak(other):
            return _weak_dtype(other)
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
        if _is_weak(a) and _is_weak(b):
            return _weak_dtype(a, b)
        raise TracingError(
            f"'{label}' is {_describe_value(a)} in the true branch but {_describe_value(b)} in the false "
            f"branch of {where}; a tensor if can only merge tensors and numbers. Compute {label} outside "
            "the if, or make it a tensor in both branches."
        )
    if not all(_is_strong(v) or _is_weak(v) for v in (a, b)):
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
    weak = [v for v in (a, b) if _is_weak(v)]
    return dtypes.result_type(strong[0], *weak)


def cond(pred, true_fn, false_fn, name=None):
    """``true_fn()`` if ``pred`` else ``false_fn()``; an ``If`` op when ``pred`` is a tensor.

    The branches return the same nested structure of tensors and Python
    values.  Eagerly, or with a Python ``pred``, only the taken branch runs.
    """
    del name
    if not isinstance(pred, Tensor):
        return true_fn() if pred else false_fn()
    if current_graph() is None:
        raise TracingError(
            f"rt.cond at {user_location() or '<unknown>'} got the symbolic tensor {pred.name} outside of "
            "a trace; return tensors from the traced function instead of keeping them."
        )
    where = f"rt.cond at {user_location() or '<unknown>'}"
    (result,) = build_cond(pred, lambda: [true_fn()], lambda: [false_fn()], labels=["result"], where=where)
    return result


# --------------------------------------------------------------------------
# while
# --------------------------------------------------------------------------


class _Slot:
    """What build_while knows about one flat loop value."""

    __slots__ = ("label", "init", "kind", "dtype", "shape", "invariant", "fill")

    # kind: 'tensor' (strongly typed loop variable), 'weak' (a Python number
    # that became a loop variable), 'list' (a staged list), 'pass' (a value the
    # body leaves alone), 'open' (not known yet: traced as its Python value).

    def __init__(self, label, init, invariant):
        self.label = label
        self.init = init
        self.invariant = invariant
        self.fill = False  # the initial value is zeros (an unset return value)
        self.dtype = None
        self.shape = None
        if isinstance(init, Tensor) or _is_numeric_array(init):
            self.kind = "tensor"
            self.dtype = init.dtype
            self.shape = shapes.as_shape(init.shape)
            if invariant is not None:
                if not shapes.is_subshape(self.shape, invariant):
                    raise ValueError(self.shape)
                self.shape = invariant
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
    slots = []
    for label, value, invariant in zip(labels, init, invariants):
        invariant = _as_invariant(invariant, label, where)
        try:
            slots.append(_Slot(label, value, invariant))
        except ValueError:
            raise TracingError(
                f"'{label}' has shape {shapes.format_shape(shapes.as_shape(value.shape))} before {where}, "
                f"which does not fit its shape invariant {shapes.format_shape(invariant)}. Fix the "
                "invariant or the initial value."
            ) from None
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
            values.append(graph.add_placeholder(s.dtype, s.shape, name="loop_var"))
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
    traced = [cond_graph, graph]
    pending = [(s, b, a) for s, b, a in zip(slots, values, results) if not s.is_loop_var]
    reclassified = False
    for s, before, after in pending:
        if type(s.init) is not list:
            reclassified |= _classify(s, before, after, where, stage_lists, traced)
    if not reclassified:
        for s, before, after in pending:
            if type(s.init) is list:
                reclassified |= _classify(s, before, after, where, stage_lists, traced)
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


def _classify(s, before, after, where, stage_lists, traced) -> bool:
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
    if is_return_placeholder(init) and (_is_strong(after) or _is_weak(after)):
        s.kind, s.fill = "weak", True
        s.dtype = after.dtype if _is_strong(after) else _weak_dtype(after)
        s.shape = s.invariant if s.invariant is not None else shapes.as_shape(getattr(after, "shape", ()))
        return True
    if type(init) is list and stage_lists:
        unchanged = type(after) is list and after is before and len(after) == len(init) and all(
            x is y for x, y in zip(after, init)
        )
        if unchanged or (after is init):
            s.kind = "pass"
            return False
        _stage_list_slot(s, after, where)
        return True
    if after is init or _same_python(init, after):
        s.kind = "pass"
        return False
    if _is_weak(init) and (_is_weak(after) or _is_strong(after)):
        s.kind = "weak"
        if _is_strong(after):
            s.dtype = after.dtype
        else:
            s.dtype = _guess_weak_dtype(traced, init, after)
        s.shape = s.invariant if s.invariant is not None else ()
        return True
    raise TracingError(
        f"'{s.label}' is {_describe_value(init)} before {where} and {_describe_value(after)} after an "
        "iteration; a tensor loop can only carry tensors and numbers whose dtype does not change. Give "
        f"{s.label} its final kind of value before the loop."
    )


def _guess_weak_dtype(traced, init, after) -> np.dtype:
    """The dtype of a Python number loop variable the body kept a Python number.

    It takes the dtype a tensor gave it in the loop's condition or body (the
    ``Const`` its value was converted to next to a tensor, e.g. ``i < n`` with
    an int32 ``n``), else numpy's default for the Python type.
    """
    default = _weak_dtype(init, after)
    for graph in traced:
        for op in graph.operations:
            if op.type != "Const":
                continue
            value = op.attrs["value"]
            if value.shape == () and value.dtype.kind == default.kind and value == init:
                return value.dtype
    return default


def _stage_list_slot(s, after, where):
    from autograph.runtime import staged_list

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
        from autograph.runtime import staged_list

        if type(value) is list:
            with graph.as_default():
                value = staged_list.stack(value, dtype=s.dtype)
        elif not isinstance(value, Tensor):
            raise TracingError(
                f"'{s.label}' is a list appended to in {where} but becomes {_describe_value(value)} in the "
                "body; keep it a list."
            )
    if not (_is_strong(value) or _is_weak(value)):
        raise TracingError(
            f"'{s.label}' is a {s.dtype.name} tensor before {where} but {_describe_value(value)} after an "
            f"iteration; a loop variable must stay a tensor of one dtype."
        )
    if _is_weak(value):
        tensor = _to_tensor_in(graph, value, dtype=dtypes.result_type(s.dtype, value))
    else:
        tensor = _to_tensor_in(graph, value, value.dtype)
    retrace = False
    if tensor.dtype != s.dtype:
        if s.kind == "tensor":
            raise TracingError(
                f"'{s.label}' is {s.dtype.name} before {where} but {tensor.dtype.name} after an iteration; a "
                f"loop variable must keep its dtype. Cast it before the loop, e.g. "
                f"{s.label} = rt.cast({s.label}, '{tensor.dtype.name}'), or cast the new value in the body."
            )
        s.dtype = tensor.dtype
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
        from autograph.runtime import staged_list

        return staged_list.stack(list(s.init), dtype=s.dtype, elem_shape=None if s.shape is None else s.shape[1:],
                                 label=s.label, where=where)
    if isinstance(s.init, Tensor):
        return s.init
    if s.fill:
        shape = () if s.shape is None else tuple(0 if d is None else d for d in s.shape)
        return op_registry.constant(np.zeros(shape, s.dtype), s.dtype)
    return op_registry.constant(s.init, s.dtype)


def _while_with_counter(cond_fn, body_fn, init, *, labels, where, invariants, maximum_iterations, stage_lists):
    """A While whose ``maximum_iterations`` is a tensor: an extra counter joins the condition."""
    rt = _rt()
    limit = maximum_iterations
    counter0 = op_registry.constant(0, limit.dtype)

    def counted_cond(values):
        keep_going = as_predicate(cond_fn(values[1:]), where)
        return rt.logical_and(rt.less(values[0], limit), keep_going)

    def counted_body(values):
        return [values[0] + 1, *body_fn(values[1:])]

    final = build_while(counted_cond, counted_body, [counter0, *init], labels=["<iteration counter>", *labels],
                        where=where, invariants=[None, *invariants], stage_lists=stage_lists)
    return final[1:]


def while_loop(cond, body, loop_vars, shape_invariants=None, maximum_iterations=None, name=None):
    """Repeats ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)``; a ``While`` op in a trace.

    ``loop_vars`` is a tuple or list (nested structures of tensors and Python
    values inside); ``body`` returns the same structure.  ``shape_invariants``
    matches ``loop_vars`` with shapes (``(None, 3)``) or ``rt.TensorSpec``\\ s,
    ``None`` meaning "the initial shape, relaxed automatically".
    ``maximum_iterations`` caps the number of iterations.  Returns the final
    loop variables, in the structure of ``loop_vars``.  Eagerly (outside a
    trace) it runs as a Python loop.
    """
    del name
    spread = type(loop_vars) in (tuple, list)
    if spread and not loop_vars:
        raise ValueError("rt.while_loop needs at least one loop variable; loop_vars is empty")

    def call(fn, values):
        return fn(*values) if spread else fn(values)

    def normalize(result):
        if spread and len(loop_vars) == 1 and (type(result) not in (tuple, list) or len(result) != 1):
            result = [result]
        if spread and type(result) is not type(loop_vars) and type(result) in (tuple, list):
            result = type(loop_vars)(result)
        return result

    outer = current_graph()
    if outer is None:
        values, count = loop_vars, 0
        while maximum_iterations is None or count < maximum_iterations:
            if not call(cond, values):
                break
            values = normalize(call(body, values))
            count += 1
        return values

    where = f"rt.while_loop at {user_location() or '<unknown>'}"
    labels = ["loop_vars" + p for p in nest.leaf_paths(loop_vars)]
    invariants = None
    if shape_invariants is not None:
        try:
            invariants = nest.flatten_up_to(loop_vars, shape_invariants)
        except ValueError as e:
            raise TracingError(f"shape_invariants of {where} does not match loop_vars: {e}") from None

    def cond_fn(values):
        return call(cond, nest.pack_as(loop_vars, values))

    def body_fn(values):
        result = normalize(call(body, nest.pack_as(loop_vars, values)))
        diff = nest.mismatch(loop_vars, result)
        if diff is not None:
            raise TracingError(
                f"the body of {where} returns a different structure than loop_vars: {diff} (loop_vars vs "
                "body result). Return the same structure as loop_vars."
            )
        return nest.flatten(result)

    final = build_while(cond_fn, body_fn, nest.flatten(loop_vars), labels=labels, where=where,
                        invariants=invariants, maximum_iterations=maximum_iterations)
    return nest.pack_as(loop_vars, final)
