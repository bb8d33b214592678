"""The stateful ops lowered to JAX: variables and random streams as threaded state, host effects
as ordered callbacks.

An XLA computation cannot touch a Python object, so the lowered function is
pure: it takes the *state* of the graph -- the value of every ``rt.Variable``
its ops name, and one PRNG key per random op -- as arguments and returns the
new state, which ``compiler.py`` writes back after the call.  Inside the
computation the state is a dict (``state key -> value``) that the rules below
read and replace in program order; ``lowering.py`` threads it through
``lax.cond`` branches and ``lax.while_loop`` carries.

* ``ReadVariable``/``Assign*Variable``: the key is the variable's handle; a
  value is cast to the variable's dtype as numpy's in-place operators cast.
* ``RandomUniform``/``RandomNormal``: the key of the op's stream is split at
  every draw (``jax.random``), so a seeded op draws a reproducible sequence.
  The values are JAX's, not numpy's generator's: the same distribution, other
  numbers.  A stream's key is created from the op's seeds (entropy without
  one) on its first run and lives as long as the stream's name does.
* ``Print``/``PyFunc``: host callbacks, ``io_callback(..., ordered=True)``
  (one ordered effect for both, so they run in program order, also inside
  loops and branches); each calls the shared host effect (``exec/effects.py``,
  the numpy backend's kernels), so the text printed and the checks of a
  ``py_function``'s results are the same.  An
  exception of a ``py_function`` is kept on the host and makes the op a
  failed check (``checks.py``): raised after the call, nothing after it runs.
  (``jax.debug.print`` and ``jax.pure_callback`` would be unordered with
  respect to each other, and a ``pure_callback`` whose result is unused may
  be removed: a ``py_function`` is stateful.)
"""

from __future__ import annotations

import threading
import weakref

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

from autograph.runtime.backends.jax import checks
from autograph.runtime.backends.jax.errors import unlowerable
from autograph.runtime.core import shapes
from autograph.runtime.exec import effects as host_effects
from autograph.runtime.ops import variables

# -- state keys: what of the process a graph's ops read or write ----------------------------------

_VARIABLE_OPS = ("ReadVariable", "AssignVariable", "AssignAddVariable", "AssignSubVariable")
_RANDOM_OPS = ("RandomUniform", "RandomNormal")
HOST_EFFECTS = ("Print", "PyFunc")


def keys_of(op) -> tuple:
    """The state of the process ``op`` reads or writes: a variable's handle, ``("rng", stream)``."""
    if op.type in _VARIABLE_OPS:
        return (op.attrs["handle"],)
    if op.type in _RANDOM_OPS:
        return (("rng", op.attrs["stream"]),)
    return ()


def writes_state(op) -> bool:
    """True if ``op`` changes state or the world (not a mere read)."""
    return op.type in HOST_EFFECTS or (op.type != "ReadVariable" and bool(keys_of(op)))


# -- reading and writing the state outside the computation ----------------------------------------

_keys = weakref.WeakKeyDictionary()  # stream name -> its current PRNG key (numpy uint32[2])
_keys_lock = threading.Lock()


def _variable_attrs(handle):
    var = variables.lookup_variable(handle)
    return {"handle": handle, "dtype": var.dtype, "shape": var.shape}


def read_state(key):
    """The current value of state ``key`` (a numpy array)."""
    if isinstance(key, tuple):
        return _stream_key(key[1])
    return host_effects.read_variable(**_variable_attrs(key))


def write_state(key, value) -> None:
    """Stores ``value`` as the new value of state ``key``."""
    if isinstance(key, tuple):
        with _keys_lock:
            _keys[key[1]] = np.asarray(value)
        return
    host_effects.assign_variable(np.asarray(value), **_variable_attrs(key))


def _stream_key(stream):
    with _keys_lock:
        found = _keys.get(stream)
    if found is None:
        raise KeyError(stream)
    return found


def init_stream(op) -> None:
    """Creates the PRNG key of ``op``'s stream from its seeds, if it has none yet."""
    stream = op.attrs["stream"]
    with _keys_lock:
        if stream in _keys:
            return
        seed, seed2 = op.attrs["seed"], op.attrs["seed2"]
        if seed is None:
            seed, seed2 = (int(x) for x in np.random.SeedSequence().generate_state(2))
        try:
            _keys[stream] = np.array([int(seed) % 2**32, int(seed2) % 2**32], dtype=np.uint32)
        except TypeError:  # a plain name: no object whose life the key could share
            raise unlowerable("a random op whose stream is a plain name (not one a graph owns)") from None


# -- the rules: rule(op, inputs, state) -> outputs --------------------------------------------


def _read(op, inputs, state):
    return state[op.attrs["handle"]]


def _assigned(op, value, state):
    handle, dtype, var_shape = op.attrs["handle"], op.attrs["dtype"], op.attrs["shape"]
    value = jnp.asarray(value).astype(dtype)
    if not shapes.is_subshape(tuple(value.shape), var_shape):
        raise unlowerable(f"a value of shape {tuple(value.shape)} assigned to a variable of shape "
                          f"{shapes.format_shape(var_shape)} (numpy raises ValueError)")
    state[handle] = checks.masked(state, value, state[handle])
    return value


def _assign(op, inputs, state):
    return _assigned(op, inputs[0], state)


def _assign_add(op, inputs, state):
    old = state[op.attrs["handle"]]
    return _assigned(op, old + jnp.asarray(inputs[0]).astype(op.attrs["dtype"]), state)


def _assign_sub(op, inputs, state):
    old = state[op.attrs["handle"]]
    return _assigned(op, old - jnp.asarray(inputs[0]).astype(op.attrs["dtype"]), state)


def _static_shape(value):
    if isinstance(value, (np.ndarray, np.generic, int, tuple, list)):
        return tuple(int(d) for d in np.asarray(value).reshape(-1))
    raise unlowerable("the shape of a random draw is computed in the graph, and XLA needs it at compile time")


def _draw(op, state):
    key = ("rng", op.attrs["stream"])
    new, sub = jax.random.split(state[key])
    state[key] = checks.masked(state, new, state[key])
    return sub


def _uniform(op, inputs, state):
    dims, dtype = _static_shape(inputs[0]), op.attrs["dtype"]
    sub = _draw(op, state)
    low, high = inputs[1], inputs[2]
    if dtype.kind == "f":
        unit = jax.random.uniform(sub, dims, dtype=jnp.float64 if dtype == np.float64 else jnp.float32)
        return (low + (high - low) * unit).astype(dtype)
    return jax.random.randint(sub, dims, low, high, dtype=dtype)


def _normal(op, inputs, state):
    dims, dtype = _static_shape(inputs[0]), op.attrs["dtype"]
    sub = _draw(op, state)
    unit = jax.random.normal(sub, dims, dtype=jnp.float64 if dtype == np.float64 else jnp.float32)
    return (inputs[1] + inputs[2] * unit).astype(dtype)


def _failed(state):
    ok = checks.ok_so_far(state)
    return np.False_ if ok is None else jnp.logical_not(ok)


def _host_values(values):
    return [np.asarray(v)[()] if np.ndim(v) == 0 else np.asarray(v) for v in values]


def _print(op, inputs, state):
    attrs = dict(op.attrs)
    kernel = host_effects.print_values

    def host(failed, *values):
        if not failed:  # nothing happens once a check failed
            kernel(*_host_values(values), **attrs)

    io_callback(host, None, _failed(state), *inputs, ordered=True)
    return ()


def _py_func(op, inputs, state):
    """A host callback returning ``(ok, *results)``: the user's exception is kept (``checks.py``
    raises it after the call) and makes the op a failed check, so nothing happens after it."""
    attrs = dict(op.attrs)
    tout, out_shapes = attrs["Tout"], attrs["output_shapes"]
    if any(s is None or None in s for s in out_shapes):
        raise unlowerable("an rt.py_function without a full output shape (XLA needs it at compile time; "
                          "give rt.py_function a shape)")
    kernel = host_effects.py_func
    specs = [jax.ShapeDtypeStruct((), np.bool_)] + [jax.ShapeDtypeStruct(tuple(s), d) for s, d in zip(out_shapes, tout)]
    nothing = [np.False_] + [np.zeros(s, d) for d, s in zip(tout, out_shapes)]

    def host(failed, *values):
        if failed:  # nothing happens once a check failed
            return nothing
        try:
            result = kernel(*_host_values(values), **attrs)
        except Exception as e:  # noqa: BLE001 - raised after the call, as the interpreter raises it
            checks.keep_host_error(op, e)
            return nothing
        results = ([result] if attrs["single"] else list(result)) if tout else []
        return [np.True_] + [np.asarray(r, dtype=d).reshape(s) for r, d, s in zip(results, tout, out_shapes)]

    ok, *results = io_callback(host, specs, _failed(state), *inputs, ordered=True)
    checks.record(op, ok, [], state)
    if not tout:
        return ()
    return results[0] if attrs["single"] else tuple(results)


RULES = {
    "ReadVariable": _read,
    "AssignVariable": _assign,
    "AssignAddVariable": _assign_add,
    "AssignSubVariable": _assign_sub,
    "RandomUniform": _uniform,
    "RandomNormal": _normal,
    "Print": _print,
    "PyFunc": _py_func,
}
