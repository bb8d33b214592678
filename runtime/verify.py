"""The graph verifier: ``graph.verify()`` checks the IR's invariants.

For the graph and every library function it calls:

* every op belongs to the graph, has a registered type and a unique name;
* every input is an output of an earlier op of the same graph (captured
  values come in through capture placeholders), and every control input is
  an earlier op;
* declared inputs and capture placeholders are ``Placeholder`` ops, outputs
  are tensors of the graph, ``last_stateful`` is one of its ops;
* re-running shape/dtype inference gives the recorded dtypes, and shapes at
  least as specific as the recorded ones;
* functional ops (``If``/``While``, see ``op_registry.FUNCTION_ATTRS``)
  name functions that exist in the library, and their signatures match the
  op: the op type's ``verify`` hook when it registered one, else the
  default rules below.

A failure raises ``VerificationError`` naming the graph, the op and the
problem, followed by a window of the graph's text around the op.
"""

from __future__ import annotations

from autograph.runtime import op_registry, printer, shapes
from autograph.runtime.errors import VerificationError

_WINDOW = 3  # ops printed on each side of the bad one


def _fail(graph, index: int | None, message: str):
    lines = [f"graph {graph.name!r}: {message}"]
    if index is not None:
        lo, hi = max(0, index - _WINDOW), min(len(graph.operations), index + _WINDOW + 1)
        if lo:
            lines.append("    ...")
        for i in range(lo, hi):
            marker = ">>> " if i == index else "    "
            lines.append(marker + printer.format_op(graph.operations[i]))
        if hi < len(graph.operations):
            lines.append("    ...")
    raise VerificationError("\n".join(lines))


def _types(tensors) -> str:
    return ", ".join(printer.format_type(t) for t in tensors)


def _check_signature(what: str, sub, in_types, out_types, *, check_outputs=True):
    """ValueError unless ``sub`` takes ``in_types`` and (optionally) returns ``out_types`` (dtypes)."""
    ins = sub.all_inputs
    if [t.dtype for t in ins] != [t.dtype for t in in_types]:
        raise ValueError(
            f"{what} {sub.name!r} takes ({_types(ins)}) but the op passes ({_types(in_types)})"
        )
    if check_outputs and [t.dtype for t in sub.outputs] != [t.dtype for t in out_types]:
        raise ValueError(
            f"{what} {sub.name!r} returns ({_types(sub.outputs)}) but the op produces ({_types(out_types)})"
        )


def _verify_if(op, library):
    """``If(pred, *args)``: both branches take ``args`` and return the op's outputs."""
    pred = op.inputs[0] if op.inputs else None
    if pred is None or pred.dtype.kind != "b":
        raise ValueError("the first input of If must be a bool predicate")
    for attr in ("then_branch", "else_branch"):
        _check_signature(attr, library[op.attrs[attr]], op.inputs[1:], op.outputs)


def _verify_while(op, library):
    """``While(*args)``: cond and body take ``args``; cond returns one bool; body returns the loop vars."""
    cond, body = library[op.attrs["cond"]], library[op.attrs["body"]]
    _check_signature("cond", cond, op.inputs, [], check_outputs=False)
    if len(cond.outputs) != 1 or cond.outputs[0].dtype.kind != "b":
        raise ValueError(f"cond {cond.name!r} must return one bool, returns ({_types(cond.outputs)})")
    _check_signature("body", body, op.inputs, op.outputs[: len(body.outputs)], check_outputs=False)
    n = len(body.outputs)
    if [t.dtype for t in body.outputs] != [t.dtype for t in op.inputs[:n]]:
        raise ValueError(
            f"body {body.name!r} returns ({_types(body.outputs)}) but the loop variables are "
            f"({_types(op.inputs[:n])})"
        )
    if [t.dtype for t in op.outputs] != [t.dtype for t in op.inputs[: len(op.outputs)]]:
        raise ValueError(f"While outputs ({_types(op.outputs)}) do not match its loop variables ({_types(op.inputs)})")


# op type -> default signature check, used when the OpDef has no verify hook
DEFAULT_HOOKS = {"If": _verify_if, "While": _verify_while}


def verify(graph) -> None:
    """Raises ``VerificationError`` if ``graph`` or a function it calls breaks an invariant."""
    done: set[int] = set()
    _verify_graph(graph, done)


def _verify_graph(graph, done: set) -> None:
    if id(graph) in done:
        return
    done.add(id(graph))
    position: dict[int, int] = {}
    names: set[str] = set()
    for index, op in enumerate(graph.operations):
        if op.graph is not graph:
            _fail(graph, index, f"op {op.name!r} belongs to graph {op.graph.name!r}")
        if op.name in names:
            _fail(graph, index, f"two ops are named {op.name!r}")
        names.add(op.name)
        opdef = op_registry.REGISTRY.get(op.type)
        if opdef is None:
            _fail(graph, index, f"op {op.name!r} has the unregistered type {op.type!r}")
        for i, t in enumerate(op.inputs):
            if t.op.graph is not graph:
                _fail(
                    graph, index,
                    f"input {i} of {op.name!r} ({t.name}) belongs to graph {t.op.graph.name!r}; a value from "
                    "an enclosing graph must come in through a capture placeholder",
                )
            if id(t.op) not in position:
                _fail(graph, index, f"input {i} of {op.name!r} ({t.name}) is used before it is defined")
            if t.op.outputs[t.value_index] is not t:
                _fail(graph, index, f"input {i} of {op.name!r} ({t.name}) is not an output of {t.op.name!r}")
        for c in op.control_inputs:
            if id(c) not in position:
                _fail(graph, index, f"control input {c.name!r} of {op.name!r} does not precede it in graph {graph.name!r}")
        for i, t in enumerate(op.outputs):
            if t.op is not op or t.value_index != i:
                _fail(graph, index, f"output {i} of {op.name!r} does not point back to its op")
        refs = op_registry.function_attrs(op)
        for attr, fn_name in refs:
            if fn_name not in graph.library:
                _fail(graph, index, f"{op.type} {op.name!r} refers to function {fn_name!r} ({attr}), which is not in the library")
        if refs:
            hook = opdef.verify or DEFAULT_HOOKS.get(op.type)
            if hook is not None:
                try:
                    hook(op, graph.library)
                except (ValueError, TypeError, KeyError, IndexError) as e:
                    _fail(graph, index, f"{op.type} {op.name!r}: {e}")
        else:
            _check_inference(graph, index, op, opdef)
        position[id(op)] = index
    _check_boundary(graph, position)
    for op in graph.operations:
        for _, fn_name in op_registry.function_attrs(op):
            _verify_graph(graph.library[fn_name], done)


def _check_inference(graph, index, op, opdef) -> None:
    try:
        specs = opdef.infer(op.inputs, op.attrs)
    except (TypeError, ValueError, IndexError, KeyError) as e:
        _fail(graph, index, f"shape/dtype inference of {op.name!r} fails on its inputs: {e}")
    if len(specs) != len(op.outputs):
        _fail(graph, index, f"{op.name!r} has {len(op.outputs)} outputs but its type infers {len(specs)}")
    for i, ((dtype, shape), t) in enumerate(zip(specs, op.outputs)):
        if dtype != t.dtype:
            _fail(graph, index, f"output {i} of {op.name!r} is recorded as {t.dtype.name} but its inputs give {dtype.name}")
        if not shapes.is_subshape(shape, t.shape):
            _fail(
                graph, index,
                f"output {i} of {op.name!r} is recorded with shape {shapes.format_shape(t.shape)}, "
                f"incompatible with {shapes.format_shape(shape)} inferred from its inputs",
            )


def _check_boundary(graph, position) -> None:
    for t in graph.all_inputs:
        if id(t.op) not in position or t.op.type != "Placeholder":
            _fail(graph, None, f"input {t.name} is not a Placeholder of this graph")
    for t in graph.outputs:
        if not hasattr(t, "op") or id(t.op) not in position:
            _fail(graph, None, f"output {getattr(t, 'name', t)!r} is not a tensor of this graph")
    if graph.last_stateful is not None and id(graph.last_stateful) not in position:
        _fail(graph, None, f"last_stateful {graph.last_stateful.name!r} is not an op of this graph")
