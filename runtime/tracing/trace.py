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
function's first call only (``variables.creation_scope``; see ``trace``);
those created are kept alive by the concrete function.  A variable argument
is traced as a stand-in of its dtype and shape (``ConcreteFunction.on_variables``
puts the variables of each call in its place).
"""

from __future__ import annotations

import enum
import types
import weakref

import numpy as np

from autograph.runtime.core import nest
from autograph.runtime.core.graph import Graph
from autograph.runtime.core.location import source_at
from autograph.runtime.core.tensor import Tensor, TensorSpec
from autograph.runtime.errors import AutoGraphError, TracingError
from autograph.runtime.ops import apply, variables
from autograph.runtime.tracing import argument_containers, deferred_raise, escapes, locked_arrays, signature
from autograph.runtime.tracing.concrete import ConcreteFunction, OutputSlot


def trace(function, key, bound, arg_variables=()):
    """The ``ConcreteFunction`` of ``function`` for ``key``, traced with the ``bound`` arguments
    (whose values are replaced by the placeholders) and ``arg_variables`` (the variable
    arguments, replaced by stand-ins); returns ``(concrete function, leaf specs, traces)``.

    Variables may be created on the first trace only.  If that trace creates
    some, the function is traced once more, with creation refused: a second
    creation means the Python function makes a new variable at every call,
    which the graph (whose variable is made once) could not do, so it is an
    error, raised before any value is returned (TensorFlow's rule).  A
    function that creates none is traced once.
    """
    binding = function.binding
    specs = []
    for component in key:
        signature.leaf_specs(component, specs)
    stand_ins = {}
    if arg_variables:
        with variables.creation_scope():  # not the user's: made outside the refusals below
            stand_ins = {id(v): _stand_in(v) for v in arg_variables}
    arguments = dict(bound.arguments)
    refusal = None if function.tracing_count == 0 else _refusal(binding.label, "retrace")
    graph, template, created, guards = _trace_graph(function, specs, bound, stand_ins, refusal)
    traces = 1
    if created:
        bound.arguments.update(arguments)
        graph, template, _, guards = _trace_graph(function, specs, bound, stand_ins, _refusal(binding.label, "call"))
        traces = 2
    structure = _input_structure(bound, binding.method)
    cf = ConcreteFunction(function, key, graph, template, structure, [stand_ins[id(v)] for v in arg_variables],
                          created=created)
    cf.guards = guards
    return cf, specs, traces


def _trace_graph(function, specs, bound, stand_ins, refusal):
    """(graph, output template, variables created, guards) of one Python call on placeholders
    (the guards: ``escapes.write_back_escapes``)."""
    binding = function.binding
    graph = Graph(identifier(binding.name, "function"))
    with variables.creation_scope(refusal) as created, graph.as_default():
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
            stand_in = (lambda var: stand_ins[id(var)]) if stand_ins else None
            traced_values = {name: signature.rebuild(value, make_leaf, name, stand_in) for name, value in values}
        for name, value in traced_values.items():
            bound.arguments[name] = value
        before = escapes.values_before(function.python_function, bound.arguments.items())
        containers = argument_containers.argument_containers(traced_values)
        arrays = locked_arrays.locked(before.arrays, locked_arrays.from_outside(binding.label))
        try:
            with argument_containers.traced_arguments(containers), arrays:
                result = function.traced_callable()(*bound.args, **bound.kwargs)
        except Exception as error:  # noqa: BLE001 - raised when the graph runs, after what comes first
            if not deferred_raise.defer(error, graph):
                if isinstance(error, AutoGraphError):
                    escapes.restore_after_refusal(function.python_function, bound.arguments.items(), before)
                raise
            result = None
        argument_containers.refuse_changed_arguments(containers, binding.label)
        outputs = []
        template = _flatten_output(binding.label, result, outputs, graph, "result")
        guards = escapes.write_back_escapes(graph, function.python_function, bound.arguments.items(),
                                            binding.label, before)
    graph.outputs = outputs
    return graph, template, created, guards


def trace_graph_code():
    """The code of the frame in which a trace calls the traced function: the frames outside it are
    not being traced (``operators/outside_writes.py`` stops its walk there)."""
    return _trace_graph.__code__


def _stand_in(var):
    """A variable of ``var``'s dtype, shape and name for the trace to use in place of the argument
    ``var``, so that the graph can run on any variable of that spec."""
    shape = var.shape if var.shape is not None else ()
    zeros = np.zeros([0 if d is None else d for d in shape], var.dtype)
    return variables.Variable(zeros, name=var.name, shape=var.shape)


def _refusal(label, when):
    """The message maker for a variable created where it may not be (``variables.creation_scope``)."""

    def message(name, location):
        source = source_at(location)
        if source:
            location = f"{location} (`{source}`)"  # the line names the user's variable
        if when == "call":
            what = (f"rt.Variable {name!r} created at {location} by {label} is created on every call: "
                    "the Python function makes a new variable each time it runs, while a traced graph would "
                    "keep the first one and update it at every call")
        else:
            what = (f"rt.Variable {name!r} created at {location} while retracing {label}: a traced "
                    "function may create variables on its first call only; a retrace would create another one")
        return (f"{what}. Create the variable outside the function (a global, or an attribute set in "
                "__init__), or create it once, guarded by `if self.v is None: self.v = rt.Variable(...)`.")

    return message


def _input_structure(bound, method):
    """(args, kwargs) of the traced call with TensorSpecs in place of the placeholders."""

    def spec_of(value):
        if isinstance(value, Tensor):
            return TensorSpec(value.shape, value.dtype, name=value.op.name)
        return _held_weakly(value)

    def specs(value):
        return nest.map_structure(spec_of, nest.as_base_containers(value))

    args = tuple(specs(v) for v in bound.args)
    if method:
        args = args[1:]
    return args, {k: specs(v) for k, v in bound.kwargs.items()}


def _held_weakly(value):
    """A static object argument as the concrete function keeps it: a weak proxy when it can be
    (the cache must not keep the objects it is keyed by alive)."""
    if isinstance(value, variables.Variable) or type(value) in signature.FAST_SCALARS:
        return value
    try:
        return weakref.proxy(value)
    except TypeError:
        return value


def _flatten_output(label, value, outputs, graph, path):
    """The structure template of a returned value; appends its tensors to ``outputs``."""

    def output(where, leaf):
        return _output_leaf(label, leaf, outputs, graph, path + where)

    return nest.map_structure_with_paths(output, nest.as_base_containers(value))


def _output_leaf(label, value, outputs, graph, path):
    """The template entry of one returned leaf: an ``OutputSlot`` for a tensor (appended to
    ``outputs``), the value itself for a Python constant."""
    if isinstance(value, Tensor):
        if value.op.graph is not graph:
            raise TracingError(
                f"{label} returned tensor {value.name} as {path}, which belongs to another graph "
                f"(created at {value.op.location or '<unknown>'}): a tensor escaped the trace that made "
                "it (e.g. kept in a global or an attribute). Compute it inside this function."
            )
        outputs.append(value)
    elif isinstance(value, (np.ndarray, np.generic)):
        outputs.append(apply.constant(value))
    elif isinstance(value, variables.Variable):
        outputs.append(value.read_value())
    elif type(value) in signature.FAST_SCALARS or isinstance(value, _RETURNED_AS_IS):
        return value
    else:
        raise TypeError(
            f"{label} returned a {type(value).__name__} as {path} ({value!r:.60}): a traced function "
            "may return tensors, numpy values, Python scalars/strings/None and tuples/lists/dicts/namedtuples "
            "of those"
        )
    return OutputSlot(len(outputs) - 1)


# objects a traced function may return as they are (besides Python scalars)
_RETURNED_AS_IS = (complex, bytes, type, np.dtype, types.FunctionType, types.BuiltinFunctionType, enum.Enum)


def identifier(text: str, default: str) -> str:
    """``text`` made a readable identifier for graph and op names (``<lambda>`` -> ``lambda``)."""
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in text).strip("_")
    return name or default
