"""The graph IR: operations in creation order, and a library of sub-graphs.

An ``Operation`` is data -- a type, input tensors, output tensors,
attributes, control inputs and the user's ``file:line`` that created it --
not a subclass per op kind; what an op type means (shape inference, kernel,
statefulness) lives in the op registry (``runtime/core/opdef.py``).

A ``Graph`` is a function: placeholders (``inputs``), the operations that
compute from them, ``outputs``, and the ``captures`` it took from enclosing
graphs (outer tensor, inner placeholder).  Functional control flow (``If``,
``While``) refers to its bodies by name in the function library, which the
outermost graph owns and every sub-graph shares, as in TensorFlow's control
flow v2.

While tracing, the innermost graph being built is the *current* graph
(``Graph.as_default()``); ops created then go into it, and a tensor of an
enclosing graph used there is captured automatically.
"""

from __future__ import annotations

import re
import threading

from autograph.runtime.errors import TracingError
from autograph.runtime.core.tensor import Tensor

class _TraceState(threading.local):
    """Per thread: the stack of graphs being built (set up on a thread's first access, so that
    ``current_graph()`` -- checked once per Python loop of converted code -- never misses)."""

    def __init__(self):
        self.stack: list = []


_state = _TraceState()

# How many graphs are being built, over all threads: 0 means no trace anywhere, a
# check cheaper than the thread-local stack (see operators.calls.dispatching).
# Changed under the lock, before a push and after a pop, so it never undercounts.
active_traces = [0]
_active_lock = threading.Lock()


def current_graph():
    """The graph being built by the innermost trace, or None when eager."""
    stack = _state.stack
    return stack[-1] if stack else None


class _Default:
    """``graph.as_default()``: a class, not a generator (entered several times per traced statement)."""

    __slots__ = ("graph",)

    def __init__(self, graph):
        self.graph = graph

    def __enter__(self):
        with _active_lock:
            active_traces[0] += 1
        _state.stack.append(self.graph)
        return self.graph

    def __exit__(self, *exc_info):
        _state.stack.pop()
        with _active_lock:
            active_traces[0] -= 1
        return False


_SUFFIX = re.compile(r"_\d+$")


def base_name(name: str) -> str:
    """``add_3`` -> ``add``: the base to ask a graph for a fresh unique name."""
    return _SUFFIX.sub("", name)


class Operation:
    """One node: ``outputs = type(inputs; attrs)`` after ``control_inputs`` (a tuple: most ops have
    none, and the empty tuple is one object the garbage collector never walks)."""

    __slots__ = ("graph", "name", "type", "inputs", "outputs", "attrs", "control_inputs", "location")

    def __init__(self, graph, name, type, inputs, attrs, control_inputs, location):
        self.graph = graph
        self.name = name
        self.type = type
        self.inputs = list(inputs)
        self.outputs = []
        self.attrs = dict(attrs)
        self.control_inputs = tuple(control_inputs)
        self.location = location

    def __repr__(self):
        from autograph.runtime.core import printer

        return printer.format_op(self)


class Graph:
    """A graph of operations: a traced function or a control-flow body."""

    def __init__(self, name: str = "main", outer: "Graph | None" = None):
        self.name = name
        self.outer = outer
        self.operations: list[Operation] = []
        self.inputs: list[Tensor] = []
        self.outputs: list = []
        self.captures: list[tuple[Tensor, Tensor]] = []
        self.library: dict[str, Graph] = outer.library if outer is not None else {}
        self.last_stateful: Operation | None = None
        self._capture_map: dict[int, Tensor] = {}
        self._name_counts: dict[str, int] = {}

    # -- naming -----------------------------------------------------------

    def unique_name(self, base: str) -> str:
        """``base`` the first time, then ``base_1``, ``base_2``, ... -- never a name given out before
        (``const_1`` asked for as a base of its own, then ``const`` twice: ``const_2`` the second time).
        ``_name_counts`` holds, for every name given out, the next suffix to try with it as a base."""
        n = self._name_counts.get(base)
        if n is None:
            self._name_counts[base] = 1
            return base
        name = f"{base}_{n}"
        while name in self._name_counts:
            n += 1
            name = f"{base}_{n}"
        self._name_counts[base] = n + 1
        self._name_counts[name] = 1
        return name

    def recount_names(self) -> None:
        """Rebuilds the ``unique_name`` counters from the op names (after ops were added under
        names of their own, as loading a graph def does): ``add_3`` means ``add`` goes on at 4."""
        counts: dict[str, int] = {}
        for op in self.operations:
            base = base_name(op.name)
            suffix = op.name[len(base) + 1:]
            number = int(suffix) + 1 if suffix else 1
            counts[base] = max(counts.get(base, 0), number)
            counts[op.name] = max(counts.get(op.name, 0), 1)
        self._name_counts = counts

    def add_function(self, graph: "Graph", base: str) -> str:
        """Adds ``graph`` to the shared function library under a unique name."""
        name = base
        i = 0
        while name in self.library:
            i += 1
            name = f"{base}_{i}"
        graph.name = name
        self.library[name] = graph
        return name

    # -- building ---------------------------------------------------------

    def as_default(self):
        """Makes this the current graph: new ops go here (``with graph.as_default():``)."""
        return _Default(self)

    def add_op(self, type: str, inputs, attrs, output_specs, *, stateful=False, location=None, name=None):
        """Appends an operation; ``output_specs`` is a list of (dtype, shape)."""
        inputs = [self.capture(t) if t.op.graph is not self else t for t in inputs]
        control_inputs = (self.last_stateful,) if stateful and self.last_stateful is not None else ()
        op = Operation(self, self.unique_name(name or type), type, inputs, attrs, control_inputs, location)
        op.outputs = [Tensor(op, i, dtype, shape) for i, (dtype, shape) in enumerate(output_specs)]
        self.operations.append(op)
        if stateful:
            self.last_stateful = op
        return op

    def add_placeholder(self, dtype, shape, name="input"):
        """A new graph input of the given dtype and shape."""
        op = self.add_op("Placeholder", [], {"dtype": dtype, "shape": shape}, [(dtype, shape)], name=name)
        self.inputs.append(op.outputs[0])
        return op.outputs[0]

    def capture(self, tensor: Tensor) -> Tensor:
        """The placeholder standing for ``tensor`` of an enclosing graph."""
        found = self._capture_map.get(id(tensor))
        if found is not None:
            return found
        if self.outer is None or not self.encloses(tensor.op.graph):
            raise TracingError(
                f"tensor {tensor.name} belongs to another trace (created at "
                f"{tensor.op.location or '<unknown>'}) and cannot be used in graph {self.name!r}: "
                "a tensor escaped the function or branch that created it. Return it from that "
                "function instead of storing it in a Python variable or attribute."
            )
        outer_tensor = tensor if tensor.op.graph is self.outer else self.outer.capture(tensor)
        inner = self.add_placeholder(tensor.dtype, tensor.shape, name="capture")
        self.inputs.pop()  # captures are listed apart from the declared inputs
        self.captures.append((outer_tensor, inner))
        self._capture_map[id(tensor)] = inner
        return inner

    def set_captures(self, pairs) -> None:
        """Makes ``pairs`` of (outer tensor, placeholder of this graph) the captures (a pass that
        moves or substitutes the outer tensors)."""
        self.captures = list(pairs)
        self._capture_map = {id(outer): inner for outer, inner in self.captures}

    def add_capture(self, outer: Tensor, inner: Tensor) -> None:
        """Records ``inner``, a placeholder of this graph, as the capture of ``outer`` (a loader
        rebuilding a graph's captures; ``capture`` makes them while tracing)."""
        self.captures.append((outer, inner))
        self._capture_map[id(outer)] = inner

    def encloses(self, graph) -> bool:
        """True if ``graph`` is this graph's outer graph or one around that."""
        g = self.outer
        while g is not None:
            if g is graph:
                return True
            g = g.outer
        return False

    @property
    def all_inputs(self) -> list[Tensor]:
        """Declared inputs followed by capture placeholders (the calling convention)."""
        return self.inputs + [inner for _, inner in self.captures]

    def is_stateful(self) -> bool:
        """True if this graph or any function it calls holds a stateful op."""
        return self.last_stateful is not None

    # -- printing, serialization, verification (thin delegations) ---------

    def to_text(self, *, locations: bool = True) -> str:
        """A readable listing, one op per line, sub-graphs inline (``runtime/core/printer.py``)."""
        from autograph.runtime.core import printer

        return printer.to_text(self, locations=locations)

    def to_dot(self) -> str:
        """A Graphviz digraph of this graph and the functions it calls."""
        from autograph.runtime.core import printer

        return printer.to_dot(self)

    def _repr_svg_(self) -> str | None:
        """Jupyter shows a graph as a picture when Graphviz is installed (``core/render.py``),
        else as its text listing."""
        from autograph.runtime.core import render

        return render.svg_or_none(self)

    def as_graph_def(self) -> dict:
        """A JSON-serializable dict: nodes and function library (``runtime/core/serialize.py``)."""
        from autograph.runtime.core import serialize

        return serialize.as_graph_def(self)

    @classmethod
    def from_graph_def(cls, graph_def: dict, options=None, **limits) -> "Graph":
        """Rebuilds a graph saved with ``as_graph_def`` (no Python source needed), checked first:
        ``options``/``limits`` are ``serialize.LoadOptions`` (``max_elements=...``)."""
        from autograph.runtime.core import serialize

        return serialize.from_graph_def(graph_def, options, **limits)

    def verify(self) -> None:
        """Checks the IR's invariants; raises ``VerificationError`` (``runtime/core/verify.py``)."""
        from autograph.runtime.core import verify

        verify.verify(self)

    def __repr__(self):
        return self.to_text().rstrip("\n")
