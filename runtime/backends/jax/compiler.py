"""``compile_graph(graph)``: the whole graph as one ``jax.jit`` function, with its state.

The lowered function is ``jax.jit(pure)`` with ``pure(args, state) ->
(outputs, state)`` (``lowering.run_graph`` traced by JAX); ``JaxFunction``,
the callable returned, reads the graph's state (its variables' values, its
random streams' keys: ``effects.py``) before a call and writes the new state
back after it, under one lock, so calls of lowered functions never lose a
variable update to each other.  ``jax.jit`` compiles once per signature
(shapes and dtypes of the arguments) and caches.

Tracing and running a graph with 64-bit values (or checks, or a counted
loop) happen under ``jax.enable_x64(True)``: without it JAX computes
int64/float64 graphs in 32 bits.  A graph of 32-bit values runs without the
context, which costs some 15 us a call.  (JAX's global configuration is not
changed: the user's own JAX code is unaffected.)

What cannot be lowered is found in two steps: ``compile_graph`` refuses at
once a graph holding an op type the backend has neither a rule nor a kernel
for (``Unlowerable``); an op that turns out unlowerable while JAX traces (a
shape computed in the graph, an index that may be out of range, a loop
variable whose shape changes) makes the first call run the numpy
interpreter instead, from then on, after one ``AutoGraphWarning`` naming it.
Nothing has run when that is decided: JAX traces before it executes.
"""

from __future__ import annotations

import contextlib
import threading

import jax
import numpy as np

from autograph.runtime.backends.jax import checks, effects, lowering
from autograph.runtime.backends.jax.errors import Unlowerable, at_op
from autograph.runtime.backends.jax.kernels import KERNELS, OPERANDS, UNLOWERABLE
from autograph.runtime.core import opdef, walk
from autograph.runtime.core.location import warn_at_user
from autograph.runtime.errors import AutoGraphWarning
from autograph.runtime.exec import parallel

_state_lock = threading.Lock()


def check(graph, _seen=None) -> None:
    """``Unlowerable`` naming the first op of ``graph`` (or of a sub-graph) whose type the
    backend cannot lower in any case."""
    seen = set() if _seen is None else _seen
    seen.add(id(graph))
    for op in graph.operations:
        known = op.type in lowering.RULES or op.type in KERNELS or op.type == "Placeholder"
        if not known and (op.type not in UNLOWERABLE or opdef.get(op.type).stateful):
            reason = UNLOWERABLE.get(op.type, f"the JAX backend has no kernel for {op.type}")
            raise Unlowerable(reason, op)
        for attr in opdef.function_attr_names(op.type):
            sub = graph.library[op.attrs[attr]]
            if id(sub) not in seen:
                check(sub, seen)


def compile_graph(graph, label=None):
    """``(function, text)``: ``function(args) -> list of numpy outputs`` running ``graph`` on XLA."""
    check(graph)
    fn = JaxFunction(graph, label or repr(graph.name))
    text = (f"# graph {graph.name!r} lowered to JAX: jax.jit of lowering.run_graph over its "
            f"{len(graph.operations)} ops; JaxFunction.jaxpr(args) shows the jaxpr\n")
    return fn, text


class JaxFunction:
    """A graph lowered to JAX and compiled with ``jax.jit``: ``self(args)`` runs it."""

    def __init__(self, graph, label):
        self.graph = graph
        self.label = label
        self.keys = list(lowering.state_keys(graph))
        check_ops, self.internal = [], {}  # the check ops; the initial values of their state
        for g in _graphs(graph):
            for op in g.operations:
                try:
                    if op.type in ("RandomUniform", "RandomNormal"):
                        effects.init_stream(op)
                    if checks.keys_of(op):
                        check_ops.append(op)
                        self.internal.update(checks.initial_values(op))
                except Unlowerable as e:
                    raise at_op(e, op) from None
        self.context = checks.Context(check_ops)
        self.external = [k for k in self.keys if k not in self.internal]  # the process's: read, written back
        self.has_effects = lowering.changes_state(graph)
        self.x64 = bool(check_ops) or _has_64_bit_values(graph)  # else the x64 context (~15 us a call) is left out
        self.fallback = None  # the numpy runner, once a trace found an unlowerable op
        self._jitted = jax.jit(self._pure)

    def _pure(self, args, values):
        state = {**self.internal, **dict(zip(self.external, values))}
        checks.Context.local.current = self.context
        outs = lowering.run_graph(self.graph, list(args), state)
        return tuple(outs), tuple(state[k] for k in self.external), tuple(state[k] for k in self.internal)

    def jaxpr(self, args):
        """The jaxpr of the lowered graph for ``args`` (``jax.make_jaxpr``)."""
        with jax.enable_x64(True):
            return jax.make_jaxpr(self._pure)(tuple(args), tuple(effects.read_state(k) for k in self.external))

    def __call__(self, args):
        if self.fallback is not None:
            return self.fallback(args)
        args = tuple(args)
        with jax.enable_x64(True) if self.x64 else contextlib.nullcontext():
            try:
                if not self.external:
                    outs, _, internal = self._call(args, ())
                else:
                    with _state_lock:
                        outs, new, internal = self._call(args, tuple(effects.read_state(k) for k in self.external))
                        for key, value in zip(self.external, new):
                            effects.write_state(key, value)
            except _Fallback as e:
                return self._fall_back(e.reason)(args)
        if internal:
            self._raise_failed_check(dict(zip(self.internal, internal)))
        return [np.array(v) for v in outs]

    def _raise_failed_check(self, internal):
        code = int(internal[checks.CHECK])
        if code:
            op = self.context.ops[code - 1]
            witnesses = [internal[k] for k in checks.keys_of(op)[1:]]
            raise checks.error(op, witnesses)  # writable numpy arrays, as the numpy backend returns

    def _call(self, args, values):
        """The jitted call; a failure while JAX traces is a ``_Fallback``."""
        try:
            result = self._jitted(args, values)
            if self.has_effects:
                jax.effects_barrier()
            return result
        except Unlowerable as e:
            raise _Fallback(str(e)) from None
        except (TypeError, ValueError, IndexError, jax.errors.JAXTypeError) as e:  # raised by JAX while tracing
            raise _Fallback(f"JAX could not trace it: {type(e).__name__}: {_first_line(e)}") from None

    def _fall_back(self, reason):
        warn_at_user(f"{self.label}: backend='jax' cannot run the graph ({reason}); running the numpy "
                     "interpreter instead", AutoGraphWarning)
        self.fallback = parallel.runner(self.graph)
        return self.fallback


class _Fallback(Exception):
    def __init__(self, reason):
        self.reason = reason


def _first_line(error) -> str:
    return str(error).strip().split("\n", 1)[0]


def _has_64_bit_values(graph) -> bool:
    """True if a value of ``graph`` (or of its sub-graphs, or a variable it uses) is 64-bit, or an op
    computes in a 64-bit dtype (``int32 < uint32`` in int64: ``kernels.OPERANDS``), or a loop counts
    its iterations (an int64 counter)."""
    for g in _graphs(graph):
        for op in g.operations:
            dtypes = [t.dtype for t in (*op.inputs, *op.outputs)] + [op.attrs.get("dtype")]
            dtypes += OPERANDS[op.type](op) if op.type in OPERANDS else []
            if any(isinstance(d, np.dtype) and d.itemsize == 8 for d in dtypes):
                return True
            if op.type == "While" and op.attrs.get("maximum_iterations") is not None:
                return True
    return False


def _graphs(graph):
    """``graph`` and every graph it calls, each once."""
    return walk.each_once(graph, _called_graphs)


def _called_graphs(graph):
    return [graph.library[op.attrs[a]] for op in graph.operations for a in opdef.function_attr_names(op.type)]



def jax_function(graph):
    """``graph`` as an ordinary JAX function: ``fn(*inputs) -> output`` (a tuple for several outputs),
    to ``jax.jit``, ``vmap`` or shard as any other; a graph with state (variables, random ops) is
    refused (``compile_graph`` threads state).  64-bit dtypes need ``jax.enable_x64(True)``."""
    check(graph)
    for g in _graphs(graph):
        for op in g.operations:
            if checks.keys_of(op):
                raise Unlowerable("it raises for some values on numpy (an index out of range, an assert, ...), "
                                  "which an ordinary JAX function cannot; run it through ag.function(..., "
                                  "backend='jax'), which raises after the call", op)
    if lowering.state_keys(graph):
        raise Unlowerable(f"graph {graph.name!r} reads or changes state (variables, random streams), which an "
                          "ordinary JAX function cannot hold; run it through ag.function(..., backend='jax')")
    n = len(graph.all_inputs)

    def fn(*inputs):
        if len(inputs) != n:
            raise TypeError(f"graph {graph.name!r} takes {n} input(s) (declared inputs, then captures), "
                            f"got {len(inputs)}")
        outs = lowering.run_graph(graph, list(inputs), {})
        return outs[0] if len(outs) == 1 else tuple(outs)

    fn.__name__ = graph.name
    return fn
