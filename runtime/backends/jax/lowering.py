"""A graph as one JAX function: ``run_graph`` evaluates the ops while ``jax.jit`` traces it.

``run_graph(graph, args, state)`` walks the scheduled ops of ``graph`` (what
its outputs need and every stateful op: ``exec.plan.needed_ops``) in graph
order, computing each op's outputs from its inputs' values, and returns the
outputs' values; ``state`` (``effects.py``) is updated as the stateful ops
run.  One rule per op kind (``RULES``; default: the pure kernel of
``kernels.KERNELS``):

* ``Const`` -- its numpy value.  Values known while tracing stay numpy
  values, and a pure op whose inputs are all known is computed by the numpy
  backend's own kernel (numpy's semantics exactly, and shapes stay static for
  the ops that need them: ``Reshape``, ``Fill``, ``Range``, random shapes);
* ``If`` -- ``lax.cond`` over the two branch graphs (the taken branch alone
  when the predicate is known); the branches close over the op's inputs and
  return their outputs and the state they may change;
* ``While`` -- ``lax.while_loop`` whose carry is the loop variables, the
  state the loop may change and, with ``maximum_iterations``, a counter.  A
  condition graph that changes state (a ``print`` in it) runs in the body,
  after the body graph, as the interpreter runs it: ``cond, body, cond, ...``;
* every other op -- its rule in ``effects.RULES`` or its kernel.

The inputs of an op are first cast to the dtypes numpy computes it in
(``operands``: numpy's loop for a ufunc, the accumulator of a reduction),
where JAX would promote otherwise, and every result is cast to the dtype the
op's definition inferred, so the lowered graph returns numpy's values and
dtypes (64-bit types need x64: ``compiler.py``
traces and runs under ``jax.enable_x64``).  A 0-d weakly typed constant
reaches a JAX kernel as a Python scalar, weakly typed as in numpy.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from autograph.runtime.backends.jax import checks, effects
from autograph.runtime.backends.jax.errors import Unlowerable, at_op, unlowerable
from autograph.runtime.backends.jax.kernels import KERNELS, OPERANDS, UNLOWERABLE
from autograph.runtime.core import backend, opdef
from autograph.runtime.exec.plan import needed_ops

_STATIC = (np.ndarray, np.generic, int, float, bool)


def is_static(value) -> bool:
    """True if ``value`` is known while tracing (not a JAX tracer)."""
    return isinstance(value, _STATIC)


def run_graph(graph, args, state) -> list:
    """The values of ``graph.outputs`` for ``args`` (one per ``graph.all_inputs``), in a JAX trace."""
    env = {id(t): v for t, v in zip(graph.all_inputs, args)}
    needed = needed_ops(graph)
    for op in graph.operations:
        if id(op) not in needed or op.type == "Placeholder":
            continue
        try:
            outs = run_op(op, [env[id(t)] for t in op.inputs], state)
        except Unlowerable as e:
            raise at_op(e, op) from None
        for t, v in zip(op.outputs, outs):
            env[id(t)] = v
    return [env[id(t)] for t in graph.outputs]


def run_op(op, inputs, state) -> list:
    """The output values of ``op`` (a list, cast to the dtypes of its outputs)."""
    rule = RULES.get(op.type)
    found = None
    pure = rule is None and not opdef.get(op.type).stateful
    if (pure or op.type in checks.RULES) and all(is_static(v) for v in inputs):  # known: numpy's value, if any
        found = _numpy_value(op, inputs)
    if found is not None:
        result = found
    elif rule is not None:
        result = rule(op, operands(op, inputs), state)
    else:
        result = _pure(op, operands(op, inputs))
    outs = list(result) if isinstance(result, (tuple, list)) else [result]
    return [as_dtype(v, t.dtype) for v, t in zip(outs, op.outputs)]


def as_dtype(value, dtype):
    """``value`` with ``dtype`` (a numpy value stays numpy)."""
    if is_static(value):
        array = np.asarray(value)
        return array if array.dtype == dtype else array.astype(dtype)
    return value if value.dtype == dtype else value.astype(dtype)


def operands(op, inputs) -> list:
    """``inputs`` cast to the dtypes numpy computes ``op`` in (``kernels.OPERANDS``), for the ops where
    JAX's promotion or its default float type would compute in others."""
    rule = OPERANDS.get(op.type)
    return inputs if rule is None else [as_dtype(v, d) for v, d in zip(inputs, rule(op))]


def _pure(op, inputs):
    if op.type in UNLOWERABLE:
        raise unlowerable(UNLOWERABLE[op.type])
    kernel = KERNELS.get(op.type)
    if kernel is None:
        raise unlowerable(f"the JAX backend has no kernel for {op.type}")
    args = [np.asarray(v).item() if t.weak and is_static(v) and np.ndim(v) == 0 else v
            for v, t in zip(inputs, op.inputs)]
    return kernel(*args, **op.attrs)


def _numpy_value(op, inputs):
    """The numpy kernel's result on known inputs, or None if it raises or warns (then the op is
    computed by XLA, or not lowered: numpy raises or warns when the graph runs)."""
    kernel = backend.get("numpy").kernels.get(op.type)
    if kernel is None or opdef.function_attr_names(op.type):
        return None
    try:
        with np.errstate(all="raise"), warnings.catch_warnings():
            warnings.simplefilter("error")
            return kernel(*inputs, **op.attrs)
    except Exception:  # noqa: BLE001 - numpy's error is raised when the graph runs on numpy
        return None


def _const(op, inputs, state):
    return np.asarray(op.attrs["value"], dtype=op.outputs[0].dtype)


# -- control flow -------------------------------------------------------------------------------


def state_keys(graph, _seen=None) -> dict:
    """The state keys the ops of ``graph`` and of the sub-graphs it runs use (an ordered set)."""
    seen = set() if _seen is None else _seen
    keys: dict = {}
    if id(graph) in seen:
        return keys
    seen.add(id(graph))
    for op in graph.operations:
        for key in (*effects.keys_of(op), *checks.keys_of(op)):
            keys[key] = None
        for attr in opdef.function_attr_names(op.type):
            keys.update(state_keys(graph.library[op.attrs[attr]], seen))
    return keys


def changes_state(graph, _seen=None) -> bool:
    """True if ``graph`` (or a sub-graph it runs) writes state or has a host effect."""
    seen = set() if _seen is None else _seen
    if id(graph) in seen:
        return False
    seen.add(id(graph))
    for op in graph.operations:
        if effects.writes_state(op):
            return True
        if any(changes_state(graph.library[op.attrs[a]], seen) for a in opdef.function_attr_names(op.type)):
            return True
    return False


def _has_checks(graph) -> bool:
    """True if ``graph`` (or a sub-graph it runs) holds an op lowered as a check (``checks.py``)."""
    return any(op.type in checks.RULES or any(_has_checks(graph.library[op.attrs[a]])
                                             for a in opdef.function_attr_names(op.type))
               for op in graph.operations)


def _traced(op, values):
    """The loop variables as JAX arrays of the op's output dtypes (a carry must be arrays)."""
    return tuple(jnp.asarray(v, dtype=t.dtype) for v, t in zip(values, op.outputs))


def _if(op, inputs, state):
    pred, args = inputs[0], inputs[1:]
    library = op.graph.library
    then_g, else_g = library[op.attrs["then_branch"]], library[op.attrs["else_branch"]]
    if is_static(pred):
        return run_graph(then_g if bool(pred) else else_g, args, state)
    keys = _carried(state, {**state_keys(then_g), **state_keys(else_g)})

    def branch(graph):
        def run():
            inner = dict(state)
            outs = run_graph(graph, args, inner)
            return _traced(op, outs), tuple(inner[k] for k in keys)

        return run

    try:
        outs, new = lax.cond(jnp.asarray(pred, dtype=bool), branch(then_g), branch(else_g))
    except TypeError:  # (JAX's message names no variable)
        shapes = [jax.eval_shape(branch(g))[0] for g in (then_g, else_g)]
        _refuse_changing_shapes(op, "in its two branches", *shapes)
        raise
    state.update(zip(keys, new))
    return outs


def _while(op, inputs, state):
    library = op.graph.library
    cond_g, body_g = library[op.attrs["cond"]], library[op.attrs["body"]]
    n = len(body_g.outputs)
    captures = list(inputs[n:])
    limit = op.attrs.get("maximum_iterations")
    keys = _carried(state, {**state_keys(cond_g), **state_keys(body_g)})
    loop = _Loop(op, cond_g, body_g, captures, keys, limit)
    count = None if limit is None else jnp.asarray(0, np.int64)  # a counter only for maximum_iterations
    init = (count, _traced(op, inputs[:n]), tuple(jnp.asarray(state[k]) for k in keys))
    if changes_state(cond_g) or checks.CHECK in state and _has_checks(cond_g):
        final = loop.run_stateful_cond(init, state)  # (a check failing in the condition is state too)
    else:
        try:
            final = lax.while_loop(loop.test, loop.step, init)
        except TypeError:  # (JAX's message names no variable)
            _refuse_changing_shapes(op, "before and after an iteration", init[1], jax.eval_shape(loop.step, init)[1])
            raise
    state.update(zip(keys, final[2]))
    return final[1]


def _refuse_changing_shapes(op, where, a, b):
    """``Unlowerable`` naming the first output of ``op`` (an ``If`` or ``While``) whose shape
    differs ``where`` (``a``, ``b``: the outputs' values or shapes, two ways)."""
    for i, (t, x, y) in enumerate(zip(op.outputs, a, b)):
        if np.shape(x) != np.shape(y):
            what = getattr(t, "label", None) or f"output {i} ({t.name})"
            raise unlowerable(f"{what} has shape {np.shape(x)} or {np.shape(y)} {where}; XLA needs one "
                              "static shape (a staged list whose length depends on a tensor condition, or a "
                              "value whose shape changes, runs on numpy)")


def _carried(state, keys) -> list:
    """The state keys a branch or loop carries: its own, and whether a check failed (a loop stops
    then, and nothing observable happens any more: ``checks.py``)."""
    if checks.CHECK in state:
        keys = {checks.CHECK: None, **keys}
    return list(keys)


class _Loop:
    """The cond/body functions of one ``lax.while_loop``: carry ``(count, loop_vars, state)`` (``count``
    None without ``maximum_iterations``)."""

    def __init__(self, op, cond_g, body_g, captures, keys, limit):
        self.op, self.cond_g, self.body_g = op, cond_g, body_g
        self.captures, self.keys, self.limit = captures, keys, limit

    def _pred(self, loop_vars, inner):
        (value,) = run_graph(self.cond_g, [*loop_vars, *self.captures], inner)
        if np.ndim(value) != 0:
            raise unlowerable("a loop condition that is not a scalar")
        return jnp.asarray(value).astype(bool)

    def test(self, carry):
        count, loop_vars, values = carry
        inner = dict(zip(self.keys, values))
        pred = self._pred(loop_vars, inner)
        ok = checks.ok_so_far(inner)
        if ok is not None:
            pred = jnp.logical_and(pred, ok)
        return pred if self.limit is None else jnp.logical_and(count < self.limit, pred)

    def step(self, carry):
        count, loop_vars, values = carry
        inner = dict(zip(self.keys, values))
        outs = run_graph(self.body_g, [*loop_vars, *self.captures], inner)
        count = None if count is None else count + 1
        return count, _traced(self.op, outs), tuple(jnp.asarray(inner[k]) for k in self.keys)

    def _guarded_pred(self, count, loop_vars, values):
        """The condition evaluated with its effects, unless the iteration limit is reached (the
        interpreter does not evaluate it then)."""
        def evaluate():
            inner = dict(zip(self.keys, values))
            pred = self._pred(loop_vars, inner)
            ok = checks.ok_so_far(inner)
            if ok is not None:
                pred = jnp.logical_and(pred, ok)
            return pred, tuple(jnp.asarray(inner[k]) for k in self.keys)

        if self.limit is None:
            return evaluate()
        return lax.cond(count < self.limit, evaluate, lambda: (jnp.asarray(False), tuple(values)))

    def run_stateful_cond(self, init, state):
        count, loop_vars, values = init
        pred, values = self._guarded_pred(count, loop_vars, values)

        def step(carry):
            count, loop_vars, values, _ = carry
            count, loop_vars, values = self.step((count, loop_vars, values))
            pred, values = self._guarded_pred(count, loop_vars, values)
            return count, loop_vars, values, pred

        final = lax.while_loop(lambda c: c[3], step, (count, loop_vars, values, pred))
        return final[:3]


RULES = {"Const": _const, "If": _if, "While": _while, **effects.RULES, **checks.RULES}
