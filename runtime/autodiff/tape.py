"""``rt.GradientTape``, TensorFlow-style, inside a traced function.

    @ag.function
    def step(x):
        with rt.GradientTape() as tape:
            tape.watch(x)
            loss = rt.reduce_sum(rt.square(x * w))      # w an rt.Variable: watched automatically
        dx, dw = tape.gradient(loss, [x, w])

A tape *records* the ops its ``with`` block adds to the graph being traced
(a tensor ``if`` or loop in the block is one recorded ``If``/``While`` op).
``gradient(target, sources)`` differentiates ``target`` (a tensor, or a
nest of them: their gradients add up) through the recorded ops only
(``backprop.gradients``), with respect to each source: a watched tensor
(``tape.watch``), or an ``rt.Variable`` read in the block -- through all its
reads there; with ``watch_accessed_variables=False`` only variables passed
to ``watch``.  The result has the structure of ``sources``; an unwatched,
unconnected or integer source gives ``None`` (zeros for a float one with
``unconnected_gradients="zero"``).  ``output_gradients`` are the cotangents
of the targets (a vector-Jacobian product).  Nested tapes give higher
derivatives: an outer tape records the gradient ops an inner one adds.

Outside a trace nothing is recorded (ops run eagerly on numpy), so
entering a tape there is an error pointing to ``ag.grad``.  A
non-persistent tape answers ``gradient`` once.
"""

from __future__ import annotations

from autograph.runtime import ops
from autograph.runtime.autodiff import backprop
from autograph.runtime.core import nest, opdef
from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import user_location_text
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.errors import TracingError
from autograph.runtime.ops.variables import Variable

__all__ = ["GradientTape"]


class GradientTape:
    """Records the ops of a ``with`` block of a traced function, to differentiate them."""

    __autograph_suppresses__ = ()  # its __exit__ suppresses nothing (operators/raises.py: suppressed_by)

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self.persistent = bool(persistent)
        self.watch_accessed_variables = bool(watch_accessed_variables)
        self._graph = None
        self._start = self._stop = None
        self._watched: dict = {}  # id -> watched tensor
        self._watched_variables: dict = {}  # handle id -> variable
        self._used = False

    def __enter__(self):
        graph = current_graph()
        if graph is None:
            raise TracingError(
                f"rt.GradientTape at {user_location_text()} is used outside a traced function: there ops run "
                "eagerly on numpy values and nothing is recorded. Use it inside an ag.function, or take "
                "gradients of a Python function with ag.grad(f)(x) / ag.value_and_grad(f)(x).")
        self._graph, self._start, self._stop = graph, len(graph.operations), None
        return self

    def __exit__(self, *exc_info):
        self._stop = len(self._graph.operations)
        return False

    def watch(self, tensor) -> None:
        """Makes the tensors (and variables) of the nest ``tensor`` sources this tape differentiates for."""
        for leaf in nest.flatten(tensor):
            if isinstance(leaf, Variable):
                self._watched_variables[leaf.handle.id] = leaf
            elif isinstance(leaf, Tensor):
                self._watched[id(leaf)] = leaf
            else:
                raise TypeError(f"GradientTape.watch at {user_location_text()}: {type(leaf).__name__} {leaf!r:.40} is "
                                "not a tensor of the traced function; watch the tensors computed from it")

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients="none"):
        """The gradients of ``target`` with respect to ``sources``, in the structure of ``sources``."""
        self._check_call(unconnected_gradients)
        recorded_ops = self._graph.operations[self._start:self._stop]
        targets = _tensors(target, "target")
        grad_ys = None if output_gradients is None else list(nest.flatten(output_gradients))
        if grad_ys is not None and len(grad_ys) != len(targets):
            raise ValueError(f"GradientTape.gradient: {len(grad_ys)} output_gradients for {len(targets)} targets")
        leaves = nest.flatten(sources)
        reads = [self._read_tensors(leaf, recorded_ops) for leaf in leaves]
        xs = [x for found in reads for x in found]
        found = iter(backprop.gradients(targets, xs, grad_ys, {id(op) for op in recorded_ops}) if xs else ())
        results = []
        for leaf, tensors in zip(leaves, reads):
            parts = [g for g in (next(found) for _ in tensors) if g is not None]
            total = None
            for g in parts:
                total = g if total is None else ops.add(total, g)
            if total is None and unconnected_gradients == "zero" and _is_float(leaf):
                total = _zeros_of(leaf)
            results.append(total)
        return nest.pack_as(sources, results)

    def _check_call(self, unconnected_gradients):
        if self._graph is None:
            raise TracingError(f"GradientTape.gradient at {user_location_text()}: the tape has recorded nothing; "
                               "compute the target inside `with rt.GradientTape() as tape:`")
        if unconnected_gradients not in ("none", "zero"):
            raise ValueError(f"unconnected_gradients must be 'none' or 'zero', got {unconnected_gradients!r}")
        if self._used and not self.persistent:
            raise TracingError(f"GradientTape.gradient at {user_location_text()} is called a second time on a "
                               "non-persistent tape; create it with rt.GradientTape(persistent=True) to call "
                               "gradient() more than once")
        self._used = True

    def _read_tensors(self, leaf, recorded_ops) -> list:
        """The tensors standing for source ``leaf`` in the recorded ops (several reads of a variable)."""
        if isinstance(leaf, Variable):
            if not (self.watch_accessed_variables or leaf.handle.id in self._watched_variables):
                return []
            reads = [op.outputs[0] for op in recorded_ops
                     if op.type == "ReadVariable" and op.attrs["handle"].id == leaf.handle.id]
            _refuse_reads_in_control_flow(leaf, recorded_ops)
            return reads
        if isinstance(leaf, Tensor):
            return [leaf] if id(leaf) in self._watched else []
        raise TypeError(f"GradientTape.gradient at {user_location_text()}: a source must be a tensor or an "
                        f"rt.Variable, got {type(leaf).__name__} {leaf!r:.40}")


def _tensors(target, what):
    leaves = nest.flatten(target)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise TypeError(f"GradientTape.gradient at {user_location_text()}: the {what} must be tensors, got "
                            f"{type(leaf).__name__} {leaf!r:.40}")
    return leaves


def _is_float(leaf) -> bool:
    return leaf.dtype.kind == "f"


def _zeros_of(leaf):
    if isinstance(leaf, Variable):
        return ops.zeros_like(leaf.read_value())
    return backprop.zeros_for(leaf)


def _refuse_reads_in_control_flow(variable, recorded_ops) -> None:
    """A variable read inside a tensor if/while body would get no gradient from there: refused."""
    library = recorded_ops[0].graph.library if recorded_ops else {}
    pending = [library[name] for op in recorded_ops for _, name in opdef.function_attrs(op)]
    seen = set()
    while pending:
        graph = pending.pop()
        if id(graph) in seen:
            continue
        seen.add(id(graph))
        for op in graph.operations:
            if op.type == "ReadVariable" and op.attrs["handle"].id == variable.handle.id:
                raise TracingError(
                    f"GradientTape.gradient: rt.Variable {variable.name!r} is read inside a tensor if or loop "
                    f"(at {op.location or '<unknown>'}), and gradients with respect to a variable read there are "
                    "not supported; read it once before the if or loop (w = v.read_value()) and use w inside")
            pending.extend(library[name] for _, name in opdef.function_attrs(op))
