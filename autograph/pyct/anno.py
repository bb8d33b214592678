"""Annotations: facts the analysis passes attach to AST nodes, under documented keys.

Analyses write them; converters only read them (they never re-derive a
fact).  Each key is a string constant below; values live in one dict per
node (attribute ``_ag_anno``), which ``gast``/``ast`` conversion ignores.

Keys
----
``SCOPE``          (FunctionDef, Lambda) a ``activity.Scope``: parameters,
                   bound names, ``global``/``nonlocal`` declarations, and
                   the names nested scopes capture; set by ``activity``.
``USES``/``DEFS``  (every statement) the names the statement itself reads /
                   binds, not counting its nested blocks (for ``if``/
                   ``while``: the test; for ``for``: the iterable / the
                   target); set by ``activity``.
``MODIFIED``       (If, While, For) the names and attribute qualified names
                   bound anywhere in the statement's blocks, as a
                   ``frozenset`` of qualified names (``qual_names``); set by ``activity``.
``LIVE_IN``        (compound statements) names that may be read before being
                   written from the statement's entry on; set by ``liveness``.
``LIVE_OUT``       (compound statements) names live right after it.
``BODY_LIVE_IN``   (If, While, For) names live at the entry of ``body``;
                   ``ORELSE_LIVE_IN`` likewise for ``If.orelse``.
``DEFINED_IN``     (compound statements) names that may be bound on entry
                   (reaching definitions, a "may" analysis); set by
                   ``reaching_definitions``.
``MUST_DEFINED``   (every statement) names bound on every path reaching
                   the statement; set by ``reaching_definitions``.
``RETURN_VALUE``   (Assign) True on the ``retval_ = value`` a lowered
                   ``return`` became; set by ``return_statements``.
``EXTRA_LOOP_TEST`` (For) an expression that must stay true for the loop to
                   run another iteration (lowered ``break``/``return``
                   flags); set by the jump converters, read by
                   ``control_flow``.
``IN_PLACE``       (Lambda) a closure a converter made for a lazy operand
                   (``ag__.and_(a, lambda: b)``), called at once by the
                   operator if at all: analyses read it as an expression
                   evaluated where it stands, not as a nested scope.
``GENERATED``      (any statement) True on statements a converter created,
                   e.g. jump flags, so later passes can tell them apart.
"""

from __future__ import annotations

SCOPE = "scope"
USES = "uses"
DEFS = "defs"
MODIFIED = "modified"
LIVE_IN = "live_in"
LIVE_OUT = "live_out"
BODY_LIVE_IN = "body_live_in"
ORELSE_LIVE_IN = "orelse_live_in"
DEFINED_IN = "defined_in"
MUST_DEFINED = "must_defined"
RETURN_VALUE = "return_value"
EXTRA_LOOP_TEST = "extra_loop_test"
GENERATED = "generated"
IN_PLACE = "in_place"

_MISSING = object()


def get(node, key, default=_MISSING):
    """The annotation ``key`` of ``node`` (``default`` if absent, else KeyError)."""
    annotations = node.__dict__.get("_ag_anno")
    if annotations is not None and key in annotations:
        return annotations[key]
    if default is _MISSING:
        raise KeyError(f"node {type(node).__name__} has no annotation {key!r}")
    return default


def has(node, key) -> bool:
    annotations = node.__dict__.get("_ag_anno")
    return annotations is not None and key in annotations


def set(node, key, value):  # noqa: A001 - mirrors get
    annotations = node.__dict__.get("_ag_anno")
    if annotations is None:
        annotations = node._ag_anno = {}
    annotations[key] = value


def clear(node):
    """Removes all of ``node``'s annotations."""
    node.__dict__.pop("_ag_anno", None)


def copy(src, dst, key):
    """Copies annotation ``key`` from ``src`` to ``dst`` if ``src`` has it."""
    if has(src, key):
        set(dst, key, get(src, key))
