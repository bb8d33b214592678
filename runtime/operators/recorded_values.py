"""How a snapshot (``outside_writes.Snapshot``) copies a value it watches, and puts it back.

A value's contents are what a call made while tracing may change: an
object's attributes (a class's or function's own, set with ``setattr``), a
dict's items, a list's, deque's or set's elements, an iterator's position
(which cannot be put back: advancing one is refused).
"""

from __future__ import annotations

import collections
import itertools
import operator
import types

from autograph.runtime.core.user_code import namespace_attributes

WIDTH = 256  # containers larger than this are not recorded


def contents(value):
    """``(kind, copy of the contents)`` of a value a snapshot watches, or ``(None, None)``: its attributes
    (``'attr'``), items (``'item'``), elements (``'seq'``, ``'set'``) or an iterator's position (``'iter'``)."""
    kind = type(value)
    if kind in _ITERATORS:
        return "iter", _ITERATORS[kind](value)
    if isinstance(value, (type, types.FunctionType)):  # a class or function of the user's (set with setattr)
        attributes = namespace_attributes(value)
        return ("attr", attributes) if len(attributes) <= WIDTH else (None, None)
    if kind is dict:
        return ("item", dict(value)) if len(value) <= WIDTH else (None, None)
    if kind is list or kind is collections.deque:
        return ("seq", list(value)) if len(value) <= WIDTH else (None, None)
    if kind is set:
        return ("set", list(value)) if len(value) <= WIDTH else (None, None)
    try:
        attributes = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return None, None
    if type(attributes) is not dict or len(attributes) > WIDTH:
        return None, None
    return "attr", dict(attributes)


def _restore_namespace(holder, before, skip):
    for key, value in namespace_attributes(holder).items():
        if key not in before and key not in skip:
            delattr(holder, key)
        elif key in before and value is not before[key]:
            setattr(holder, key, before[key])
    for key, value in before.items():
        if key not in vars(holder):
            setattr(holder, key, value)


def _generator_position(generator):
    """Where a generator is: its last instruction, and what its variables hold (a ``send`` may
    come back to the same ``yield``)."""
    frame = generator.gi_frame
    return None if frame is None else (frame.f_lasti, tuple(map(id, frame.f_locals.values())))


# iterator type -> where it is (what advancing it changes): a generator's last instruction, else
# the items left (``operator.length_hint``), or the next count of ``itertools.count``
_ITERATORS = {types.GeneratorType: _generator_position, itertools.count: repr}
_ITERATORS.update({type(iter(kind())): operator.length_hint
                   for kind in (list, tuple, str, bytes, set, dict, collections.deque)})
_ITERATORS.update({type(iter(range(0))): operator.length_hint, type(iter(range(2 ** 64))): operator.length_hint,
                   type(iter({}.values())): operator.length_hint, type(iter({}.items())): operator.length_hint,
                   type(reversed([])): operator.length_hint})


def restore(kind, holder, before, skip):
    """Puts ``before`` (``contents`` of ``holder``) back, but for the keys in ``skip`` (its state)."""
    if kind == "attr" and isinstance(holder, (type, types.FunctionType)):
        _restore_namespace(holder, before, skip)
    elif kind == "attr":
        attributes = holder.__dict__
        for key in [k for k in attributes if k not in before and k not in skip]:
            del attributes[key]
        attributes.update(before)
    elif kind == "item":
        for key in [k for k in holder if k not in before and k not in skip]:
            del holder[key]
        holder.update(before)
    elif kind == "set":
        holder.clear()
        holder.update(before)
    elif kind != "iter":  # (an iterator cannot be rewound: the trace is refused)
        holder.clear()
        holder.extend(before)
