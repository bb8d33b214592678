"""Memory of a plan: which values are freed early, which buffers are written into.

Two analyses of a graph's schedule, shared by the executor's plan builder
(``exec/plan.py``), the parallel runner (``exec/parallel.py``) and the
``jit_compile`` code generator (``backends/numpy/codegen.py``):

* **last uses** (``last_uses``) -- the slot of a value that is not a small
  fixed-size array is cleared right after its last reader, so large
  intermediates are freed early (values under ``FREE_MIN_ELEMENTS`` elements,
  such as the scalars of a loop body, skip the bookkeeping);
* **buffer donation** (``donations``) -- an op whose kernel can write into
  a given buffer (the backend's ``out_kernels``: numpy's ufuncs) and whose
  operand is a large temporary that nothing reads afterwards writes its
  result into that operand's buffer (``np.exp(t, out=t)``), or into a dead
  temporary's buffer of its dtype and shape: a chain like ``exp(x)*2 +
  sqrt(abs(x)) - x*x`` allocates 2 arrays instead of 7.  A backend that
  declares no such kernels gets no donations.
"""

from __future__ import annotations

import math

from autograph.runtime.core import backend, shapes

# Values smaller than this many elements are not worth freeing early (the
# bookkeeping would cost more than it saves): scalar loop bodies skip it.
FREE_MIN_ELEMENTS = 1024
# Temporaries at least this large are worth writing into instead of allocating.
INPLACE_MIN_ELEMENTS = 1 << 15


def donations(graph, needed, record=None) -> dict:
    """id(op) -> the dead temporary whose buffer the op writes its result into.

    ``needed``: the ids of the ops a run executes (``plan.needed_ops``);
    ``record``: the backend whose kernels run them (default: the default
    backend).  Only ops of its ``out_kernels`` with a large static-shaped
    output write into a buffer.  A buffer is a temporary of this graph made
    by such an op (a fresh array: never a view, an input or a constant), not
    an output, read by nothing but such ops of this graph; it becomes free at its last reader in graph
    order.  That reader itself takes it when it has the output's dtype and
    shape (``np.exp(t, out=t)``: an operand overwritten in place); else any
    later op with that dtype and shape may take it (``np.multiply(x, x,
    out=t)``) instead of allocating.  Each buffer is handed out once; the
    value written into it can be handed on when it dies in turn.  (A
    parallel run must therefore finish a buffer's readers before the op
    that takes it: ``parallel.Dataflow`` adds those edges.)
    """
    writes_into = (record or backend.get()).out_kernels
    ops = [op for op in graph.operations if id(op) in needed]
    for op in ops:  # (a loop, not any() of a generator: every plan asks)
        if op.outputs and op.type in writes_into and _large(op.outputs[0]):
            break
    else:
        return {}  # no op writes into a buffer (a graph of scalars): nothing to find
    users: dict[int, list] = {}
    for op in ops:
        for t in op.inputs:
            users.setdefault(id(t), []).append(op)
    outputs = {id(t) for t in graph.outputs}

    def reusable(t):
        return (
            t.op.type in writes_into and t.op.graph is graph and id(t) not in outputs and _large(t)
            and all(u.type in writes_into for u in users[id(t)])
        )

    free: dict[tuple, list] = {}  # (dtype, shape) -> dead buffers, the latest last
    found = {}
    for op in ops:
        dying = {}  # id -> tensor (tensors compare by building ops: never ``in`` a list)
        for t in op.inputs:
            if users[id(t)][-1] is op and reusable(t):
                dying[id(t)] = t
        if op.type in writes_into and _large(op.outputs[0]):
            key = (op.outputs[0].dtype, op.outputs[0].shape)
            donor = next((t for t in dying.values() if (t.dtype, t.shape) == key), None)
            if donor is not None:
                del dying[id(donor)]
            elif free.get(key):
                donor = free[key].pop()
            if donor is not None:
                found[id(op)] = donor
        for t in dying.values():
            free.setdefault((t.dtype, t.shape), []).append(t)
    return found


def last_uses(ops, slots, donors, kept) -> dict[int, list[int]]:
    """step index -> slots whose last user that step is (``kept`` slots and small values excluded).

    ``ops`` are the scheduled ops in order, ``slots`` maps id(tensor) to its
    slot, ``donors[i]`` is the slot step ``i`` writes into (or None): a
    donated buffer's last user is the step that writes into it.
    """
    last_use: dict[int, int] = {}
    for index, op in enumerate(ops):
        for t in op.inputs:
            if _worth_freeing(t):
                last_use[slots[id(t)]] = index
        if donors[index] is not None:
            last_use[donors[index]] = index
    frees_at: dict[int, list[int]] = {}
    for s, index in last_use.items():
        if s not in kept:
            frees_at.setdefault(index, []).append(s)
    return frees_at


def _large(tensor) -> bool:
    return shapes.is_fully_defined(tensor.shape) and math.prod(tensor.shape) >= INPLACE_MIN_ELEMENTS


def _worth_freeing(tensor) -> bool:
    shape = tensor.shape
    if shape is None or None in shape:
        return True
    return math.prod(shape) >= FREE_MIN_ELEMENTS
