"""Map+batch vectorization: maps and filters before a ``batch`` run once per chunk of rows.

``rule`` rewrites ``batch(n) <- (map | filter | map_filter)* <- source`` into

    rebatch(n) <- vectorized(stages) <- chunks(rows=k) <- source

when every function of the chain is *batch-polymorphic*: traced again
against its arguments with a leading batch dimension, it gives the very
same graph (op by op: types, attributes, wiring -- so no Python code of it
looked at a shape), made only of elementwise ops (the ufuncs of
``ops/math.py``, ``Cast``, ``Select``, constants), none stateful, whose
broadcasting cannot reach into the batch dimension (the batched operands of
an op have one rank; every other operand has a smaller one), and every
output carries the batch dimension.  Then running the batched graph on k
stacked rows computes the k rows the per-element graph would; a filter's
verdicts become a mask.  ``chunks`` slices a ``from_tensor_slices`` source
directly (no per-row work at all) and stacks the rows of any other source;
``rebatch`` cuts the filtered chunks into exact batches of ``n``, so the
elements are the unvectorized pipeline's, batch for batch.
"""

from __future__ import annotations

import warnings

import numpy as np

from autograph.runtime.core import nest, opdef
from autograph.runtime.data import fusion, structure
from autograph.runtime.ops import math

ELEMENTWISE = frozenset(math.BINARY) | frozenset(math.UNARY) | {"Cast", "Select", "Identity"}
STRUCTURAL = frozenset({"Placeholder", "Const"})
MIN_CHUNK_ROWS = 16384
_CHAIN = ("map", "filter", "map_filter")


def rule(batch, options):
    """The vectorized replacement of the ``batch`` node, or None."""
    chain, node = [], batch.inputs[0]
    while node.kind in _CHAIN:
        chain.append(node)
        node = node.inputs[0]
    if not chain:
        return None
    stages = []
    for step in reversed(chain):
        # fused filters (an If that runs the second predicate only where the first holds) are
        # vectorized as their parts: masks applied one after the other, the same short circuit
        parts = step.attrs.get("parts") or (step.attrs["predicate"] if step.kind == "filter" else step.attrs["fn"],)
        for function in parts:
            batched = vectorized(function)
            if batched is None:
                return None
            stages.append((step.kind, batched))
    make = type(batch)
    rows = max(batch.attrs["batch_size"], MIN_CHUNK_ROWS)
    chunks = make("chunks", (node,), {"rows": rows}, structure.batched(node.element_spec, None))
    vector = make("vectorized", (chunks,), {"stages": tuple(stages)},
                  structure.batched(chain[0].element_spec, None))
    return make("rebatch", (vector,), dict(batch.attrs), batch.element_spec)


def vectorized(function):
    """``function`` traced on batches if it is batch-polymorphic, else None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # said already when the function was first traced
            batched = fusion.vectorized(function, structure.batched(function.arg_specs, None))
    except Exception:  # noqa: BLE001 - a function that does not trace on batches stays per element
        return None
    if not _same_specs(function.output_spec, batched.output_spec):
        return None
    if not polymorphic(function.traced_graph, batched.traced_graph):
        return None
    return batched


def _same_specs(unbatched, batched) -> bool:
    if nest.mismatch(unbatched, batched) is not None:
        return False
    a, b = structure.flat(unbatched), structure.flat(batched)
    return all(x.shape is not None and y.shape == (None, *x.shape) and x.dtype == y.dtype for x, y in zip(a, b))


def polymorphic(graph, batched) -> bool:
    """True if ``batched`` is ``graph`` traced on batches, op for op, and its ops are row-wise."""
    if graph.captures or batched.captures or len(graph.operations) != len(batched.operations):
        return False
    position = {}
    for index, (op, other) in enumerate(zip(graph.operations, batched.operations)):
        if not _same_op(op, other, position):
            return False
        for k, (t, u) in enumerate(zip(op.outputs, other.outputs)):
            position[id(t)] = position[id(u)] = (index, k)
    carries = {id(t) for t in batched.inputs}
    for op in batched.operations:
        if op.type == "Placeholder":
            continue
        if any(id(t) in carries for t in op.inputs):
            if not _row_wise(op, carries):
                return False
            carries.update(id(t) for t in op.outputs)
    return all(id(t) in carries for t in batched.outputs)


def _same_op(op, other, position) -> bool:
    if op.type != other.type or (op.type not in ELEMENTWISE and op.type not in STRUCTURAL):
        return False
    if opdef.get(op.type).stateful or len(op.inputs) != len(other.inputs):
        return False
    if [position.get(id(t)) for t in op.inputs] != [position.get(id(t)) for t in other.inputs]:
        return False
    if op.type == "Placeholder":  # an argument: the batched one has the batch dimension in front
        return op.attrs["dtype"] == other.attrs["dtype"]
    return _same_attrs(op.attrs, other.attrs)


def _same_attrs(a, b) -> bool:
    if set(a) != set(b):
        return False
    for key in a:
        x, y = a[key], b[key]
        arrays = isinstance(x, (np.ndarray, np.generic)), isinstance(y, (np.ndarray, np.generic))
        if any(arrays):
            if not (all(arrays) and x.shape == y.shape and x.dtype == y.dtype and np.array_equal(x, y)):
                return False
        elif x != y:
            return False
    return True


def _row_wise(op, carries) -> bool:
    """The op's broadcasting cannot mix rows: batched operands share one rank, the others are smaller."""
    ranks = [None if t.shape is None else len(t.shape) for t in op.inputs]
    if None in ranks:
        return False
    batched = {r for t, r in zip(op.inputs, ranks) if id(t) in carries}
    if len(batched) != 1:
        return False
    rank = batched.pop()
    return all(r < rank for t, r in zip(op.inputs, ranks) if id(t) not in carries)
