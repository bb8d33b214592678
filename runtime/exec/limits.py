"""Run-time limits of a loaded graph: an iteration budget per run, element counts checked before allocating.

A graph built by ``Graph.from_graph_def`` carries its ``LoadOptions``
(``graph.load_options``; traced graphs have none and pay nothing here).
The loader checks every size the file fixes; what the file computes at run
time is bounded here, in every way a graph runs (the interpreter, the
parallel runner, the compiled tier of hot loops, ``jit_compile``):

* **iterations** -- one run of a loaded graph may make at most
  ``max_iterations`` ``While`` iterations in all, nested loops included (a
  ``Budget``, one per run: ``scoped`` opens it around a run, ``budget``
  finds it).  An iteration past it raises ``ResourceLimitError`` naming the
  loop.  Three nested loops of 2,000 iterations under a budget of 5,000
  stop after 5,000 iterations, not 8·10^9.
* **elements** -- an op that can make a tensor larger than its inputs
  (``SIZE_RULES``, keyed by op type: ``Fill``, ``Range``, broadcasting
  elementwise ops, ``MatMul``, ``Pack``/``ConcatV2``/``ListAppend``,
  ``GatherV2``, ``Tile``, ``ScatterAdd``, a growing ``StackPush``, random
  ops, a variable update that broadcasts) and whose
  result size is not fixed statically gets a check (``guard(op)``) that
  computes the result's size from the input values and raises
  ``ResourceLimitError`` past ``max_elements`` *before* the kernel
  allocates.  Ops whose static output shape is fully known were checked at
  load; every other op makes nothing larger than an input.
"""

from __future__ import annotations

import contextvars
import itertools
import math

import numpy as np

from autograph.runtime.errors import ResourceLimitError

# -- the iteration budget of one run -------------------------------------------------

_current: contextvars.ContextVar = contextvars.ContextVar("autograph_iteration_budget", default=None)


class Budget:
    """The ``While`` iterations left to one run of a loaded graph (thread-safe: a counter)."""

    __slots__ = ("limit", "_spent")

    def __init__(self, limit: int):
        self.limit = limit
        self._spent = itertools.count(1)  # ``next`` is atomic: loops on worker threads share it

    def spend(self, loop: str) -> None:
        """Counts one iteration of ``loop`` (its description); raises past the limit."""
        if next(self._spent) > self.limit:
            raise ResourceLimitError(
                f"{loop} would make one run of the loaded graph exceed max_iterations={self.limit} loop "
                "iterations (counted over all its While loops, nested ones included); load the graph with a "
                "larger LoadOptions(max_iterations=...), or None for no bound, if the file is trusted"
            )


def limit_of(graph) -> int | None:
    """The iteration limit of a loaded ``graph`` (None: traced, or loaded without a bound)."""
    options = getattr(graph, "load_options", None)
    return None if options is None else options.max_iterations


def current() -> Budget | None:
    """The budget of the run under way (``scoped``), or None (no loaded graph with a limit is running)."""
    return _current.get()


def budget(graph) -> Budget | None:
    """The budget of the run under way (``scoped``), or a new one for a loaded ``graph`` run
    outside one (a jit-compiled graph is its whole run); None if ``graph`` is unbounded."""
    limit = limit_of(graph)
    if limit is None:
        return None
    found = _current.get()
    return Budget(limit) if found is None else found


def spend(loop: str) -> None:
    """Counts one iteration of ``loop`` against the budget of the run under way (``scoped``):
    what compiled code calls (``jit_compile`` and the compiled tier run inside ``scoped``)."""
    found = _current.get()
    if found is None:
        raise RuntimeError(f"{loop} of a loaded graph runs outside the iteration budget of a run: "
                           "compiled code of a loaded graph must be called through limits.scoped (a bug)")
    found.spend(loop)


def scoped(run, graph):
    """``run(...)`` (a run of a loaded ``graph``, or a step of one) inside one budget: the
    enclosing run's if there is one, else a new one; ``run`` itself for a graph without a limit."""
    limit = limit_of(graph)
    if limit is None:
        return run

    def run_in_budget(*args, **kwargs):
        if _current.get() is not None:
            return run(*args, **kwargs)
        token = _current.set(Budget(limit))
        try:
            return run(*args, **kwargs)
        finally:
            _current.reset(token)

    return run_in_budget


def describe_loop(op_name, cond, body) -> str:
    """How a limit error names a ``While``."""
    return f"the While {'' if op_name is None else repr(op_name) + ' '}over {cond.name!r}/{body.name!r}"


# -- element counts, before allocating ------------------------------------------------


def _size(value) -> int:
    return math.prod(np.shape(value))


def _broadcast(values, attrs) -> int:
    return math.prod(np.broadcast_shapes(*(np.shape(v) for v in values)))


def _dims(dims, attrs) -> int:
    return math.prod(int(d) for d in np.ravel(dims))


def _range(values, attrs) -> int:
    start, limit, delta = values
    if all(np.asarray(v).dtype.kind in "iub" for v in values):
        start, limit, delta = int(start), int(limit), int(delta)
        return 0 if delta == 0 else max(0, -((start - limit) // delta))
    with np.errstate(all="ignore"):
        count = (float(limit) - float(start)) / float(delta) if float(delta) else math.nan
    return max(0, math.ceil(count)) if math.isfinite(count) else 0  # not finite: numpy refuses it


def _matmul(values, attrs) -> int:
    a, b = (np.shape(v) for v in values)
    if not a or not b:
        return 0  # numpy refuses scalars
    batch = np.broadcast_shapes(a[:-2], b[:-2])
    return math.prod(batch) * (a[-2] if len(a) > 1 else 1) * (b[-1] if len(b) > 1 else 1)


def _gather(values, attrs) -> int:
    params, indices = (np.shape(v) for v in values)
    axis = attrs.get("axis")
    if axis is None:
        return math.prod(indices)
    if not -len(params) <= axis < len(params):
        return 0  # numpy refuses it
    axis %= len(params)
    return math.prod(params[:axis]) * math.prod(indices) * math.prod(params[axis + 1:])


def _variable_update(values, attrs) -> int:
    from autograph.runtime.ops.variables import lookup_variable

    var = lookup_variable(attrs["handle"])
    return math.prod(np.broadcast_shapes(np.shape(var._value), np.shape(values[0])))  # its storage, as kernels read it


def _tile(values, attrs) -> int:
    multiples = attrs.get("multiples")
    multiples = multiples if isinstance(multiples, (tuple, list)) else (multiples,)
    return _size(values[0]) * math.prod(int(m) for m in multiples if isinstance(m, int))


def _elementwise_rules() -> dict:
    from autograph.runtime.ops import math as math_ops

    return {op_type: _broadcast for op_type in math_ops.BINARY}


# op type -> the number of elements its result (or its largest temporary) will have, from
# the input values and attributes; op types not listed make nothing larger than an input
SIZE_RULES = {
    **_elementwise_rules(),
    "Select": _broadcast,
    "MatMul": _matmul,
    "Fill": lambda values, attrs: _dims(values[0], attrs),
    "RandomUniform": lambda values, attrs: _dims(values[0], attrs),
    "RandomNormal": lambda values, attrs: _dims(values[0], attrs),
    "Range": _range,
    "Pack": lambda values, attrs: len(values) * _size(values[0]) if values else 0,
    "ConcatV2": lambda values, attrs: sum(_size(v) for v in values),
    "ListAppend": lambda values, attrs: _size(values[0]) + _size(values[1]),
    "GatherV2": _gather,
    "Tile": _tile,
    "ScatterAdd": lambda values, attrs: _dims(values[2], attrs),
    "StackPush": lambda values, attrs: max(2 * len(values[0]), int(values[1]) + 1, 4) * _size(values[2]),
    "AssignAddVariable": _variable_update,
    "AssignSubVariable": _variable_update,
}

# op types whose kernel may allocate more than its (statically known) output: always checked
_TEMPORARIES = frozenset({"AssignAddVariable", "AssignSubVariable"})


def guard(op):
    """``check(*input values)`` raising ``ResourceLimitError`` if ``op`` of a loaded graph would
    make a tensor past ``max_elements``; None when nothing needs checking (a traced graph, an
    op that makes nothing larger than its inputs, a result whose size the loader checked)."""
    options = getattr(op.graph, "load_options", None)
    rule = None if options is None else SIZE_RULES.get(op.type)
    if rule is None:
        return None
    if op.type not in _TEMPORARIES and all(
            t.shape is not None and None not in t.shape for t in op.outputs):
        return None
    limit, attrs = options.max_elements, op.attrs
    what = f"{op.type} op {op.name!r} of graph {op.graph.name!r} (created at {op.location or '<unknown>'})"

    def check(*values):
        elements = rule(values, attrs)
        if elements > limit:
            raise ResourceLimitError(
                f"{what} would make a tensor of {elements} elements, more than max_elements={limit} of the "
                "loaded graph; load it with a larger LoadOptions(max_elements=...) if the file is trusted"
            )

    return check


def guarded(call, check):
    """``call`` preceded by ``check`` on the same arguments."""

    def checked_call(*values):
        check(*values)
        return call(*values)

    return checked_call
