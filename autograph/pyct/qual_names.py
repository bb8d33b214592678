"""Qualified names: the symbol a ``Name``, ``Attribute`` or ``Subscript`` node
denotes, spelled as in the source (``qn_of``, computed where an analysis
needs it: ``activity`` asks for the targets and containers it records).

``x`` -> ``'x'``; ``self.total`` -> ``'self.total'``; ``a.b[i]`` ->
``'a.b[i]'``; ``a[0]`` -> ``'a[0]'``.  Only chains rooted at a name, with
subscripts by a name or a constant, get one (``f().x`` and ``a[i + 1]`` do
not: they denote no stable symbol).

``root(qn)`` is the variable a qualified name starts from; ``is_composite``
tells ``a.b``/``a[i]`` from a plain ``a``.
"""

from __future__ import annotations

import gast


def root(qn: str) -> str:
    for index, char in enumerate(qn):
        if char in ".[":
            return qn[:index]
    return qn


def is_composite(qn: str) -> bool:
    return "." in qn or "[" in qn


def _subscript_key(node):
    kind = type(node)
    if kind is gast.Name:
        return node.id
    if kind is gast.Constant and isinstance(node.value, (int, str)) and not isinstance(node.value, bool):
        return repr(node.value)
    return None


def qn_of(node):
    """The qualified name of an expression node, or None."""
    kind = type(node)
    if kind is gast.Name:
        qn = node.id
    elif kind is gast.Attribute:
        parent = qn_of(node.value)
        qn = None if parent is None else f"{parent}.{node.attr}"
    elif kind is gast.Subscript:
        parent = qn_of(node.value)
        key = _subscript_key(node.slice)
        qn = None if parent is None or key is None else f"{parent}[{key}]"
    else:
        return None
    return qn
