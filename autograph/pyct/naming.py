"""Fresh names for generated symbols, never colliding with the user's names.

``Namer(used).new('if_body')`` returns ``if_body`` the first time, then
``if_body_1``, ``if_body_2``... (``retval_``, then ``retval_1``); a name the
user's code mentions anywhere in the function is skipped.
"""

from __future__ import annotations

import gast

from autograph.pyct import ast_util


def add_names(node, found: set) -> None:
    """Adds the identifiers ``node`` itself mentions to ``found`` (for walks that do more)."""
    kind = type(node)
    if kind is gast.Name:
        found.add(node.id)
    elif kind is gast.Attribute:
        found.add(node.attr)
    elif kind in (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef):
        found.add(node.name)
    elif kind is gast.alias:
        found.add((node.asname or node.name).partition(".")[0])
    elif kind in (gast.Global, gast.Nonlocal):
        found.update(node.names)


class Namer:
    """Hands out names not in ``used`` (and not handed out before)."""

    __slots__ = ("used",)

    def __init__(self, used):
        self.used = set(used)

    def new(self, base: str) -> str:
        name = base
        counter = 0
        separator = "" if base.endswith("_") else "_"
        while name in self.used:
            counter += 1
            name = f"{base}{separator}{counter}"
        self.used.add(name)
        return name
