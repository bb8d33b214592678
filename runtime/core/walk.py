"""One walk over objects linked to each other: each one reached once, by identity.

For the graphs a graph calls (its sub-graphs, their sub-graphs, ...) and the
nodes of an input pipeline: a link back to an object already reached, or a
second link to it, does not yield it again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator


def each_once(start, successors: Callable[[object], Iterable]) -> Iterator:
    """``start`` and every object reachable from it through ``successors``, each once, depth first."""
    seen, todo = set(), [start]
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        todo.extend(successors(item))
