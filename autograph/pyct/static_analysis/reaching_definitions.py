"""Reaching definitions: which names may (or must) be bound at a statement.

A forward analysis over the structured statements of one function, run as
two data flows at once: *may* (some path from the function's entry binds
the name; union at merges) and *must* (every path does; intersection).
Parameters are bound at entry; ``del x`` unbinds ``x`` (on a path through
a loop, ``try`` or ``match`` that may delete it, ``x`` is no longer a must).

Annotates compound statements with ``DEFINED_IN`` (may), which the control
flow converter uses to decide where a variable needs an
``ag__.Undefined('x')`` placeholder, and every statement with
``MUST_DEFINED``, so a read of a variable that may be unbound is checked.
Requires ``activity``.
"""

from __future__ import annotations

import gast

from autograph.pyct import anno, ast_util, qual_names

_FUNCTIONS = (gast.FunctionDef, gast.AsyncFunctionDef)


def _names(symbols):
    return {s for s in symbols if not qual_names.is_composite(s)}


def _deleted_by(node):
    """The names ``del`` statement ``node`` unbinds (``del a, (b, c)``; not ``del d[k]``, ``del o.a``)."""
    return {n.id for t in node.targets for n in ast_util.walk(t) if type(n) is gast.Name and type(n.ctx) is gast.Del}


def _deleted_in(statements):
    """The names a ``del`` anywhere in ``statements`` (this scope) unbinds."""
    return {n for s in ast_util.scope_statements(statements) if type(s) is gast.Delete for n in _deleted_by(s)}


def _block(statements, may, must):
    for statement in statements:
        may, must = _statement(statement, may, must)
    return may, must


def _statement(node, may, must):
    kind = type(node)
    defs = anno.get(node, anno.DEFS)
    anno.set(node, anno.MUST_DEFINED, must)
    if kind is gast.If:
        anno.set(node, anno.DEFINED_IN, may)
        may_b, must_b = _block(node.body, may | defs, must | defs)
        may_o, must_o = _block(node.orelse, may | defs, must | defs)
        return may_b | may_o, must_b & must_o
    if kind in (gast.While, gast.For, gast.AsyncFor):
        anno.set(node, anno.DEFINED_IN, may)
        entry = frozenset(may | _names(anno.get(node, anno.MODIFIED)))
        must = must - _deleted_in(node.body)  # a previous iteration may have deleted them
        _block(node.body, entry, must | defs if kind is not gast.While else must)
        return _block(node.orelse, entry, must)
    if kind in (gast.Try, getattr(gast, "TryStar", gast.Try)):
        anno.set(node, anno.DEFINED_IN, may)
        may_b, must_b = _block(node.body, may, must)
        may_out, must_out = _block(node.orelse, may_b, must_b)
        must_raised = must - _deleted_in(node.body)  # the body may raise after a del
        for handler in node.handlers:
            h_defs = anno.get(handler, anno.DEFS)
            may_h, must_h = _block(handler.body, may | may_b | h_defs, must_raised | h_defs)
            may_out, must_out = may_out | may_h, must_out & must_h
        return _block(node.finalbody, may_out, must_out)
    if kind in (gast.With, gast.AsyncWith):
        anno.set(node, anno.DEFINED_IN, may)
        return _block(node.body, may | defs, must | defs)
    if kind is gast.Match:
        anno.set(node, anno.DEFINED_IN, may)
        may_out = set(may)
        for case in node.cases:
            may_out |= _block(case.body, may | defs, must)[0]
        return frozenset(may_out), must - _deleted_in([c for case in node.cases for c in case.body])
    if kind in (gast.Return, gast.Raise):
        return frozenset(), must  # the path ends: nothing reaches the code after it
    if kind is gast.Delete:
        deleted = _deleted_by(node)
        return may - deleted, must - deleted
    if kind in _FUNCTIONS:
        analyze(node)
    return may | defs, must | defs


def analyze(node):
    """Annotates the function ``node`` (and the functions nested in it)."""
    scope = anno.get(node, anno.SCOPE)
    params = frozenset(scope.params)
    _block(node.body, params, params)
    return node
