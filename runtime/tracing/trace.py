"""The trace step: one Python call on placeholders, recorded into a new graph.

``trace(function, key, bound)`` makes the ``ConcreteFunction`` of
``function`` (a ``Function``) for cache key ``key``: it creates a ``Graph``,
a placeholder per array leaf of the key (``signature.leaf_specs``; the
``input_signature``'s specs when there is one), puts them where the leaves
were in the bound arguments (``signature.rebuild``), runs the traced callable
(``trace_transform(f)``, or ``f``) inside the graph, and flattens what it
returns into ``graph.outputs`` plus a structure template
(``_flatten_output``: tensors, numpy values as constants, variables read,
Python scalars kept as they are).  Variables may be created on a
function's first trace only (``variables.creation_scope``); those created
are kept alive by the concrete function.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core.graph import Graph
from autograph.runtime.core.tensor import Tensor, TensorSpec
from autograph.runtime.errors import TracingError
from autograph.runtime.ops import apply, variables
from autograph.runtime.tracing import signature
from autograph.runtime.tracing.concrete import ConcreteFunction, _map_leaves, _Out


def trace(function, key, bound):
    """The ``ConcreteFunction`` of ``function`` for ``key``, traced with the ``bound`` arguments
    (whose values are replaced by the placeholders); returns ``(concrete function, leaf specs)``."""
    binding = function.binding
    specs = []
    for component in key:
        signature.leaf_specs(component, specs)
    graph = Graph(identifier(binding.name, "function"))
    first = function.tracing_count == 0
    with variables.creation_scope(first, binding.name) as created, graph.as_default():
        placeholders = iter(specs)

        def make_leaf(path):
            dtype, shape = next(placeholders)
            return graph.add_placeholder(dtype, shape, name=identifier(path, "input"))

        values = binding.bound_values(bound)
        if binding.input_signature is not None:
            traced_values = {
                name: signature.rebuild_spec(spec, make_leaf, name)
                for (name, _), spec in zip(values, binding.input_signature)
            }
        else:
            traced_values = {name: signature.rebuild(value, make_leaf, name) for name, value in values}
        for name, value in traced_values.items():
            bound.arguments[name] = value
        result = function._callable()(*bound.args, **bound.kwargs)
        outputs = []
        template = _flatten_output(binding.label, result, outputs, graph, "result")
    graph.outputs = outputs
    cf = ConcreteFunction(function, key, graph, template, _input_structure(bound, binding.method))
    cf._variables += tuple(created)
    return cf, specs


def _input_structure(bound, method):
    """(args, kwargs) of the traced call with TensorSpecs in place of the placeholders."""

    def spec_of(value):
        return _map_leaves(value, Tensor, lambda t: TensorSpec(t.shape, t.dtype, name=t.op.name))

    args = tuple(spec_of(v) for v in bound.args)
    if method:
        args = args[1:]
    return args, {k: spec_of(v) for k, v in bound.kwargs.items()}


def _flatten_output(label, value, outputs, graph, path):
    """The structure template of a returned value; appends its tensors to ``outputs``."""
    if isinstance(value, Tensor):
        if value.op.graph is not graph:
            raise TracingError(
                f"{label} returned tensor {value.name} as {path}, which belongs to another graph "
                f"(created at {value.op.location or '<unknown>'}): a tensor escaped the trace that made "
                "it (e.g. kept in a global or an attribute). Compute it inside this function."
            )
        outputs.append(value)
        return _Out(len(outputs) - 1)
    if isinstance(value, (np.ndarray, np.generic)):
        outputs.append(apply.constant(value))
        return _Out(len(outputs) - 1)
    if isinstance(value, variables.Variable):
        outputs.append(value.read_value())
        return _Out(len(outputs) - 1)
    if isinstance(value, tuple):
        items = [_flatten_output(label, v, outputs, graph, f"{path}[{i}]") for i, v in enumerate(value)]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [_flatten_output(label, v, outputs, graph, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: _flatten_output(label, v, outputs, graph, f"{path}[{k!r}]") for k, v in value.items()}
    if type(value) in signature.FAST_SCALARS or isinstance(value, signature.CONSTANT_OBJECTS):
        return value
    raise TypeError(
        f"{label} returned a {type(value).__name__} as {path} ({value!r:.60}): a traced function "
        "may return tensors, numpy values, Python scalars/strings/None and tuples/lists/dicts/namedtuples "
        "of those"
    )


def identifier(text: str, default: str) -> str:
    """``text`` made a readable identifier for graph and op names (``<lambda>`` -> ``lambda``)."""
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in text).strip("_")
    return name or default
