"""Retracing, in one place: a loop's body is traced again until what it is made of settles.

Every traced loop (``tracing/loops.py``'s ``While``, ``data/staged_loop.py``'s
``DatasetReduce``) is traced in rounds, and this module owns both loops of
rounds; the other modules only answer "trace again" and say why:

* ``settle(trace_round, outer, what, advice)`` is the inner loop: a round
  traces the condition and the body once against the loop variables'
  current dtypes and shapes, and reports whether one of them changed (a
  Python value became a loop variable, a weak dtype widened or settled, a
  list is staged, a dimension relaxed: ``tracing/loop_slots.py`` and
  ``tracing/weak_loop_vars.py`` decide that).  The library functions a
  thrown-away round added are removed; a loop that does not settle after
  ``MAX_TRACES`` rounds is a ``TracingError``.
* ``restaging(trace, init)`` is the outer loop, over the structure of the
  state rather than over dtypes: the operators flatten a statement's state
  to loop values (``operators/statement_state.py``), and when a body changes what
  that flattening must be (a top-level list that grows is one staged list,
  not its items; an unset return value became a tuple) they raise
  ``Restage``; the loop is traced again from the start with that entry
  restructured.

The operators ask (they raise ``Restage``); tracing decides and retraces,
because the data layer's staged loops need the same rounds and sit above
the operators without depending on their internals.
"""

from __future__ import annotations

from autograph.runtime.core import nest
from autograph.runtime.core.graph import current_graph
from autograph.runtime.errors import TracingError
from autograph.runtime.tracing import staged_list
from autograph.runtime.tracing.values import drop_new_functions

__all__ = ["MAX_TRACES", "settle", "Restage", "StageFirst", "restaging"]

MAX_TRACES = 10


def settle(trace_round, outer, what, advice):
    """``trace_round(before)`` until it returns ``(result, False)``; returns that ``result``.

    ``before`` is the set of ``outer``'s library names before the round (a
    round that retraces part of itself drops what it added since).  ``what``
    and ``advice`` word the refusal of a loop that never settles.
    """
    for _ in range(MAX_TRACES):
        before = set(outer.library)
        result, changed = trace_round(before)
        if not changed:
            return result
        drop_new_functions(outer, before)
    raise TracingError(
        f"{what} did not settle on fixed dtypes and shapes after {MAX_TRACES} traces of the body. {advice}"
    )


class Restage(Exception):
    """A loop body changed the kind of state entry ``index``: trace the loop again.

    Either a top-level list changed its length (it is staged next time), or
    an unset return value became a nested value (``entry``: the unset value
    in that structure, whose ``StageFirst`` leaves are staged before the
    loop).
    """

    def __init__(self, index, entry=None):
        super().__init__(index)
        self.index = index
        self.entry = entry


class StageFirst:
    """In a ``Restage`` entry: a list of the state to stage before the loop (``restaging`` stacks
    it in the enclosing graph)."""

    def __init__(self, items, label, where):
        self.items, self.label, self.where = items, label, where

    def staged(self):
        return staged_list.stack(self.items, label=self.label, where=self.where)


def restaging(trace, init):
    """``trace(init, staged)`` with no list staged first, then again as each ``Restage`` says.

    Lists are loop state item by item (a list that keeps its length stays a
    list); only a list the body grows or shrinks becomes a staged list
    (``staged``: the indices of the state entries staged whole).
    Returns ``(final values, init, staged)``.
    """
    outer = current_graph()
    staged = frozenset()
    # Each restage stages one more entry or gives an unset return value more structure: a bound
    # on them only guards against a bug making two of them undo each other.
    for _ in range(4 * len(init) + 4):
        before = set(outer.library)
        try:
            return trace(init, staged), init, staged
        except Restage as restage:
            drop_new_functions(outer, before)
            if restage.entry is None:
                staged = staged | {restage.index}
            else:
                leaves = [v.staged() if type(v) is StageFirst else v for v in nest.flatten(restage.entry)]
                entry = nest.pack_as(restage.entry, leaves)  # lists to stage first: in this graph
                init = init[:restage.index] + (entry,) + init[restage.index + 1:]
    raise RuntimeError("autograph bug: the state of a tensor loop did not settle (restaged too often); "
                       "please report it with the function's source")
