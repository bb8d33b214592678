"""``rt.cond`` and ``rt.while_loop``: functional control flow for code written against ``rt``.

Eagerly (outside a trace), or with a Python predicate, they run plain
Python control flow on numpy values.  While tracing they build ``If`` /
``While`` ops (``ops/functional_control_flow.py``) with ``tracing.branches``' and ``tracing.loops``'
``build_cond`` / ``build_while``, the same rules the operators of converted
code use.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import nest
from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import construct_at, user_location_text
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.errors import TracingError
from autograph.runtime.tracing.branches import build_cond
from autograph.runtime.tracing.loops import build_while
from autograph.runtime.core.undefined import UndefinedReturnValue

__all__ = ["cond", "while_loop", "UndefinedReturnValue"]

def _eager_numpy(structure):
    """``structure`` with its Python numbers as numpy values: eager ops return numpy values."""
    flat = nest.flatten(structure)
    if not any(type(v) in (bool, int, float) for v in flat):
        return structure
    return nest.pack_as(structure, [np.asarray(v)[()] if type(v) in (bool, int, float) else v for v in flat])


def cond(pred, true_fn, false_fn, name=None):
    """``true_fn()`` if ``pred`` else ``false_fn()``; an ``If`` op when ``pred`` is a tensor.

    The branches return the same nested structure of tensors and Python
    values.  Eagerly, or with a Python ``pred``, only the taken branch runs.
    """
    del name
    if not isinstance(pred, Tensor):
        result = true_fn() if pred else false_fn()
        return _eager_numpy(result) if current_graph() is None else result
    if current_graph() is None:
        raise TracingError(
            f"rt.cond at {user_location_text()} got the symbolic tensor {pred.name} outside of "
            "a trace; return tensors from the traced function instead of keeping them."
        )
    where = construct_at("rt.cond")
    (result,) = build_cond(pred, lambda: [true_fn()], lambda: [false_fn()], labels=["result"], where=where)
    return result

def while_loop(cond, body, loop_vars, shape_invariants=None, maximum_iterations=None, name=None):
    """Repeats ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)``; a ``While`` op in a trace.

    ``loop_vars`` is a tuple or list (nested structures of tensors and Python
    values inside); ``body`` returns the same structure.  ``shape_invariants``
    matches ``loop_vars`` with shapes (``(None, 3)``) or ``rt.TensorSpec``\\ s,
    ``None`` meaning "the initial shape, relaxed automatically".
    ``maximum_iterations`` caps the number of iterations.  Returns the final
    loop variables, in the structure of ``loop_vars``.  Eagerly (outside a
    trace) it runs as a Python loop.
    """
    del name
    spread = type(loop_vars) in (tuple, list)
    if spread and not loop_vars:
        raise ValueError("rt.while_loop needs at least one loop variable; loop_vars is empty")

    def call(fn, values):
        return fn(*values) if spread else fn(values)

    def normalize(result):
        if spread and len(loop_vars) == 1 and (type(result) not in (tuple, list) or len(result) != 1):
            result = [result]
        if spread and type(result) is not type(loop_vars) and type(result) in (tuple, list):
            result = type(loop_vars)(result)
        return result

    if current_graph() is None:
        values, count = loop_vars, 0
        while maximum_iterations is None or count < maximum_iterations:
            if not call(cond, values):
                break
            values = normalize(call(body, values))
            count += 1
        return _eager_numpy(values)

    where = construct_at("rt.while_loop")
    labels = ["loop_vars" + p for p in nest.leaf_paths(loop_vars)]
    invariants = _flat_invariants(loop_vars, shape_invariants, where)

    def cond_fn(values):
        return call(cond, nest.pack_as(loop_vars, values))

    def body_fn(values):
        result = normalize(call(body, nest.pack_as(loop_vars, values)))
        diff = nest.mismatch(loop_vars, result)
        if diff is not None:
            raise TracingError(
                f"the body of {where} returns a different structure than loop_vars: {diff} (loop_vars vs "
                "body result). Return the same structure as loop_vars."
            )
        return nest.flatten(result)

    final = build_while(cond_fn, body_fn, nest.flatten(loop_vars), labels=labels, where=where,
                        invariants=invariants, maximum_iterations=maximum_iterations)
    return nest.pack_as(loop_vars, final)


def _flat_invariants(loop_vars, shape_invariants, where):
    """``shape_invariants`` flattened to one per flat loop value (None if not given)."""
    if shape_invariants is None:
        return None
    try:
        return nest.flatten_up_to(loop_vars, shape_invariants)
    except ValueError as e:
        raise TracingError(f"shape_invariants of {where} does not match loop_vars: {e}") from None
