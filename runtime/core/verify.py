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
* functional ops (``If``/``While``, their definitions' ``function_attrs``)
  name functions that exist in the library, and their signatures match the
  op: that is checked by the op type's ``verify(op, library)`` hook
  (``OpDef.verify``, registered with the op in ``ops/functional_control_flow.py``),
  which raises ``ValueError`` naming the mismatch; the library functions
  are then verified themselves.

A failure raises ``VerificationError`` naming the graph, the op and the
problem, followed by a window of the graph's text around the op.
"""

from __future__ import annotations

from autograph.runtime.core import opdef, printer, shapes

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


def verify(graph) -> None:
    """Raises ``VerificationError`` if ``graph`` or a function it calls breaks an invariant.

    A worklist, not recursion: however deep sub-graphs nest, verifying them uses no stack."""
    done: set[int] = {id(graph)}
    todo = [graph]
    while todo:
        for callee in _verify_graph(todo.pop()):
            if id(callee) not in done:
                done.add(id(callee))
                todo.append(callee)


def _verify_graph(graph) -> list:
    """Checks ``graph`` itself; returns the library functions its ops call."""
    position: dict[int, int] = {}
    names: set[str] = set()
    for index, op in enumerate(graph.operations):
        if op.graph is not graph:
            _fail(graph, index, f"op {op.name!r} belongs to graph {op.graph.name!r}")
        if op.name in names:
            _fail(graph, index, f"two ops are named {op.name!r}")
        names.add(op.name)
        definition = opdef.REGISTRY.get(op.type)
        if definition is None:
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
        refs = opdef.function_attrs(op)
        for attr, fn_name in refs:
            if fn_name not in graph.library:
                _fail(graph, index, f"{op.type} {op.name!r} refers to function {fn_name!r} ({attr}), which is not in the library")
        if refs:
            if definition.verify is not None:
                try:
                    definition.verify(op, graph.library)
                except (ValueError, TypeError, KeyError, IndexError) as e:
                    _fail(graph, index, f"{op.type} {op.name!r}: {e}")
        else:
            _check_inference(graph, index, op, definition)
        position[id(op)] = index
    _check_boundary(graph, position)
    return [graph.library[fn_name] for op in graph.operations for _, fn_name in opdef.function_attrs(op)]


def _check_inference(graph, index, op, definition) -> None:
    try:
        specs = definition.infer(op.inputs, op.attrs)
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
    if op.type == "Placeholder":  # a placeholder's weak typing comes from the value it stands for
        return
    weak = opdef.weak_outputs(op.type, op.inputs, op.attrs, len(op.outputs))
    for i, (expected, t) in enumerate(zip(weak, op.outputs)):
        if t.weak != expected:
            kind = "weakly" if expected else "strongly"
            _fail(graph, index, f"output {i} of {op.name!r} should be {kind} typed, as its inputs and attrs give it")


def _check_boundary(graph, position) -> None:
    for t in graph.all_inputs:
        if id(t.op) not in position or t.op.type != "Placeholder":
            _fail(graph, None, f"input {t.name} is not a Placeholder of this graph")
    for t in graph.outputs:
        if not hasattr(t, "op") or id(t.op) not in position:
            _fail(graph, None, f"output {getattr(t, 'name', t)!r} is not a tensor of this graph")
    if graph.last_stateful is not None and id(graph.last_stateful) not in position:
        _fail(graph, None, f"last_stateful {graph.last_stateful.name!r} is not an op of this graph")
