"""What a statement binds, references and changes, read from the activity annotations.

The control flow lowering (``control_flow``) asks these questions about the
same statements at every level of nesting; ``Summaries`` memoizes them.
"""

from __future__ import annotations

import gast

from autograph.pyct import anno, ast_util, qual_names


class Summaries:
    """Names bound / referenced by statements, from the activity annotations.

    Memoized per statement: the converter asks about the same statements
    at every level of nesting.
    """

    __slots__ = ("_bound", "_referenced")

    def __init__(self):
        self._bound = {}
        self._referenced = {}

    def bound(self, statements) -> set:
        """Names bound anywhere in ``statements``."""
        return _union(self._bound, statements, self._bound_by)

    def _bound_by(self, statement) -> frozenset:
        modified = anno.get(statement, anno.MODIFIED, None)
        if modified is not None:
            return frozenset(m for m in modified if not qual_names.is_composite(m))
        names = set(anno.get(statement, anno.DEFS, ()))
        if type(statement) not in ast_util.SCOPES:
            for owner, field in ast_util.child_blocks(statement):
                names |= self.bound(getattr(owner, field))
            for handler in getattr(statement, "handlers", ()):
                names.update(anno.get(handler, anno.DEFS, ()))
        return frozenset(names)

    def referenced(self, statements) -> set:
        """Names ``statements`` read or bind anywhere."""
        return _union(self._referenced, statements, self._referenced_by)

    def _referenced_by(self, statement) -> frozenset:
        names = set(anno.get(statement, anno.USES, ())) | set(anno.get(statement, anno.DEFS, ()))
        if type(statement) not in ast_util.SCOPES:
            for owner, field in ast_util.child_blocks(statement):
                names |= self.referenced(getattr(owner, field))
            for handler in getattr(statement, "handlers", ()):
                names.update(anno.get(handler, anno.USES, ()))
                names.update(anno.get(handler, anno.DEFS, ()))
        return frozenset(names)


def _union(cache, statements, summarize) -> set:
    """The union of ``summarize(statement)`` over ``statements``, each memoized in ``cache`` by id."""
    names = set()
    for statement in statements:
        cached = cache.get(id(statement))
        if cached is None:
            cached = cache[id(statement)] = summarize(statement)
        names |= cached
    return names


def directly_bound(statements) -> set:
    """Names the statements themselves assign: not inside the if/while/for
    that become closures, nor inside nested functions."""
    bound = set()
    for statement in statements:
        kind = type(statement)
        if kind in (gast.While, gast.For):
            continue  # their test (walrus) and target are bound in closures
        bound.update(anno.get(statement, anno.DEFS, ()))
        if kind is gast.If or kind in ast_util.SCOPES:
            continue
        for owner, field in ast_util.child_blocks(statement):
            bound |= directly_bound(getattr(owner, field))
        for handler in getattr(statement, "handlers", ()):
            bound.update(anno.get(handler, anno.DEFS, ()))
    return bound


def changed(node, scope):
    """``(names, composites)`` a statement changes: the names it binds, and the
    attribute chains and containers it changes without rebinding their root.

    A container (``x[]`` in ``MODIFIED``) is state as the chain that holds it:
    ``x`` for a local ``x`` (a global cannot be rebound from a closure; its
    mutations stay Python side effects), ``self.d`` for ``self.d[k] = v``.
    """
    modified = anno.get(node, anno.MODIFIED)
    names = {m for m in modified if not qual_names.is_composite(m)}
    visible = anno.get(node, anno.LIVE_IN) | anno.get(node, anno.LIVE_OUT) | scope.always_live
    rebindable = scope.locals | scope.nonlocals
    composites = set()
    for m in modified:
        if not qual_names.is_composite(m):
            continue
        if qual_names.root(m) in names:
            if m.endswith("[]") and m[:-2] in names and m[:-2] in visible:
                composites.add(m[:-2])  # x = ag__.aug_setitem(x, ...): an alias may see x's items
            continue
        if m.endswith("[]"):
            m = m[:-2]
            if not qual_names.is_composite(m) and m not in rebindable:
                continue
        composites.add(m)
    return names, composites

