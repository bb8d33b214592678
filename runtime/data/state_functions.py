"""Functions that carry a state across elements: ``scan`` and ``reduce``.

``fn(state, element)`` is traced against the spec of the initial state,
with the state rules of tensor loops: a Python number in the initial state
is weakly typed and takes the dtype the function gives it (``reduce(0,
lambda s, x: s + x)`` over int32 elements sums in int32); a dimension that
changes is relaxed to unknown and the function traced again; any other
change of dtype or structure is a ``TracingError`` naming the function and
the state.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import nest, shapes
from autograph.runtime.core.tensor import Tensor, TensorSpec
from autograph.runtime.data import checks, structure
from autograph.runtime.data.functions import trace
from autograph.runtime.errors import TracingError

_MAX_TRACES = 4


class StateFunction:
    """A traced ``fn(state, element)``: ``initial`` (flat numpy leaves), ``state_spec``, ``function``."""

    __slots__ = ("function", "state_spec", "initial", "output_spec", "has_output")

    def __init__(self, function, state_spec, initial, has_output):
        self.function = function
        self.state_spec = state_spec
        self.initial = initial
        self.has_output = has_output
        n = len(initial)
        out = structure.flat(function.output_spec)
        self.output_spec = nest.pack_as(function.output_spec[1], out[n:]) if has_output else None

    def run(self, elements):
        """The final state (a nest of numpy values) after all ``elements`` (flat leaf tuples)."""
        state = list(self.initial)
        call = self.function
        for leaves in elements:
            state = call([*state, *leaves])
        return structure.pack(self.state_spec, state)

    def scan(self, elements):
        """The outputs of the scan over ``elements``, as flat leaf tuples."""
        state = list(self.initial)
        n = len(state)
        call = self.function
        for leaves in elements:
            values = call([*state, *leaves])
            state = values[:n]
            yield tuple(values[n:])


def _initial_leaves(initial_state, role):
    leaves = nest.flatten(initial_state)
    weak, arrays = [], []
    for i, (value, path) in enumerate(zip(leaves, nest.leaf_paths(initial_state))):
        if isinstance(value, Tensor):
            raise TracingError(f"the initial state{path} of {role} is the symbolic tensor {value.name}; "
                               "give a numpy value or a Python number")
        array = checks.plain_array(value, f"the initial state{path} of {role}")
        if type(value) in (int, float):
            weak.append(i)
        arrays.append(array)
    return arrays, weak


def _traced(fn, initial_state, element_spec, role, has_output) -> StateFunction:
    arrays, weak = _initial_leaves(initial_state, role)
    specs = [TensorSpec(a.shape, a.dtype) for a in arrays]
    for _ in range(_MAX_TRACES):
        state_spec = nest.pack_as(initial_state, specs)
        function = trace(fn, (state_spec, element_spec), role, weak=tuple(weak))
        new_spec = _new_state_spec(function, state_spec, has_output)
        changed = False
        for i, (old, new, path) in enumerate(zip(specs, structure.flat(new_spec), nest.leaf_paths(state_spec))):
            if new.dtype != old.dtype:
                if i not in weak:
                    raise TracingError(
                        f"{role} {function.label} changes the dtype of the state{path} from {old.dtype.name} "
                        f"to {new.dtype.name}. Start from a {new.dtype.name} value, or cast the new state."
                    )
                specs[i] = old = TensorSpec(old.shape, new.dtype)
                changed = True
            if not shapes.is_subshape(new.shape, old.shape):
                specs[i] = TensorSpec(shapes.relax(old.shape, new.shape), old.dtype)
                changed = True
        if not changed:
            initial = [_as_state(a, s.dtype, i in weak, role, path)
                       for i, (a, s, path) in enumerate(zip(arrays, specs, nest.leaf_paths(state_spec)))]
            return StateFunction(function, state_spec, initial, has_output)
    raise TracingError(f"the state of {role} {function.label} did not settle on fixed dtypes and shapes after "
                       f"{_MAX_TRACES} traces; give the initial state the dtypes and shapes it keeps")


def _as_state(array, dtype, python, role, path):
    """The initial state leaf ``array`` in the state's ``dtype``: a Python number (``python``) as numpy
    would hold it beside that dtype, so one out of its range is numpy's ``OverflowError`` (as
    ``functools.reduce(f, ds, 2**40)`` over int32 elements raises), never a wrapped value."""
    if not python:
        return array.astype(dtype)
    try:
        return np.asarray(array.item(), dtype=dtype)
    except OverflowError as error:
        raise OverflowError(f"the initial state{path} of {role}: {error}") from None


def _new_state_spec(function, state_spec, has_output):
    out = function.output_spec
    if has_output:
        if type(out) is not tuple or len(out) != 2:
            raise TracingError(f"{function.role} {function.label} must return (new_state, output_element), "
                               f"got {structure.format_spec(out)}")
        out = out[0]
    problem = nest.mismatch(state_spec, out)
    if problem is not None:
        raise TracingError(f"{function.role} {function.label} returns a new state whose structure differs from "
                           f"the initial state's: {problem}. Return the state in the same structure.")
    return out


def trace_scan(fn, initial_state, element_spec) -> StateFunction:
    return _traced(fn, initial_state, element_spec, "the scan function", has_output=True)


def trace_reduce(fn, initial_state, element_spec) -> StateFunction:
    return _traced(fn, initial_state, element_spec, "the reduce function", has_output=False)
