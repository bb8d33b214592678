"""Functional control flow ops: the definitions of ``If``, ``While`` and ``Assert``.

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

Weak typing (``Tensor.weak``): an ``If`` output is weakly typed when both
branches return a weakly typed value for it (``y = 1.0`` / ``y = 2.0``);
a ``While`` output when its initial value and the body's result are (the
loop variable stays a Python number on every path).

Running them is the executor's rule (``exec/interpreter.py``): they have no
kernel.  Building them is tracing's: ``tracing/branches.py`` and ``tracing/loops.py`` hold the
tracing rules (dtypes, shapes, Python values, undefined variables) that
``rt.cond`` / ``rt.while_loop`` (``tracing/functional_api.py``) and the operators
of converted code (``runtime/operators/if_statements.py``, ``loop_statements.py``) share.
"""

from __future__ import annotations

from autograph.runtime.core import dtypes, opdef, shapes
from autograph.runtime.core.graph import current_graph

# --------------------------------------------------------------------------
# Op registration: inference, weak typing and verification of If / While
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


def _infer_while(inputs, attrs):
    body = _library_of(inputs)[attrs["body"]]
    return [(t.dtype, t.shape) for t in body.inputs]


def _weak_if(inputs, attrs):
    library = _library_of(inputs)
    then_g, else_g = library[attrs["then_branch"]], library[attrs["else_branch"]]
    return [t.weak and e.weak for t, e in zip(then_g.outputs, else_g.outputs)]


def _weak_while(inputs, attrs):
    body = _library_of(inputs)[attrs["body"]]
    return [init.weak and out.weak for init, out in zip(inputs, body.outputs)]


def _check_weak(op, inputs):
    """ValueError if the weak typing of ``op``'s outputs disagrees with its rule."""
    rule = opdef.weak_outputs(op.type, inputs, op.attrs, len(op.outputs))
    for out, weak in zip(op.outputs, rule):
        if out.weak != weak:
            kind = "weakly" if weak else "strongly"
            raise ValueError(f"output {out.name} should be {kind} typed, as its sub-graphs give it")


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
    _check_weak(op, op.inputs)


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
    _check_weak(op, op.inputs)


# No kernels: running a sub-graph is the executor's rule (``exec/interpreter.py``).
opdef.register("If", infer=_infer_if, verify=_verify_if, function_attrs=("then_branch", "else_branch"),
               weak=_weak_if, inputs=(1, None), attrs={"then_branch": "function", "else_branch": "function"})
opdef.register("While", infer=_infer_while, verify=_verify_while, function_attrs=("cond", "body"),
               weak=_weak_while, inputs=(0, None),
               attrs={"cond": "function", "body": "function", "maximum_iterations": opdef.optional("count", None)})


def _infer_choose(inputs, attrs):
    pred, x, y = inputs
    if pred.dtype != dtypes.bool_ or pred.shape != ():
        raise ValueError(
            f"Choose: the predicate {pred.name} must be a bool scalar, not "
            f"{pred.dtype.name}{shapes.format_shape(pred.shape)}"
        )
    if x.dtype != y.dtype:
        raise ValueError(f"Choose: {x.name} and {y.name} have dtypes {x.dtype.name} and {y.dtype.name}")
    return [(x.dtype, shapes.relax(x.shape, y.shape))]


# ``Choose(pred, x, y)``: ``x if pred else y``, whole values (``pred`` a bool scalar; no
# broadcasting, no copy) -- an ``If`` lowered to v1 form picks its branch results with it
# (``optimizer/lower_if.py``).  Weakly typed as an ``If`` output is: when both values are.
opdef.register("Choose", infer=_infer_choose, weak=lambda inputs, attrs: inputs[1].weak and inputs[2].weak, cost=0,
               inputs=3)


def _infer_assert(inputs, attrs):
    if inputs[0].dtype != dtypes.bool_:
        raise TypeError(f"Assert: the condition {inputs[0].name} must be bool, not {inputs[0].dtype.name}")
    return []


# ``Assert(condition; message)``: raises AssertionError(message) when the condition is false.
# Stateful, so it runs at every execution in program order and is never pruned.
opdef.register("Assert", infer=_infer_assert, stateful=True, inputs=(1, None), attrs={"message": "text"})
