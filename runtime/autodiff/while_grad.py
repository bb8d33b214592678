"""The gradient of ``While`` (TensorFlow's while_v2): a ``While`` that runs the forward loop's
iterations backwards.

The forward loop is extended once per differentiation (its op, ``cond`` and
``body`` get more loop variables; nothing else changes what it computes):

* a counter, 0 before the loop, +1 per iteration: the number of iterations
  (a loop variable that counts already, ``i = 0 ... i += 1``, is that counter);
* one *accumulator* per forward value the gradient body reads: the body
  pushes the value of each iteration (``StackPush``, ``ops/nn.py``), so
  after ``n`` iterations it holds ``n`` entries (in a buffer that grows by
  doubling).  Only the values the gradient rules
  read are accumulated; a loop invariant (a value the loop captures, or one
  computed from those alone) is read or recomputed, never stacked, and so is
  a row of one at an index that varies (``x = xs[i]``: only ``i`` is stacked,
  and not even that when it is computed from the iteration, which the
  gradient body has: ``i`` itself, a checked index of it), and a comparison
  of values the gradient body reads anyway (a branch's predicate ``y > 1``).
  A loop variable's next value (the body's output, ``h = tanh(h @ w)``) is
  its value one iteration later: the gradient loop carries it from the
  forward loop's result, setting it to the value it reads at each
  iteration, instead of a second accumulator one entry apart from the first.

The gradient ``While`` starts from the count and the cotangents of the
loop's outputs; its body, a ``GradGraph`` over the forward body, takes
``i = count - 1``, reads entry ``i`` of each accumulator where the forward
body's value is read (``StackRead``), runs the walker over the forward body
from the cotangents of the body's outputs to those of its inputs, and adds
up the cotangents of the captured values over the iterations; it stops at
``count == 0``.  Loops from ``for ... in range(tensor)``, over tensor rows,
with ``break``/``continue``/``return`` lowered to flags, with branches in
the body and ``maximum_iterations`` are all such a ``While``.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime import ops
from autograph.runtime.autodiff import backprop, registry
from autograph.runtime.autodiff.grad_graph import GradGraph
from autograph.runtime.core import dtypes, opdef
from autograph.runtime.core.graph import Graph, current_graph
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.ops import apply, array, indexing, nn
from autograph.runtime.tracing.values import emit, unify_captures


def _constant_before(op, value):
    """A ``Const`` of ``value`` in ``op``'s graph, placed just before ``op`` (it is an input of it)."""
    graph = op.graph
    with graph.as_default():
        t = apply.constant(value)
    graph.operations.remove(t.op)
    graph.operations.insert(graph.operations.index(op), t.op)
    return t


class _Accumulators:
    """Extends one forward ``While`` with a counter and the accumulators its gradient body reads."""

    def __init__(self, op, cond, body):
        self.op, self.cond, self.body = op, cond, body
        self.index = None  # the forward iteration the gradient body is at (set by while_gradient)
        self.n_vars = len(body.outputs)  # the loop's own variables (the counter and accumulators come after)
        self.carried: list = []  # (loop variable, its placeholder in the gradient body): ``_carried``
        found = _counter(op, body)
        if found is None:
            self.count, self.iteration = self._add_loop_var(np.int32(0), (), lambda p: ops.add(p, np.int32(1)))
        else:  # the loop counts its iterations already (``i = 0 ... i += 1``)
            self.count, self.iteration = op.outputs[found], body.inputs[found]
        self._invariants: dict = {}  # id of a body value -> is it loop-invariant

    def _add_loop_var(self, init, shape, step):
        """Adds loop variable ``step(previous)`` starting at ``init``; returns the op's new output and the
        body's placeholder for it."""
        op, position = self.op, len(self.body.inputs)
        init = _constant_before(op, init)
        op.inputs.insert(position, init)
        previous = self.body.add_placeholder(init.dtype, shape, name="loop_var")
        with self.body.as_default():
            self.body.outputs.append(step(previous))
        self.cond.add_placeholder(init.dtype, shape, name="loop_var")
        out = Tensor(op, position, init.dtype, shape)
        op.outputs.append(out)
        return out, previous

    def expose(self, t):
        """Forward body value ``t`` as the gradient body reads it (see the module docstring)."""
        for k, (_, inner) in enumerate(self.body.captures):
            if inner is t:  # a loop invariant
                return self.op.inputs[len(self.body.inputs) + k]
        if t is self.iteration:
            return self.index
        if t.op.type == "CheckIndex":  # its index, checked already by the forward loop
            return self._grad_body().capture(t.op.inputs[1])
        if self._recomputable(t):
            found = self._recompute(t)
            if found.dtype == t.dtype and found.shape == t.shape:
                return found
        for j in range(self.n_vars):
            if self.body.outputs[j] is t and t.op.type != "Placeholder":
                return self._carried(j)
        return self._stacked(t)

    def _stacked(self, t):
        """``t`` pushed at every iteration, read back at the gradient's.  A value whose shape is not
        fixed (a dimension unknown: a list grown in the loop, an inner loop's accumulator, a branch's
        value whose other branch gives an empty placeholder for it) is pushed ragged, zero-padded to
        the largest entry, and its shape pushed beside it: each entry is read back cropped to it."""
        dims = () if t.shape is None else tuple(0 if d is None else d for d in t.shape)
        shape = None if t.shape is None else (None, *t.shape)
        ragged = t.shape is not None and None in t.shape
        label = f"the accumulator of {t.name} in the gradient of the loop at {self.op.location or '<unknown>'}"
        push = lambda previous: nn.stack_push(previous, self.iteration, t, label, ragged=ragged)  # noqa: E731
        stacked, _ = self._add_loop_var(np.zeros((0, *dims), t.dtype), shape, push)
        if ragged:
            push_shape = lambda previous: nn.stack_push(previous, self.iteration, array.shape(t), label)  # noqa: E731
            shapes, _ = self._add_loop_var(np.zeros((0, len(dims)), np.int32), (None, len(dims)), push_shape)
        with self._grad_body().as_default():
            entry = nn.stack_read(stacked, self.index)
            if not ragged:
                return entry
            pushed = nn.stack_read(shapes, self.index)
            crop = tuple(slice(None) if d is not None else slice(None, indexing.getitem(pushed, k))
                         for k, d in enumerate(t.shape))
            return indexing.getitem(entry, crop)

    def _carried(self, j):
        """The value of loop variable ``j`` after this iteration: its value before the next one, which the
        gradient loop read in its previous iteration -- carried by it from the forward loop's result,
        never stacked twice."""
        grad_body = self._grad_body()
        t = self.body.inputs[j]  # (its shape: the loop variable's, relaxed over the iterations)
        placeholder = grad_body.add_placeholder(t.dtype, t.shape, name="carried")
        self.carried.append((j, placeholder))
        return placeholder

    def _grad_body(self):
        graph = current_graph()
        while not (isinstance(graph, GradGraph) and graph.forward is self.body):
            graph = graph.outer
        return graph

    def _invariant(self, t) -> bool:
        """True if body value ``t`` is the same at every iteration (computed from captures and constants)."""
        found = self._invariants.get(id(t))
        if found is None:
            op = t.op
            if op.type == "Placeholder":
                found = any(inner is t for _, inner in self.body.captures)
            else:
                found = _pure(op) and all(self._invariant(x) for x in op.inputs)
            self._invariants[id(t)] = found
        return found

    def _recomputable(self, t) -> bool:
        """Recomputed in the gradient body rather than stacked: a loop-invariant value, a view of one
        (``_VIEWS``) at indices that vary (only those are stacked, integer scalars, unless they are
        computed from the iteration: ``_of_iteration``), index arithmetic on the iteration, a bool (a
        comparison) of values the gradient body reads already."""
        op = t.op
        if op.type == "Placeholder" or not _pure(op):
            return False
        if self._invariant(t):
            return True
        if op.type in _VIEWS:
            return self._invariant(op.inputs[0]) and all(_int_scalar(x) for x in op.inputs[1:])
        if t.dtype.kind == "b":  # a comparison of values the gradient body reads anyway (a branch's predicate)
            grad_body = self._grad_body()
            return all(self._invariant(x) or self._of_iteration(x) or grad_body.has_exposed(x) for x in op.inputs)
        return _int_scalar(t) and all(self._invariant(x) or self._of_iteration(x) for x in op.inputs)

    def _of_iteration(self, t) -> bool:
        """True for an integer scalar the gradient body has without stacking: the iteration, a checked
        index of it, index arithmetic on it and on invariants."""
        if not _int_scalar(t):
            return False
        if t is self.iteration:
            return True
        if t.op.type == "CheckIndex":
            return self._of_iteration(t.op.inputs[1])
        return t.op.type != "Placeholder" and _pure(t.op) and all(
            self._invariant(x) or self._of_iteration(x) for x in t.op.inputs)

    def _recompute(self, t):
        grad_body = self._grad_body()
        with grad_body.as_default():
            inputs = [grad_body.capture(x) for x in t.op.inputs]
            outputs = apply.apply_op(t.op.type, inputs, dict(t.op.attrs))
        return outputs[t.value_index] if isinstance(outputs, tuple) else outputs


def _counter(op, body):
    """The index of a loop variable of ``op`` that counts its iterations (an int32 starting from a
    constant 0, plus a constant 1 in every iteration), or None."""
    for j, (init, out) in enumerate(zip(op.inputs, body.outputs)):
        if (init.dtype == dtypes.int32 and init.shape == () and _is_constant(init, 0)
                and out.op.type == "Add" and out.op.graph is body):
            a, b = out.op.inputs
            if (a is body.inputs[j] and _is_constant(b, 1)) or (b is body.inputs[j] and _is_constant(a, 1)):
                return j
    return None


def _is_constant(t, value) -> bool:
    return t.op.type == "Const" and t.op.attrs["value"].shape == () and t.op.attrs["value"] == value


# op types whose result, a view of a loop invariant at an index that varies, is recomputed from the
# invariant and the (stacked) index rather than stacked itself: as cheap as reading an entry back
_VIEWS = frozenset({"StridedSlice", "GatherV2"})


def _int_scalar(t) -> bool:
    return t.dtype.kind in "iu" and t.shape == ()


def _pure(op) -> bool:
    """Stateless and without sub-graphs: recomputing it gives the same value."""
    return not opdef.get(op.type).stateful and not opdef.function_attr_names(op.type)


def _cond_graph(outer, specs):
    graph = Graph("while_cond_grad", outer=outer)
    with graph.as_default():
        placeholders = [graph.add_placeholder(dtype, shape, name="loop_var") for dtype, shape in specs]
        graph.outputs = [ops.greater(placeholders[0], np.int32(0))]
    return graph


def while_gradient(fwd, grads):
    op = fwd.op
    library = op.graph.library
    cond, body = library[op.attrs["cond"]], library[op.attrs["body"]]
    n_vars, invariants = len(body.inputs), [inner for _, inner in body.captures]
    # every float loop variable carries a cotangent through the iterations, even one whose final value
    # nobody differentiates (it may feed one that is: a staged list appended to from it)
    loop_vars = [j for j in range(n_vars) if backprop.differentiable(body.inputs[j])]
    captured_wanted = [k for k in range(len(invariants)) if n_vars + k in fwd.wanted]
    captured_inputs = list(op.inputs[n_vars:])
    accumulators = _Accumulators(op, cond, body)
    outer = current_graph()
    inits = [backprop.value(accumulators.count)] + [backprop.zeros_for(op.outputs[j]) if grads[j] is None else grads[j]
                                    for j in loop_vars] + [
        backprop.zeros_for(captured_inputs[k]) for k in captured_wanted]
    specs = [(dtypes.int32, ())] + [(body.inputs[j].dtype, body.inputs[j].shape) for j in loop_vars] + [
        (invariants[k].dtype, invariants[k].shape) for k in captured_wanted]
    grad_body = GradGraph("while_body_grad", outer, body, accumulators.expose)
    with grad_body.as_default():
        count, *cotangents = [grad_body.add_placeholder(d, s, name="loop_var") for d, s in specs]
        accumulators.index = ops.subtract(count, np.int32(1))
        xs = [body.inputs[j] for j in loop_vars] + [invariants[k] for k in captured_wanted]
        results = backprop.gradients([body.outputs[j] for j in loop_vars], xs, cotangents[:len(loop_vars)])
        outputs = [backprop.zeros_for(x) if r is None else backprop.value(r)
                   for r, x in zip(results[:len(loop_vars)], xs)]
        for r, total in zip(results[len(loop_vars):], cotangents[len(loop_vars):]):
            outputs.append(total if r is None else ops.add(total, r))
        outputs += [backprop.value(body.inputs[j]) for j, _ in accumulators.carried]
        grad_body.outputs = [accumulators.index, *outputs]
    inits += [backprop.value(op.outputs[j]) for j, _ in accumulators.carried]
    specs += [(p.dtype, p.shape) for _, p in accumulators.carried]
    cond_g = _cond_graph(outer, specs)
    captured = unify_captures([cond_g, grad_body])
    attrs = {"cond": outer.add_function(cond_g, "while_cond_grad"),
             "body": outer.add_function(grad_body, "while_body_grad")}
    final = emit("While", [*inits, *captured], attrs, [cond_g, grad_body])[1:]
    found = dict(zip(loop_vars + [n_vars + k for k in captured_wanted], final))
    return [found.get(i) for i in range(n_vars + len(invariants))]


registry.register({"While": while_gradient})
