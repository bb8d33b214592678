"""The functions of a pipeline (``map``, ``filter``, ``scan``, ...) as graphs.

``trace(fn, arg_specs, role)`` converts ``fn`` (through the conversion hook
of ``operators/calls.py``: ``converted_call`` converts user code once
``autograph`` is loaded; the runtime never imports the converter) and traces
it once, with ``rt.function``, against the specs of its arguments, so the
``if``/``while`` inside it become ``If``/``While`` ops.  The result, a
``DataFunction``, knows the spec of what ``fn`` returns and runs its graph on
flat numpy leaves.

An element is passed as the function's arguments the way tf.data passes it:
a tuple element is unpacked into positional arguments, any other element is
one argument.  ``scan`` and ``reduce`` functions get ``(state, element)``.

A failure while running the graph reaches the consumer with its own type
and a note naming the function, where it is defined and the pipeline step.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime import ops
from autograph.runtime.core import nest
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.errors import TracingError, at
from autograph.runtime.exec.interpreter import add_note, run_graph
from autograph.runtime.operators import calls
from autograph.runtime.tracing.function import function as rt_function

from autograph.runtime.data import structure


def describe(fn) -> str:
    """``'parse' defined at file.py:3``: a user function, for messages."""
    target = getattr(fn, "__wrapped__", fn)
    code = getattr(target, "__code__", None)
    name = getattr(target, "__qualname__", None) or type(fn).__name__
    if code is None:
        return f"{name!r}"
    return f"{name!r} defined at {at(code.co_filename, code.co_firstlineno)}"


class DataFunction:
    """A user function traced once into a graph: ``output_spec``, ``graph``, and a call on flat leaves."""

    __slots__ = ("fn", "role", "arg_specs", "output_spec", "graph", "traced_graph", "label", "order")

    def __init__(self, fn, role, arg_specs, output_spec, graph, order, traced_graph=None):
        self.fn = fn
        self.traced_graph = traced_graph  # the graph as traced, before the optimizer
        self.role = role  # 'the map function', for messages
        self.arg_specs = arg_specs
        self.output_spec = output_spec
        self.graph = graph
        self.label = describe(fn)
        self.order = order  # the position in graph.outputs of each flat output leaf (None: in order)

    def __call__(self, leaves):
        """The flat output leaves for the flat input ``leaves``."""
        try:
            values = run_graph(self.graph, leaves)
            order = self.order
            return values if order is None else [values[i] for i in order]
        except Exception as e:  # noqa: BLE001 - every failure names the user's function
            add_note(e, f"while running {self.role} {self.label} of a dataset")
            raise

    def __repr__(self):
        return f"{self.role} {self.label}"


def _arguments(arg_specs, unpack):
    """How the traced wrapper calls ``fn`` with its one nest argument."""
    if unpack and type(arg_specs) is tuple:
        return lambda element: element
    return lambda element: (element,)


def as_element_tensor(value, fn, role, path=""):
    """A leaf a pipeline function returned, as the tensor the element holds."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float, np.ndarray, np.generic)):
        return ops.constant(value)
    raise TracingError(
        f"{role} {describe(fn)} returned {type(value).__name__} {value!r:.60} at {path or 'its result'}; "
        "a dataset element holds tensors, numpy values and Python numbers only. Return tensors."
    )


def trace(fn, arg_specs, role, unpack=True, weak=()) -> DataFunction:
    """Converts and traces ``fn`` once against ``arg_specs`` (a nest of ``TensorSpec``).

    ``weak``: the indices of the flat argument leaves that stand for Python
    numbers (a ``reduce``'s initial ``0``): weakly typed, as in a tensor loop.
    """
    if not callable(fn):
        raise TypeError(f"{role} must be callable, got {type(fn).__name__} {fn!r:.60}")
    as_args = _arguments(arg_specs, unpack)

    def traced(element):
        if weak:
            leaves = nest.flatten(element)
            for i in weak:
                leaves[i] = ops.cast(leaves[i], leaves[i].dtype, weak=True)
            element = nest.pack_as(element, leaves)
        result = calls.converted_call(fn, *as_args(element))
        paths = nest.leaf_paths(result)
        leaves = [as_element_tensor(v, fn, role, p) for v, p in zip(nest.flatten(result), paths)]
        return nest.pack_as(result, leaves)

    traced.__name__ = traced.__qualname__ = _graph_name(fn, role)
    try:
        cf = rt_function(traced, input_signature=[arg_specs]).get_concrete_function(arg_specs)
    except Exception as e:  # noqa: BLE001 - the error keeps its type; the note says which function
        add_note(e, f"while tracing {role} {describe(fn)} for arguments {structure.format_spec(arg_specs)}")
        if not calls.conversion_hook_installed():
            add_note(e, "autograph's converter is not loaded, so the function was traced unconverted: use an "
                        "ag.* name (such as ag.convert) before building the pipeline, or decorate the function "
                        "with @ag.convert")
        raise
    outputs = cf.structured_outputs
    output_spec = structure.spec_of(outputs)
    positions = {id(t): i for i, t in reversed(list(enumerate(cf.graph.outputs)))}
    order = [positions[id(t)] for t in nest.flatten(outputs)]
    in_order = order == list(range(len(cf.graph.outputs)))
    return DataFunction(fn, role, arg_specs, output_spec, cf.execution_graph, None if in_order else order,
                        traced_graph=cf.graph)


def _graph_name(fn, role) -> str:
    name = getattr(fn, "__name__", "fn")
    if not name.isidentifier():  # <lambda>
        name = "lambda"
    return f"{role.split()[-2]}_{name}"
