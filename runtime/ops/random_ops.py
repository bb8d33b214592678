"""Random ops: ``rt.random.uniform`` / ``rt.random.normal`` / ``rt.random.set_seed``.

``RandomUniform`` / ``RandomNormal`` are registered ``stateful=True`` (see
``ops/__init__.py``): they draw fresh values at every execution of the graph, in
program order, and are never pruned.  Seeding follows TensorFlow: with
neither a global seed (``random.set_seed``) nor an op seed the values are
unpredictable; with either, each op draws a reproducible sequence (an op
seed defaults to a counter of random ops created since ``set_seed``).
"""

from __future__ import annotations

import itertools
import threading
import types

import numpy as np

from autograph.runtime.core import dtypes, shapes
from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import user_location_text
from autograph.runtime.core.opdef import register
from autograph.runtime.core.streams import StreamName
from autograph.runtime.ops.apply import apply_op
from autograph.runtime.core.tensor import Tensor

__all__ = ["random"]

_DEFAULT_GLOBAL_SEED = 87654321
_rng_lock = threading.Lock()
_rng = types.SimpleNamespace(global_seed=None, op_counter=itertools.count(), streams={}, stream_ids=itertools.count())


def set_seed(seed) -> None:
    """Sets the global random seed: random ops created afterwards draw reproducible sequences."""
    with _rng_lock:
        _rng.global_seed = None if seed is None else int(seed)
        _rng.op_counter = itertools.count()
        _rng.streams.clear()


def _seeds(seed):
    """(global seed, op seed) for a new random op, or (None, None) for entropy."""
    if seed is None and _rng.global_seed is None:
        return None, None
    global_seed = _DEFAULT_GLOBAL_SEED if _rng.global_seed is None else _rng.global_seed
    op_seed = next(_rng.op_counter) if seed is None else int(seed)
    return global_seed, op_seed


def generator(stream, seed, seed2) -> np.random.Generator:
    """The random stream ``stream`` (created from the seeds on first use): the kernels draw from it.

    A graph op's stream is a ``StreamName`` carrying its own state (it dies with the op's
    graphs); only eager streams, plain names, live in the process-wide table."""
    if isinstance(stream, StreamName):
        return stream.generator(seed, seed2)
    gen = _rng.streams.get(stream)
    if gen is None:
        with _rng_lock:
            gen = _rng.streams.get(stream)
            if gen is None:
                gen = np.random.default_rng(None if seed is None else [seed, seed2])
                _rng.streams[stream] = gen
    return gen


def _random_attrs(seed, dtype):
    global_seed, op_seed = _seeds(seed)
    if current_graph() is not None:
        stream = StreamName(f"rng_{next(_rng.stream_ids)}")  # one sequence per graph op, owned by it
    elif global_seed is None:
        stream = "eager"  # unseeded eager calls share one entropy-seeded generator
    elif seed is not None:
        stream = f"eager_{global_seed}_{op_seed}"  # repeated eager calls with this seed continue the sequence
    else:  # an op seed from the counter is never drawn again: a stream of this call only
        stream = StreamName(f"eager_{global_seed}_{op_seed}")
    return {"dtype": dtypes.as_dtype(dtype), "seed": global_seed, "seed2": op_seed, "stream": stream}


def _shape_input(shape, what):
    if isinstance(shape, Tensor):
        return shape
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        dims = [int(d) for d in shape]
    except TypeError:
        raise TypeError(
            f"{what} at {user_location_text()}: shape {shape!r} must be a tuple of ints or a 1-D "
            "int tensor (build one from tensors with rt.stack)"
        ) from None
    if any(d < 0 for d in dims):
        raise ValueError(f"{what} at {user_location_text()}: negative dimension in shape {shape!r}")
    return np.array(dims, dtype=np.int32)


def _infer_random(inputs, attrs):
    shape_t = inputs[0]
    if shape_t.shape is not None and len(shape_t.shape) != 1:
        raise ValueError(f"shape must be a 1-D int tensor, got shape {shapes.format_shape(shape_t.shape)}")
    if not dtypes.is_integer(shape_t.dtype):
        raise TypeError(f"shape must be an int tensor, got {shape_t.dtype.name}")
    for t in inputs[1:]:
        if t.shape is not None and len(t.shape) != 0:
            raise ValueError(f"distribution parameters must be scalars, got shape {shapes.format_shape(t.shape)}")
    if shape_t.op.type == "Const":
        out_shape = tuple(int(d) for d in shape_t.op.attrs["value"])
    elif shape_t.shape is not None and shape_t.shape[0] is not None:
        out_shape = (None,) * shape_t.shape[0]
    else:
        out_shape = None
    return [(attrs["dtype"], out_shape)]


_RANDOM_ATTRS = {"dtype": "dtype", "seed": "int_or_none", "seed2": "int_or_none", "stream": "random_stream"}
register("RandomUniform", infer=_infer_random, stateful=True, inputs=3, attrs=_RANDOM_ATTRS)
register("RandomNormal", infer=_infer_random, stateful=True, inputs=3, attrs=_RANDOM_ATTRS)


def _param(value, dtype):
    if isinstance(value, Tensor):
        return value
    return np.asarray(value, dtype=dtype)


def uniform(shape, minval=0, maxval=None, dtype="float32", seed=None, name=None):
    """Uniform values in ``[minval, maxval)``; fresh at every execution.

    ``maxval`` defaults to 1 for floats and is required for ints.
    """
    dtype = dtypes.as_dtype(dtype)
    if not (dtypes.is_floating(dtype) or dtypes.is_integer(dtype)):
        raise TypeError(f"rt.random.uniform: dtype must be a float or int dtype, got {dtype.name}")
    if maxval is None:
        if dtypes.is_integer(dtype):
            raise ValueError(
                f"rt.random.uniform at {user_location_text()}: an int dtype needs maxval "
                "(values are drawn from [minval, maxval))"
            )
        maxval = 1
    inputs = [_shape_input(shape, "rt.random.uniform"), _param(minval, dtype), _param(maxval, dtype)]
    return apply_op("RandomUniform", inputs, _random_attrs(seed, dtype), name=name)


def normal(shape, mean=0.0, stddev=1.0, dtype="float32", seed=None, name=None):
    """Normally distributed values; fresh at every execution."""
    dtype = dtypes.as_dtype(dtype)
    if not dtypes.is_floating(dtype):
        raise TypeError(f"rt.random.normal: dtype must be a float dtype, got {dtype.name}")
    inputs = [_shape_input(shape, "rt.random.normal"), _param(mean, dtype), _param(stddev, dtype)]
    return apply_op("RandomNormal", inputs, _random_attrs(seed, dtype), name=name)


random = types.SimpleNamespace(uniform=uniform, normal=normal, set_seed=set_seed)
