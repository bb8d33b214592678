"""Helpers for the control-flow tests: trace a function by hand and run its graph.

``traced(fn, *specs)`` builds a ``Graph`` with one placeholder per
``(dtype, shape)`` spec, calls ``fn`` on the placeholders inside it and
returns a ``Traced`` that runs the graph with the executor (verifying it
first) and lists the op types it holds, sub-graphs included.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import nest as cf_nest

from autograph.runtime.exec import interpreter as executor
from autograph.runtime.core.graph import Graph
from autograph.runtime.core.tensor import Tensor


class Traced:
    def __init__(self, graph, structure):
        self.graph = graph
        self.structure = structure

    def __call__(self, *args):
        values = executor.run_graph(self.graph, [np.asarray(a) for a in args])
        it = iter(values)
        flat = [next(it) if isinstance(v, Tensor) else v for v in cf_nest.flatten(self.structure)]
        return cf_nest.pack_as(self.structure, flat)

    def op_types(self, graph=None) -> list[str]:
        """Op types of the main graph and every library function, in a stable order."""
        types = [op.type for op in self.graph.operations]
        for name in sorted(self.graph.library):
            types.extend(op.type for op in self.graph.library[name].operations)
        return types

    def count(self, op_type) -> int:
        return self.op_types().count(op_type)


def traced(fn, *specs):
    graph = Graph("main")
    with graph.as_default():
        inputs = [graph.add_placeholder(np.dtype(d), s, name=f"arg{i}") for i, (d, s) in enumerate(specs)]
        result = fn(*inputs)
    graph.outputs = [v for v in cf_nest.flatten(result) if isinstance(v, Tensor)]
    if hasattr(graph, "verify"):
        graph.verify()
    return Traced(graph, result)
