"""Fused pipeline functions: two functions of a pipeline traced as one graph.

Each fused function is a Python function calling the user's functions the
way the pipeline would (a tuple element unpacked into arguments, what the
first returns made into the strongly typed tensors an element holds), so
the second sees exactly what it saw unfused; ``trace`` converts and traces
it once.  ``rewrites.py`` keeps a fusion only if the fused output spec is the
unfused one.

* ``map_map(f, g)``: ``g(f(x))``;
* ``filter_filter(p, q)``: ``p(x) and q(x)``, ``q`` run only where ``p`` holds
  (an ``If``, as Python's ``and``), so ``q`` never sees an element ``p`` drops;
* ``map_filter(f, p)``: ``(*f(x), p(f(x)))``, the map's outputs and the verdict.
"""

from __future__ import annotations

from autograph.runtime import ops
from autograph.runtime.core import nest
from autograph.runtime.operators import calls
from autograph.runtime.tracing.functional_api import cond

from autograph.runtime.data.functions import as_element_tensor, trace


def _args(element):
    return element if type(element) is tuple else (element,)


def _as_element(result, function):
    """What ``function`` returned, as the element the pipeline would pass on: strong tensors."""
    leaves = []
    for value in nest.flatten(result):
        tensor = as_element_tensor(value, function.fn, function.role)
        leaves.append(ops.cast(tensor, tensor.dtype) if tensor.weak else tensor)
    return nest.pack_as(result, leaves)


def _call(function, element):
    return _as_element(calls.converted_call(function.fn, *_args(element)), function)


def _labelled(fused, first, second, role):
    fused.label = f"{first.label} then {second.label}"
    fused.role = role
    return fused


def map_map(f, g):
    def fused_map(*args):
        return _call(g, _call(f, args if len(args) != 1 else args[0]))

    return _labelled(trace(fused_map, f.arg_specs, "the map function"), f, g, "the fused map functions")


def filter_filter(p, q):
    def fused_filter(*args):
        element = args if len(args) != 1 else args[0]
        keep = _call(p, element)
        return cond(keep, lambda: _call(q, element), lambda: ops.constant(False))

    return _labelled(trace(fused_filter, p.arg_specs, "the filter predicate"), p, q, "the fused filter predicates")


def map_filter(f, p):
    def fused_map_filter(*args):
        mapped = _call(f, args if len(args) != 1 else args[0])
        return mapped, _call(p, mapped)

    return _labelled(trace(fused_map_filter, f.arg_specs, "the map function"), f, p,
                     "the fused map function and filter predicate")


def vectorized(function, batched_spec):
    """``function`` traced against ``batched_spec`` (its arguments with a leading batch dimension)."""
    def batched(*args):
        return _call(function, args if len(args) != 1 else args[0])

    fused = trace(batched, batched_spec, "the map function")
    fused.label, fused.role = function.label, f"{function.role} (vectorized)"
    return fused
