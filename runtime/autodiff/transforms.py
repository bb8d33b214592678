"""``grad`` and ``value_and_grad``, JAX-style: functions that return gradients, numpy in and out.

``value_and_grad(f, argnums=0, has_aux=False)`` is a traced function
(``rt.function``: one graph per input signature, its cache and its retrace
warning) whose graph computes ``f``'s result and, with the gradient ops
``backprop.gradients`` adds, the gradient of that result with respect to
the arguments ``argnums`` names.  ``f`` must return a float scalar (with
``has_aux``: a pair ``(scalar, aux)``).  Each gradient has the structure of
its argument (tuples, lists, dicts, namedtuples of arrays); a float leaf
the result does not depend on gets zeros, a leaf that is not a float array
(integers, bools, Python values other than floats) gets ``None``.  A Python
``float`` in a differentiated argument is passed in as a float64 array, so
that it is differentiated rather than baked into the graph.

Called while another function is traced, it adds its ops to that graph (a
gradient usable inside ``ag.function``).  ``ag.grad`` / ``ag.value_and_grad``
are these with ``trace_transform=ag.convert``.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from autograph.runtime.autodiff import backprop
from autograph.runtime.core import nest, shapes
from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import user_location_text
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.tracing import function as tracing_function

__all__ = ["grad", "value_and_grad"]


def value_and_grad(fn, argnums=0, has_aux=False, **options):
    """``(f(*args), gradient)``, or ``((f(*args)[0], aux), gradient)`` with ``has_aux``."""
    return GradFunction(fn, argnums, has_aux, True, options)


def grad(fn, argnums=0, has_aux=False, **options):
    """The gradient of ``f`` with respect to the arguments ``argnums`` (``(gradient, aux)`` with ``has_aux``)."""
    return GradFunction(fn, argnums, has_aux, False, options)


def _check_argnums(argnums):
    items = argnums if isinstance(argnums, tuple) else (argnums,)
    if not items or any(type(i) is not int or i < 0 for i in items):
        raise TypeError(f"argnums must be a non-negative int or a non-empty tuple of them, got {argnums!r}")
    return items


class GradFunction:
    """A traced function returning a gradient (see the module docstring); ``get_concrete_function``
    and ``tracing_count`` are its ``rt.function``'s."""

    def __init__(self, fn, argnums, has_aux, with_value, options):
        if not callable(fn):
            raise TypeError(f"grad needs a callable, got {fn!r} (at {user_location_text()})")
        self._positions = _check_argnums(argnums)
        kind = "value_and_grad" if with_value else "grad"
        transform = options.pop("trace_transform", None)
        name = options.pop("name", None) or f"{kind}_{getattr(fn, '__name__', 'function')}"
        traced = transform(fn) if transform is not None else fn  # now: no state set lazily while tracing
        self._body = _body(fn, traced, self._positions, type(argnums) is tuple, has_aux, with_value, kind)
        self._function = tracing_function.function(self._body, name=name, **options)
        self._signature = inspect.signature(fn)

    def __call__(self, *args, **kwargs):
        if kwargs:  # differentiated arguments passed by keyword: their positions, as the body sees them
            bound = self._signature.bind(*args, **kwargs)
            args, kwargs = bound.args, bound.kwargs
        args = tuple(_float_leaves_as_arrays(a) if i in self._positions else a for i, a in enumerate(args))
        if current_graph() is not None:  # called while tracing: its ops go into that graph
            return self._body(*args, **kwargs)
        return self._function(*args, **kwargs)

    def get_concrete_function(self, *args, **kwargs):
        return self._function.get_concrete_function(*args, **kwargs)

    @property
    def tracing_count(self) -> int:
        return self._function.tracing_count


def _float_leaves_as_arrays(value):
    leaves = nest.flatten(value)
    if not any(type(leaf) is float for leaf in leaves):
        return value
    return nest.pack_as(value, [np.float64(leaf) if type(leaf) is float else leaf for leaf in leaves])


def _body(fn, traced, positions, as_tuple, has_aux, with_value, kind):
    @functools.wraps(fn)
    def body(*args, **kwargs):
        result = traced(*args, **kwargs)
        value, aux = _split(result, has_aux, kind)
        target = _scalar(value, kind, getattr(fn, "__name__", "function"))
        for i in positions:
            if i >= len(args):
                raise TypeError(f"{kind}: argnums names argument {i}, but the function was called with "
                                f"{len(args)} positional argument(s)")
        gradient = _gradients_of(target, tuple(args[i] for i in positions))
        gradient = gradient if as_tuple else gradient[0]
        if with_value:
            return ((value, aux) if has_aux else value), gradient
        return (gradient, aux) if has_aux else gradient

    return body


def _split(result, has_aux, kind):
    if not has_aux:
        return result, None
    if not isinstance(result, tuple) or len(result) != 2:
        raise TypeError(f"{kind}(has_aux=True): the function must return a pair (value, aux), got "
                        f"{type(result).__name__}")
    return result


def _scalar(value, kind, name):
    """The differentiated result as a float scalar tensor, or the error saying what it is instead."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{kind} of {name}: the function returned {type(value).__name__} {value!r:.40}, which does "
                        "not depend on the arguments; return a float scalar computed from them")
    if value.shape is None or value.shape != ():
        raise TypeError(f"{kind} of {name}: the function must return a scalar, but it returned a "
                        f"{value.dtype.name}{shapes.format_shape(value.shape)} tensor ({value.name}, created at "
                        f"{value.op.location or '<unknown>'}); reduce it to one number, e.g. with rt.reduce_sum(...), "
                        "or pass output_gradients to rt.GradientTape.gradient for a vector-Jacobian product")
    if not backprop.differentiable(value):
        raise TypeError(f"{kind} of {name}: the function returned a {value.dtype.name} scalar ({value.name}, created at "
                        f"{value.op.location or '<unknown>'}); gradients need a float result: cast it with rt.cast")
    return value


def _gradients_of(target, arguments):
    """The gradient of ``target`` for each of ``arguments``, in its structure (one walk for all)."""
    leaves = nest.flatten(arguments)
    is_source = [isinstance(leaf, Tensor) and backprop.differentiable(leaf) for leaf in leaves]
    sources = [leaf for leaf, source in zip(leaves, is_source) if source]
    found = iter(backprop.gradients([target], sources) if sources else ())
    results = []
    for leaf, source in zip(leaves, is_source):
        g = next(found) if source else None
        results.append(backprop.zeros_for(leaf) if source and g is None else g)
    return nest.pack_as(arguments, results)
