"""Values of traced control flow: what kind of leaf a value is, and the sub-graph bookkeeping.

Shared by ``branches`` (``If``) and ``loops`` (``While``); the rules they
follow are stated once, in ``autograph.runtime.tracing``'s docstring.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime import ops
from autograph.runtime.core import dtypes, shapes
from autograph.runtime.core.graph import Graph, current_graph
from autograph.runtime.core.undefined import UndefinedReturnValue, is_undefined
from autograph.runtime.core.tensor import Tensor, is_python_number
from autograph.runtime.errors import TracingError
from autograph.runtime.ops import apply, common
from autograph.runtime.ops.list_operators import StagedList


def is_return_placeholder(value) -> bool:
    """True for the return lowering's ``UndefinedReturnValue`` (filled with zeros where still unset)."""
    return type(value) is UndefinedReturnValue


def zeros_like_value(value, dtype, weak=False):
    """A Const of zeros shaped like ``value`` (unknown dimensions become 0) in the current graph."""
    shape = shapes.as_shape(getattr(value, "shape", ())) if not is_python_number(value) else ()
    shape = () if shape is None else tuple(0 if d is None else d for d in shape)
    return apply.constant(np.zeros(shape, dtype), dtype, weak=weak)


def is_numeric_array(value) -> bool:
    return isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "biuf"


def is_strong(value) -> bool:
    """A strongly typed tensor or numpy value."""
    return (isinstance(value, Tensor) and not value.weak) or is_numeric_array(value)


def same_python(a, b) -> bool:
    """True if two non-tensor values are the same for control flow purposes."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (bool, int, float, str, bytes, type(None))):
        return bool(a == b)
    return False


def describe_value(value) -> str:
    if isinstance(value, Tensor):
        weak = "weakly typed " if value.weak else ""
        return f"a {weak}{value.dtype.name}{shapes.format_shape(value.shape)} tensor"
    if is_undefined(value):
        return "undefined"
    if is_numeric_array(value):
        return f"the numpy {value.dtype.name} value {value!r}"
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"the Python {type(value).__name__} {text}"


def weak_dtype(*values) -> np.dtype:
    """The dtype of weakly typed values (or dtypes) combined: numpy's for Python numbers, a weak
    tensor's own -- int64 where an integer dtype cannot hold one of the Python ints (a weak int32
    counter that becomes ``2**40`` stands for a Python int: ``common.widened``)."""
    joined = dtypes.result_type(*[v.dtype if isinstance(v, Tensor) else v for v in values])
    return common.widened(joined, [v for v in values if type(v) is int])


def refuse_int_beyond_int64(label, value, told):
    """A ``TracingError`` if ``value`` is a Python int no dtype of a graph holds (beyond int64) that is to
    be ``label``'s value in a tensor ``if`` or loop (``told``: where, for the message)."""
    if not common.int_fits(value, np.dtype(np.int64)):
        raise TracingError(
            f"'{label}' is the Python int {value!r:.40} {told}; Python computes with it exactly, but no "
            f"dtype of a graph holds it (int64 at most). Keep {label} within int64's bounds, or compute it "
            "outside the function."
        )


def refuse_int_beyond(label, dtype, value, told):
    """A ``TracingError`` if ``value`` is a Python int that ``dtype``, the one NEP 50 gives ``label``
    beside a strongly typed value, cannot hold: numpy's ``OverflowError`` (``np.int32(1) + 2**40``);
    Python keeps the int on its path, which one graph dtype cannot follow."""
    if not common.int_fits(value, dtype):
        raise TracingError(
            f"'{label}' is the Python int {value!r:.40} {told}, where it is {dtype.name} (NEP 50: the dtype "
            f"of the tensors it meets), and {dtype.name} cannot hold it. Give '{label}' a dtype that holds "
            f"it on every path: np.int64(...) around the int and rt.cast(..., 'int64') around the "
            f"{dtype.name} value."
        )


def refuse_float_beyond(label, dtype, value, told):
    """A ``TracingError`` if ``value`` is a finite Python float that ``dtype``, a float dtype NEP 50
    gives ``label`` beside a strongly typed value, makes infinite (``1e10`` as a float16): Python keeps
    the number on its path."""
    if type(value) is float and np.dtype(dtype).kind == "f" and np.isfinite(value) and abs(value) > float(np.finfo(dtype).max):
        raise TracingError(
            f"'{label}' is the Python float {value!r} {told}, where it is {np.dtype(dtype).name} (NEP 50: the "
            f"dtype of the tensors it meets), which cannot hold it (it would be inf). Cast that value to a "
            f"wider dtype first (rt.cast(..., 'float32'))."
        )


def refuse_int_beside_wrapping(label, dtype, value, told):
    """A ``TracingError`` if the weakly typed ``value`` is a Python int (not a list of them) that is to
    join ``label``'s strong ``dtype`` of an integer kind that wraps (8/16-bit, unsigned): Python keeps
    the int on its path and the numpy value on the other, and only the numpy value's arithmetic wraps
    (``k = m`` or ``k = int(m) + 1`` with a uint8 ``m == 255``: 256 is no uint8), so one graph dtype
    cannot follow both.  ``told``: where the two meet, for the message."""
    if dtype.kind not in "iu" or not dtypes.wraps(dtype) or isinstance(value, StagedList):
        return
    if type(value) is not int and not (isinstance(value, Tensor) and value.dtype.kind in "iu"):
        return
    raise TracingError(
        f"'{label}' is {dtype.name} {told} but a Python int on another path; Python keeps each type, and "
        f"only {dtype.name} arithmetic wraps (a Python int never does), so one graph cannot follow both. "
        f"Give '{label}' one type on every path: np.{dtype.name}(...) around the int, or int(...) around "
        f"the {dtype.name} value."
    )


def to_tensor_in(graph, value, dtype, weak=False):
    """``value`` as a tensor of ``graph`` with ``dtype`` (capturing, casting or making a Const).

    ``weak``: a Python number becomes a weakly typed Const, a cast keeps weak typing.
    """
    with graph.as_default():
        if isinstance(value, Tensor):
            value = apply.capture(graph, value)
            if value.dtype != dtype:
                value = ops.cast(value, dtype, weak=weak and value.weak)
            return value
        return apply.constant(value, dtype, weak=weak and is_python_number(value))


def as_predicate(value, where: str):
    """``value`` as a scalar bool tensor of the current graph, with Python truth semantics."""
    if is_undefined(value):
        raise TracingError(
            f"the condition of {where} reads the variable '{value.symbol_name}', which is not defined "
            f"there. Assign it before {where.split(' at ')[0]}."
        )
    if isinstance(value, Tensor):
        value = apply.capture(current_graph(), value)
        if isinstance(value, StagedList):  # a staged list is true when not empty, as a Python list
            return ops.greater(ops.shape(value)[0], 0)
        if value.shape is not None and any(d != 1 for d in value.shape):
            raise TracingError(
                f"the condition of {where} is a tensor of shape {shapes.format_shape(value.shape)} "
                f"({value.name}); it must hold a single value. Reduce it with rt.reduce_any(...) or "
                "rt.reduce_all(...)."
            )
        if value.dtype != dtypes.bool_:
            value = ops.not_equal(value, 0)
        return value
    if is_numeric_array(value) and value.size != 1:
        raise TracingError(
            f"the condition of {where} is a numpy array of shape {value.shape}; it must hold a single "
            "value. Reduce it with .any() or .all()."
        )
    return apply.constant(bool(value), dtypes.bool_)


# --------------------------------------------------------------------------
# Sub-graph bookkeeping
# --------------------------------------------------------------------------


def unify_captures(graphs) -> list:
    """Makes every graph capture the same outer tensors in the same order; returns them."""
    order, seen = [], set()
    for g in graphs:
        for outer_tensor, _ in g.captures:
            if id(outer_tensor) not in seen:
                seen.add(id(outer_tensor))
                order.append(outer_tensor)
    position = {id(t): i for i, t in enumerate(order)}
    for g in graphs:
        have = {id(outer_tensor) for outer_tensor, _ in g.captures}
        for t in order:
            if id(t) not in have:
                apply.capture(g, t)
        g.captures.sort(key=lambda pair: position[id(pair[0])])
    return order


def drop_new_functions(outer, before: set) -> None:
    """Forgets library functions added by a trace that is thrown away."""
    for name in [n for n in outer.library if n not in before]:
        del outer.library[name]


def mark(graph) -> tuple:
    """Where ``graph`` stands now: ``discard_since`` forgets what is added after it."""
    return graph, len(graph.operations), len(graph.library), graph.last_stateful


def discard_since(place, keep: dict):
    """Forgets the ops added to the graph since ``place`` (a ``mark``) and the library functions
    added with them -- a while loop's first test, evaluated to dispatch, which the loop's condition
    evaluates again -- unless a value of ``keep`` (name -> value, looked into through lists, tuples
    and dicts) holds an output of one: then they stay, and that name is the answer (else None)."""
    graph, ops_before, functions_before, last_stateful = place
    added = graph.operations[ops_before:]
    captures = [op for op in added if op.type == "Placeholder"]  # (they stay: the graph's captures list them)
    if len(captures) == len(added):
        return None
    made = {id(t) for op in added if op.type != "Placeholder" for t in op.outputs}
    for name, value in keep.items():
        if _holds(value, made, 3):
            return name
    graph.operations[ops_before:] = captures
    graph.last_stateful = last_stateful
    drop_new_functions(graph, set(list(graph.library)[:functions_before]))  # (a dict keeps insertion order)
    return None


def _holds(value, ids, depth) -> bool:
    if isinstance(value, Tensor):
        return id(value) in ids
    if depth and isinstance(value, (list, tuple, dict)):
        items = value.values() if isinstance(value, dict) else value
        return any(_holds(v, ids, depth - 1) for v in items)
    return False


def trace_subgraph(name, outer, fn, *args):
    """Runs ``fn(*args)`` with a new sub-graph of ``outer`` as the current graph."""
    graph = Graph(name, outer=outer)
    with graph.as_default():
        result = fn(graph, *args)
    return graph, result


def emit(op_type, inputs, attrs, graphs):
    stateful = any(g.is_stateful() for g in graphs)
    result = apply.apply_op(op_type, inputs, attrs, stateful=stateful)
    if isinstance(result, tuple):
        return list(result)
    return [result]
