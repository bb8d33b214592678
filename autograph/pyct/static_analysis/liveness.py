"""Liveness analysis: which names may be read before being written, at each point.

A backward "may" analysis over the structured statements of one function
(after the jump converters ran there is no ``break``/``continue``, and
``return`` only ends the function).  Annotates compound statements with
``LIVE_IN``/``LIVE_OUT``, and ``If``/``While``/``For`` with
``BODY_LIVE_IN`` (``If`` also ``ORELSE_LIVE_IN``); see ``anno``.

The scope's captured, ``global`` and ``nonlocal`` names are live
everywhere (they can be read by code we do not see); inside a ``try`` the
names its handlers read are live everywhere in the body (any statement may
raise).  Loops iterate to a fixed point.  Requires ``activity``.
"""

from __future__ import annotations

import gast

from autograph.pyct import anno

_FUNCTIONS = (gast.FunctionDef, gast.AsyncFunctionDef)


def _block(statements, live, floor):
    for statement in reversed(statements):
        live = _statement(statement, live, floor)
    return live


def _statement(node, live_out, floor):
    kind = type(node)
    uses = anno.get(node, anno.USES)
    defs = anno.get(node, anno.DEFS)
    if kind is gast.If:
        body = _block(node.body, live_out, floor)
        orelse = _block(node.orelse, live_out, floor)
        live_in = ((body | orelse) - defs) | uses | floor  # defs: what a walrus in the test binds
        anno.set(node, anno.BODY_LIVE_IN, body)
        anno.set(node, anno.ORELSE_LIVE_IN, orelse)
    elif kind is gast.While:
        exit_ = _block(node.orelse, live_out, floor) if node.orelse else live_out
        head = exit_ | uses | floor
        while True:
            body = _block(node.body, head, floor)
            new_head = head | body
            if new_head == head:
                break
            head = new_head
        live_in = head
        anno.set(node, anno.BODY_LIVE_IN, body)
    elif kind in (gast.For, gast.AsyncFor):
        exit_ = _block(node.orelse, live_out, floor) if node.orelse else live_out
        head = exit_ | floor | uses  # the extra loop test runs at the head
        while True:
            body = _block(node.body, head, floor)
            new_head = head | (body - defs) | floor
            if new_head == head:
                break
            head = new_head
        live_in = head | uses
        anno.set(node, anno.BODY_LIVE_IN, body)
    elif kind in (gast.Try, getattr(gast, "TryStar", gast.Try)):
        after = _block(node.finalbody, live_out, floor) if node.finalbody else live_out
        handlers = set()
        for handler in node.handlers:
            handler_live = _block(handler.body, after, floor)
            handlers |= (handler_live - anno.get(handler, anno.DEFS)) | anno.get(handler, anno.USES)
        inner_floor = floor | handlers | (after if node.finalbody else frozenset())
        orelse = _block(node.orelse, after, floor)
        live_in = _block(node.body, orelse, inner_floor) | handlers | floor
    elif kind in (gast.With, gast.AsyncWith):
        live_in = (_block(node.body, live_out, floor) - defs) | uses | floor
    elif kind is gast.Match:
        live_in = set(live_out)
        for case in node.cases:
            live_in |= _block(case.body, live_out, floor)
        live_in = (live_in - defs) | live_out | uses | floor
    elif kind in (gast.Return, gast.Raise):
        return frozenset(uses | floor)
    else:
        if kind in _FUNCTIONS:
            analyze(node)
        return frozenset((live_out - defs) | uses | floor)
    live_in = frozenset(live_in)
    anno.set(node, anno.LIVE_IN, live_in)
    anno.set(node, anno.LIVE_OUT, frozenset(live_out))
    return live_in


def analyze(node):
    """Annotates the function ``node`` (and the functions nested in it)."""
    scope = anno.get(node, anno.SCOPE)
    floor = frozenset(scope.always_live)
    _block(node.body, floor, floor)
    return node
