"""What a pipeline node yields, from its inputs: the check of a loaded node's declared spec.

A pipeline read from a graph file declares every node's ``element_spec``;
the functions of the nodes downstream were traced for those specs.  A
node whose declared spec is not what its inputs make it yield would hand
them elements of another dtype or shape (a float32 source under a node
that claims int64 scalars), so ``check(kind, attrs, inputs, spec, where)``
(called by ``saving.decode`` for each node) derives the flat leaf specs the
node yields and requires the declared ones to have their dtypes and to
cover their shapes.  ``DERIVED`` is the rule table, keyed by node kind; a
source's spec is checked against its own data by ``saving``.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import shapes
from autograph.runtime.data import sources, structure


def _flat(spec):
    return [(s.dtype, s.shape) for s in structure.flat(spec)]


def _same(attrs, inputs):
    return _flat(inputs[0].element_spec)


def _batch(attrs, inputs):
    first = attrs["batch_size"] if attrs["drop_remainder"] else None
    return [(d, (first, *s)) for d, s in _flat(inputs[0].element_spec)]


def _rebatch(attrs, inputs):  # its input's leaves have a batch dimension already
    first = attrs["batch_size"] if attrs["drop_remainder"] else None
    return [(d, (first, *s[1:])) for d, s in _flat(inputs[0].element_spec)]


def _chunks(attrs, inputs):
    return [(d, (None, *s)) for d, s in _flat(inputs[0].element_spec)]


def _unbatch(attrs, inputs):
    return [(d, s[1:]) for d, s in _flat(inputs[0].element_spec)]


def _enumerate(attrs, inputs):
    return [(np.dtype("int64"), ())] + _flat(inputs[0].element_spec)


def _zip(attrs, inputs):
    return [leaf for d in inputs for leaf in _flat(d.element_spec)]


def _vectorized(attrs, inputs):
    leaves = _flat(inputs[0].element_spec)
    for kind, function in attrs["stages"]:
        if kind == "map":
            leaves = _flat(function.output_spec)
        elif kind == "map_filter":
            leaves = _flat(function.output_spec[0])
    return leaves


DERIVED = {
    **{kind: _same for kind in ("take", "skip", "repeat", "shuffle", "shuffle_repeat", "cache", "prefetch",
                                "filter", "take_while")},
    "batch": _batch, "rebatch": _rebatch, "chunks": _chunks, "unbatch": _unbatch, "enumerate": _enumerate,
    "zip": _zip, "vectorized": _vectorized,
    "map": lambda attrs, inputs: _flat(attrs["fn"].output_spec),
    "map_filter": lambda attrs, inputs: _flat(attrs["fn"].output_spec[0]),
    "scan": lambda attrs, inputs: _flat(attrs["scan"].output_spec),
}


def _covers(declared, derived) -> bool:
    return len(declared) == len(derived) and all(
        d == e and shapes.is_subshape(t, s) for (d, s), (e, t) in zip(declared, derived))


def check(kind, attrs, inputs, spec, where) -> None:
    """Raises ``ValueError`` if ``spec`` (declared) does not cover what the node yields."""
    declared = _flat(spec)
    if kind == "range":
        if len(declared) != 1 or declared[0][1] != () or declared[0][0].kind not in "iuf":
            raise ValueError(f"{where} (range) must yield scalar numbers, not {structure.format_spec(spec)}")
        try:
            sources.range_bounds((attrs["start"], attrs["stop"], attrs["step"]), declared[0][0])
        except ValueError as error:  # a step of 0, elements beyond the dtype
            raise ValueError(f"{where} (range): {error}") from None
        return
    if kind == "concatenate":
        derived = [_flat(d.element_spec) for d in inputs]
        fits = all(_covers(declared, leaves) for leaves in derived)
    else:
        rule = DERIVED.get(kind)
        fits = rule is None or _covers(declared, rule(attrs, inputs))
    if not fits:
        given = ", ".join(structure.format_spec(d.element_spec) for d in inputs)
        raise ValueError(f"{where} ({kind}) declares elements {structure.format_spec(spec)}, but its input(s) "
                         f"{given} make it yield others")
