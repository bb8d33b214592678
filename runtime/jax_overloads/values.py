"""What a state leaf is to JAX: an array (traced or not), a Python number, or a Python value.

The handlers flatten a statement's state (``core.nest``: tuples, lists,
dicts, namedtuples) into leaves and give each one a *kind*:

* ``ARRAY`` -- a JAX tracer or array, or a numpy array/scalar: a value
  ``lax`` carries, with its aval (shape, dtype, weak type);
* ``NUMBER`` -- a Python ``bool``/``int``/``float``/``complex``: stays
  Python while every path agrees on it, else becomes a weakly typed array;
* ``UNDEFINED`` -- ``Undefined('x')``, a variable not (yet) bound;
* ``UNSET`` -- the return lowering's ``UndefinedReturnValue``, zeros where a
  path gives a value;
* ``PYTHON`` -- anything else (``None``, strings, functions): the paths must
  agree on it (``tracing.values.same_python``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from autograph.runtime.core.undefined import UndefinedReturnValue, is_undefined
from autograph.runtime.errors import TracingError
from autograph.runtime.tracing.values import same_python

ARRAY, NUMBER, UNDEFINED, UNSET, PYTHON = "array", "number", "undefined", "unset", "python"

_NUMBERS = (bool, int, float, complex)


def kind(value) -> str:
    if isinstance(value, (jax.Array, jax.core.Tracer, np.ndarray, np.generic)):
        return ARRAY
    if type(value) in _NUMBERS:
        return NUMBER
    if type(value) is UndefinedReturnValue:
        return UNSET
    if is_undefined(value):
        return UNDEFINED
    return PYTHON


def is_numeric(value) -> bool:
    return kind(value) in (ARRAY, NUMBER)


class Aval:
    """Shape, dtype and weak type of a numeric leaf (the type ``lax`` checks between paths)."""

    __slots__ = ("shape", "dtype", "weak")

    def __init__(self, shape, dtype, weak):
        self.shape, self.dtype, self.weak = tuple(shape), np.dtype(dtype), bool(weak)

    def __eq__(self, other):
        if not isinstance(other, Aval):
            return NotImplemented
        return (self.shape, self.dtype, self.weak) == (other.shape, other.dtype, other.weak)

    def __repr__(self):
        weak = "weakly typed " if self.weak else ""
        return f"{weak}{self.dtype.name}[{','.join(map(str, self.shape))}]"


def aval_of(value) -> Aval:
    """The aval JAX gives ``value`` (numpy float64 is float32 unless x64 is enabled)."""
    aval = jax.typeof(value) if hasattr(jax, "typeof") else jax.core.get_aval(value)
    return Aval(aval.shape, aval.dtype, getattr(aval, "weak_type", False))


def as_array(value, aval: Aval):
    """``value`` as an array of ``aval``'s dtype: no op when it is one already."""
    if kind(value) == UNSET:
        return jnp.zeros(aval.shape, aval.dtype)
    current = aval_of(value)
    if current == aval:
        return value if kind(value) == ARRAY else jnp.asarray(value)
    if current.dtype == aval.dtype:  # strong from weak; a strong value cannot become weak
        return value if aval.weak else jnp.asarray(value, aval.dtype)
    return jax.lax.convert_element_type(value, aval.dtype)


def describe(value) -> str:
    k = kind(value)
    if k in (ARRAY, NUMBER):
        return f"a {aval_of(value)} {'array' if k == ARRAY else 'Python number'}"
    if k == UNDEFINED:
        return "undefined"
    text = repr(value)
    return f"the Python value {text if len(text) < 40 else text[:37] + '...'}"


def join(label, a, b, where, paths=("true branch", "false branch")) -> Aval | None:
    """The aval two paths' values of ``label`` merge to, or None when they are the same Python value.

    Refuses, naming ``label`` and ``where``, what ``lax`` cannot merge: a variable defined on one
    path only, Python values that differ, dtypes or shapes that differ.
    """
    if a is b:
        return None
    ka, kb = kind(a), kind(b)
    if ka == UNSET or kb == UNSET:
        other = b if ka == UNSET else a
        return aval_of(other) if is_numeric(other) else None
    if UNDEFINED in (ka, kb):
        if ka == kb:
            return None
        only = paths[1] if ka == UNDEFINED else paths[0]
        raise TracingError(
            f"'{label}' must be defined on both paths of {where}; it is defined only in the {only}. "
            f"Assign {label} before it or on both paths."
        )
    if ka == NUMBER and kb == NUMBER and same_python(a, b):
        return None
    if PYTHON in (ka, kb):
        if same_python(a, b):
            return None
        raise TracingError(
            f"'{label}' is {describe(a)} in the {paths[0]} but {describe(b)} in the {paths[1]} of {where}; "
            f"JAX can only merge arrays and numbers. Compute {label} outside it, or make it an array on both paths."
        )
    x, y = aval_of(a), aval_of(b)
    if x.shape != y.shape:
        raise TracingError(
            f"'{label}' has shape {x.shape} in the {paths[0]} but {y.shape} in the {paths[1]} of {where}; "
            "JAX needs one shape on both paths. Pad or reshape one of them."
        )
    if x.dtype == y.dtype:
        return Aval(x.shape, x.dtype, x.weak and y.weak)
    if not x.weak and not y.weak:
        raise TracingError(
            f"'{label}' is {x.dtype.name} in the {paths[0]} but {y.dtype.name} in the {paths[1]} of {where}; "
            f"both must give it the same dtype. Cast one of them, e.g. {label}.astype(jnp.{x.dtype.name})."
        )
    if x.weak and y.weak:
        return Aval(x.shape, jnp.result_type(a, b), True)
    strong, weak = (x, y) if not x.weak else (y, x)
    return Aval(x.shape, jnp.result_type(strong.dtype, np.zeros((), weak.dtype).item()), False)  # (a number: weak)


def equations():
    """The list of equations the current jaxpr trace (``jax.jit``, ``make_jaxpr``) records, or None
    under another trace (``jax.grad``/``jax.vmap`` outside a jit).  JAX has no public API for it."""
    try:
        from jax._src import core

        return core.trace_ctx.trace.frame.tracing_eqns
    except AttributeError:
        return None


def predicate(value, where):
    """``value`` as the scalar bool ``lax.cond``/``while_loop`` decide on (Python truth for numbers)."""
    aval = aval_of(value)
    if aval.shape != ():
        raise TracingError(
            f"the condition of {where} is a {aval} array: a Python condition needs one truth value. "
            "Reduce it with jnp.any(...) or jnp.all(...), or select elementwise with jnp.where."
        )
    if aval.dtype == np.bool_:
        return value
    return value != 0
