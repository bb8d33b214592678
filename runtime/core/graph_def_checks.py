"""The semantic checks of a loaded graph def (after ``graph_def_schema``'s structural ones).

``check_graphs(main, options)`` runs on the graphs ``from_graph_def`` just
built, before anyone can run them:

* **placeholders** -- each is a declared input or a capture, listed once;
* **sub-graph references** -- the functions each ``If``/``While`` (any op
  definition names sub-graphs (``OpDef.function_attrs``)) names must exist and must not call
  themselves, directly or through others (a cycle would recurse at run
  time), and calls nest at most ``max_depth`` deep;
* **inference** -- every op's shape/dtype inference runs again, with small
  constant values propagated (an op whose inputs are all known constants
  and whose output is at most ``_FOLD_ELEMENTS`` elements is evaluated
  with its kernel), so a shape computed from constants (``Fill`` of
  ``Mul(const, const)`` dims) is known.  A recorded dtype that differs, a
  recorded shape that the inferred one contradicts, a weak flag that
  disagrees, or a known size over ``max_elements`` is rejected;
* **variables** -- a variable op's ``dtype``/``shape`` attributes must be
  those of the variable record it names;
* finally ``graph.verify()``: sub-graph signatures and the IR invariants.

Each failure is a ``GraphDefError`` naming the graph, the node and the
field.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from autograph.runtime.core import backend, opdef, shapes, verify
from autograph.runtime.core.graph import Operation
from autograph.runtime.core.graph_def_schema import check_size
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.errors import GraphDefError, VerificationError

_FOLD_ELEMENTS = 4096  # constants up to this size are propagated through the checks


def check_graphs(main, options) -> None:
    """Raises ``GraphDefError`` if the loaded ``main`` (with its library) is not a sound graph."""
    graphs = [main, *main.library.values()]
    _check_calls(main, graphs, options)
    for graph in graphs:
        _check_placeholders(graph)
        _check_inference(graph, options)
    try:
        verify.verify(main)
        for graph in main.library.values():
            verify.verify(graph)
    except VerificationError as e:
        raise GraphDefError(f"the graph def does not verify: {e}") from None


def _check_placeholders(graph) -> None:
    """Each Placeholder is listed once, as a declared input or a capture: a run gives it a value."""
    listed = [t.op for t in graph.all_inputs]
    if len({id(op) for op in listed}) != len(listed):
        raise GraphDefError(f"graph {graph.name!r}: fields 'inputs'/'captures' list a tensor twice")
    ids = {id(op) for op in listed}
    for op in graph.operations:
        if op.type == "Placeholder" and id(op) not in ids:
            raise GraphDefError(f"node {op.name!r} of graph {graph.name!r} is a Placeholder that field 'inputs' "
                                "and field 'captures' do not list, so nothing would give it a value")
    for op in listed:
        if op.type != "Placeholder":
            raise GraphDefError(f"graph {graph.name!r}: fields 'inputs'/'captures' list {op.name!r}, a {op.type}, "
                                "not a Placeholder")


def _callees(graph) -> list[tuple[str, str, str]]:
    """``(node name, attr, function name)`` for every function ``graph``'s ops call."""
    return [(op.name, attr, name) for op in graph.operations for attr, name in opdef.function_attrs(op)]


def _check_calls(main, graphs, options) -> None:
    library = main.library
    for graph in graphs:
        for node, attr, name in _callees(graph):
            if name not in library:
                raise GraphDefError(f"node {node!r} of graph {graph.name!r}: field 'attrs.{attr}' names function "
                                    f"{name!r}, which is not in the library")
    below: dict[str, int] = {}  # function -> deepest nesting below it (done)
    for graph in graphs:
        if graph.name not in below:
            _walk_calls(graph, main, below, options.max_depth)


def _walk_calls(root, main, below, max_depth) -> None:
    """Depth-first from ``root`` without recursion: a cycle or a nesting past ``max_depth`` is
    refused on the way down, before the walk goes deeper (so no file can make it recurse)."""
    library = main.library
    path, calls, deepest = [root], [iter(_callees(root))], [0]
    on_path = {root.name}
    while path:
        graph = path[-1]
        call = next(calls[-1], None)
        if call is None:  # every callee of ``graph`` done
            path.pop()
            calls.pop()
            on_path.discard(graph.name)
            below[graph.name] = depth = deepest.pop()
            if deepest:
                deepest[-1] = max(deepest[-1], depth + 1)
            continue
        node, attr, name = call
        callee = library[name]
        if name in on_path or callee is main:
            cycle = " -> ".join([*(g.name for g in path), name])
            raise GraphDefError(f"node {node!r} of graph {graph.name!r}: field 'attrs.{attr}' makes the "
                                f"functions call themselves ({cycle}); sub-graphs must not recurse")
        nesting = len(path) + below.get(name, 0)  # of the deepest call below ``root`` through this one
        if nesting > max_depth:
            raise GraphDefError(f"node {node!r} of graph {graph.name!r}: sub-graphs nest more than "
                                f"max_depth={max_depth} deep; pass LoadOptions(max_depth=...) if trusted")
        if name in below:
            deepest[-1] = max(deepest[-1], below[name] + 1)
        else:
            path.append(callee)
            calls.append(iter(_callees(callee)))
            deepest.append(0)
            on_path.add(name)


def _known(tensor, value):
    """A stand-in for ``tensor`` whose value the checks computed: the output of a ``Const``
    that is in no graph's op list, so inference (``static_value``) sees the value."""
    op = Operation(tensor.op.graph, tensor.op.name, "Const", [], {"value": value, "dtype": tensor.dtype}, [], None)
    op.outputs = [Tensor(op, 0, tensor.dtype, tensor.shape, tensor.weak)]
    return op.outputs[0]


def _check_inference(graph, options) -> None:
    known: dict[int, object] = {}  # id(tensor) -> its value, for small constants
    for op in graph.operations:
        where = f"node {op.name!r} of graph {graph.name!r}"
        definition = opdef.REGISTRY[op.type]
        if op.type == "Const":
            value = op.attrs["value"]
            if value.dtype != op.attrs["dtype"]:
                said = getattr(op.attrs["dtype"], "name", "null")
                raise GraphDefError(f"{where}: field 'attrs.value' is {value.dtype.name} but 'attrs.dtype' says {said}")
        if op.type in ("ReadVariable", "AssignVariable", "AssignAddVariable", "AssignSubVariable"):
            _check_variable_attrs(op, where)
        _check_predicate(op, where)
        inputs = [_known(t, known[id(t)]) if id(t) in known else t for t in op.inputs]
        try:
            specs = definition.infer(inputs, op.attrs)
            specs = [(np.dtype(d), shapes.as_shape(s)) for d, s in specs]
        except Exception as e:  # noqa: BLE001 - whatever inference raises on this file's data
            raise GraphDefError(f"{where} ({op.type}): its inputs and attributes are inconsistent: "
                                f"{type(e).__name__}: {e}") from None
        if len(specs) != len(op.outputs):
            raise GraphDefError(f"{where}: field 'outputs' lists {len(op.outputs)} outputs, but a {op.type} with "
                                f"these inputs has {len(specs)}")
        for i, ((dtype, shape), t) in enumerate(zip(specs, op.outputs)):
            field = f"outputs[{i}]"
            if dtype != t.dtype:
                raise GraphDefError(f"{where}: field '{field}.dtype' is {t.dtype.name}, but its inputs give {dtype.name}")
            if not shapes.is_subshape(shape, t.shape):
                raise GraphDefError(f"{where}: field '{field}.shape' is {shapes.format_shape(t.shape)}, which "
                                    f"contradicts {shapes.format_shape(shape)} inferred from its inputs")
            check_size(t.shape, where, f"{field}.shape", options)
            check_size(shape, where, f"{field}.shape (inferred)", options)
        if op.type != "Placeholder":
            weak = opdef.weak_outputs(op.type, inputs, op.attrs, len(op.outputs))
            for i, (expected, t) in enumerate(zip(weak, op.outputs)):
                if t.weak != expected:
                    raise GraphDefError(f"{where}: field 'outputs[{i}].weak' is {str(t.weak).lower()}, but its "
                                        f"inputs and attributes make it {'weakly' if expected else 'strongly'} typed")
        if op.type == "Const" and op.attrs["value"].size <= _FOLD_ELEMENTS:
            known[id(op.outputs[0])] = op.attrs["value"]
        elif _foldable(op, definition, specs, known):
            _fold(op, definition, specs, known)


def _check_predicate(op, where) -> None:
    """An ``If``'s predicate and a ``While``'s condition are scalars (a truth value, as in Python)."""
    if op.type == "If":
        pred, what = op.inputs[0] if op.inputs else None, "an If's predicate (field 'inputs[0]')"
    elif op.type == "While" and isinstance(op.attrs.get("cond"), str) and op.attrs["cond"] in op.graph.library:
        outputs = op.graph.library[op.attrs["cond"]].outputs
        pred, what = outputs[0] if len(outputs) == 1 else None, f"the condition of While (function {op.attrs['cond']!r})"
    else:
        return
    if pred is not None and pred.shape not in (None, ()):
        raise GraphDefError(f"{where}: {what}, {pred.name}, must be a scalar, not of shape "
                            f"{shapes.format_shape(pred.shape)}")


def _foldable(op, definition, specs, known) -> bool:
    return (
        not definition.function_attrs and op.type != "Placeholder" and not definition.stateful
        and not op.control_inputs and op.inputs and all(id(t) in known for t in op.inputs)
        and all(shapes.is_fully_defined(s) and math.prod(s) <= _FOLD_ELEMENTS for _, s in specs)
    )


def _fold(op, definition, specs, known) -> None:
    """Evaluates a small op on known constants (failures just leave it unknown: run time reports them)."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (loading warns of nothing a run would compute)
            result = backend.get().kernels[op.type](*[known[id(t)] for t in op.inputs], **op.attrs)
    except Exception:  # noqa: BLE001 - not knowing a value is always safe
        return
    results = [result] if len(op.outputs) == 1 else list(result) if isinstance(result, (tuple, list)) else []
    if len(results) != len(op.outputs):
        return
    for t, value, (dtype, shape) in zip(op.outputs, results, specs):
        value = np.asarray(value)
        if value.dtype == dtype and value.shape == shape:
            known[id(t)] = value


def _check_variable_attrs(op, where) -> None:
    from autograph.runtime.ops.variables import lookup_variable

    var = lookup_variable(op.attrs["handle"])
    if op.attrs["dtype"] != var.dtype or op.attrs["shape"] != var.shape:
        raise GraphDefError(
            f"{where}: fields 'attrs.dtype'/'attrs.shape' ({op.attrs['dtype'].name}"
            f"{shapes.format_shape(op.attrs['shape'])}) differ from the variable record's "
            f"({var.dtype.name}{shapes.format_shape(var.shape)})"
        )
