"""The checks and element specs of the dataset sources (``from_tensor_slices``, ``range``,
``from_generator``, ``concatenate``); ``execution.py`` produces their elements."""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import dtypes, nest, shapes
from autograph.runtime.core.tensor import Tensor, TensorSpec
from autograph.runtime.data import checks, structure
from autograph.runtime.errors import TracingError


def slices(tensors):
    """``(leaves, element_spec)`` of ``from_tensor_slices(tensors)``: the arrays and the spec of one row.

    As in tf.data, a Python list is one array (``[1, 2, 3]``: three scalar elements); tuples,
    dicts and namedtuples are structure.
    """
    try:
        tensors = lists_as_arrays(tensors)
    except ValueError as error:  # numpy's message for a ragged nest of lists
        raise ValueError(f"from_tensor_slices: a list in tensors is not rectangular: {error}") from None
    flat = nest.flatten(tensors)
    if not flat:
        raise ValueError(f"from_tensor_slices needs at least one array; tensors is {tensors!r:.60}")
    paths = nest.leaf_paths(tensors)
    arrays = []
    for value, path in zip(flat, paths):
        where = f"tensors{path}"
        if isinstance(value, Tensor):
            raise TracingError(
                f"from_tensor_slices got the symbolic tensor {value.name} as {where}; a dataset holds "
                "concrete values. Build the dataset from numpy arrays outside the traced function and "
                "pass it in, or loop over the tensor itself."
            )
        # a copy: the dataset holds the values it was built from, as tf.data does
        array = checks.plain_array(value, f"from_tensor_slices: {where}", copy=True)
        if array.ndim == 0:
            raise ValueError(f"from_tensor_slices: {where} is a scalar; every component needs a first dimension")
        arrays.append(array)
    lengths = {a.shape[0] for a in arrays}
    if len(lengths) > 1:
        listed = ", ".join(f"tensors{p} has {a.shape[0]}" for p, a in zip(paths, arrays))
        raise ValueError(
            f"from_tensor_slices: the components of tensors must have the same first dimension, but {listed}"
        )
    spec = nest.pack_as(tensors, [TensorSpec(a.shape[1:], a.dtype) for a in arrays])
    return tuple(arrays), spec


def lists_as_arrays(value):
    """``value`` with each list replaced by a numpy array of it."""
    if type(value) is list:
        return np.asarray(value)
    if not nest.is_nested(value):
        return value
    if isinstance(value, dict):
        return {k: lists_as_arrays(v) for k, v in value.items()}
    items = [lists_as_arrays(v) for v in value]
    return type(value)(*items) if nest.is_namedtuple(value) else tuple(items)


def range_bounds(args, dtype):
    """``(start, stop, step)`` of ``Dataset.range(*args, dtype=dtype)``, every element checked to fit ``dtype``."""
    if not 1 <= len(args) <= 3:
        raise TypeError(f"Dataset.range takes 1 to 3 integers (stop | start, stop[, step]), got {len(args)}")
    names = ("stop",) if len(args) == 1 else ("start", "stop", "step")
    values = {name: checks.integer(v, f"Dataset.range({name}=...)") for name, v in zip(names, args)}
    start, stop, step = values.get("start", 0), values["stop"], values.get("step", 1)
    if step == 0:
        raise ValueError("Dataset.range(step=...) must not be zero")
    numbers = range(start, stop, step)
    kind = np.dtype(dtype).kind
    if kind not in "iuf":
        raise TypeError(f"Dataset.range(dtype=...) must be an integer or float dtype, got {np.dtype(dtype).name}")
    if numbers:
        low, high = min(numbers[0], numbers[-1]), max(numbers[0], numbers[-1])
        if kind in "iu":
            first, last = np.iinfo(dtype).min, np.iinfo(dtype).max
        else:  # the integers a float dtype holds exactly
            last = 2 ** (np.finfo(dtype).nmant + 1)
            first = -last
        if low < first or high > last:
            raise ValueError(f"Dataset.range{tuple(args)}: the elements {low}..{high} do not fit dtype "
                             f"{np.dtype(dtype).name}, which holds the integers {first}..{last} exactly")
    return start, stop, step


def generator_signature(generator, output_signature):
    if not callable(generator):
        raise TypeError(
            f"from_generator expects a callable returning an iterator (the generator function, not a "
            f"generator object), got {type(generator).__name__}"
        )
    leaves = nest.flatten(output_signature)
    if not leaves or not all(isinstance(s, TensorSpec) for s in leaves):
        raise TypeError(f"from_generator(output_signature=...) must be a nest of rt.TensorSpec, got "
                        f"{output_signature!r:.80}")
    return output_signature


def generated_leaves(value, spec, generator, index):
    """The flat numpy leaves of one value of a generator, checked against its signature."""
    found = []
    problem = _leaves_up_to(spec, value, "", found)
    if problem is not None:
        raise TypeError(f"from_generator: value {index} of {_name(generator)} does not match output_signature: "
                        f"{problem}")
    out = []
    for leaf, s, path in zip(found, structure.flat(spec), nest.leaf_paths(spec)):
        if dtypes.is_masked_array(leaf) or isinstance(leaf, np.matrix):
            checks.plain_array(leaf, f"from_generator: value {index}{path} of {_name(generator)}")
        array = np.asarray(leaf)
        if array.dtype != s.dtype:
            python = _python_numbers(leaf)
            same_kind = np.can_cast(array.dtype, s.dtype, "same_kind") or python and array.dtype.kind + s.dtype.kind in (
                "iu", "ui")
            if array.dtype == object or not same_kind:
                raise TypeError(f"from_generator: value {index}{path} of {_name(generator)} has dtype "
                                f"{array.dtype}, but output_signature says {s.dtype.name}")
            try:  # Python numbers as numpy holds them in that dtype: out of its range, numpy's OverflowError
                array = np.asarray(leaf, dtype=s.dtype) if python else array.astype(s.dtype)
            except OverflowError as error:
                raise OverflowError(f"from_generator: value {index}{path} of {_name(generator)}: {error}") from None
        if not shapes.is_subshape(array.shape, s.shape):
            raise ValueError(f"from_generator: value {index}{path} of {_name(generator)} has shape "
                             f"{shapes.format_shape(array.shape)}, but output_signature says "
                             f"{shapes.format_shape(s.shape)}")
        out.append(array)
    return tuple(out)


def _python_numbers(value) -> bool:
    """A Python number, or a list or tuple of them (nested)."""
    if type(value) in (int, float, bool):
        return True
    return type(value) in (list, tuple) and all(map(_python_numbers, value))


def _leaves_up_to(spec, value, path, found):
    """Appends to ``found`` the parts of ``value`` at the leaves of ``spec`` (a list there is an
    array); returns what does not match, or None."""
    if not nest.is_nested(spec):
        found.append(value)
        return None
    if isinstance(spec, dict):
        if not isinstance(value, dict) or set(value) != set(spec):
            return f"expected {nest.describe(spec)} at {path or 'the value'}, got {nest.describe(value)}"
    elif not isinstance(value, (tuple, list)) or len(value) != len(spec):
        return f"expected {nest.describe(spec)} at {path or 'the value'}, got {nest.describe(value)}"
    subs = [value[k] for k in sorted(spec)] if isinstance(spec, dict) else list(value)
    for step, child, sub in zip(nest.leaf_steps(spec), nest.children(spec), subs):
        problem = _leaves_up_to(child, sub, path + step, found)
        if problem is not None:
            return problem
    return None


def _name(generator) -> str:
    return repr(getattr(generator, "__qualname__", type(generator).__name__))


def concatenated_spec(first, second):
    if not hasattr(second, "element_spec") or not hasattr(second, "kind"):
        raise TypeError(f"concatenate expects a Dataset, got {type(second).__name__}")
    a, b = first.element_spec, second.element_spec
    problem = nest.mismatch(a, b)
    general = None if problem else [structure.most_general(x, y) for x, y in zip(structure.flat(a),
                                                                               structure.flat(b))]
    if problem or any(g is None for g in general):
        raise TypeError(
            f"concatenate: the datasets' elements differ: {structure.format_spec(a)} and "
            f"{structure.format_spec(b)}; they must have the same structure, dtypes and ranks"
        )
    return nest.pack_as(a, general)
