"""Identifiers of generated code: names from a graph in a namespace of their own.

The code generator (``codegen.py``) names every variable, bound global and
function it writes through one ``Namer``.  A name taken from a graph (an op
or graph name, maybe from a file) contributes only its ASCII letters, digits
and underscores, at most ``MAX_BASE`` of them, and is then made unique
among all names of the module.  Reserved -- and never produced for a graph
name -- are Python's keywords and soft keywords, every builtin (the code
uses ``Exception``, ``abs``, ...; ``__debug__`` cannot even be assigned),
every dunder name and the names the generator writes literally
(``RESERVED``); a base that would be one gets a trailing underscore
(``Exception`` -> ``Exception_``, ``__debug__`` -> ``__debug___``)::

    namer = Namer()
    namer.fresh("sum")        # 'sum_'  (a builtin)
    namer.fresh("x")          # 'x'
    namer.fresh("x")          # 'x_1'
    namer.fresh("x_1")        # 'x_1_1'

Uniquing is linear: each base keeps the next suffix to try, so 20,000
names sharing a long prefix (truncated to the same base) cost 20,000 steps,
not 20,000² / 2.
"""

from __future__ import annotations

import builtins
import keyword
import re

# Characters a graph name may contribute to an identifier.
_NOT_NAME = re.compile(r"[^0-9A-Za-z_]")
MAX_BASE = 48

# Written literally by the generator: the numpy module, the argument list, the exception
# variable of the error handler and its reporter.
GENERATOR_NAMES = frozenset({"np", "args", "e", "_fail"})

RESERVED = (
    frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))
    | {"_", "__builtins__"} | GENERATOR_NAMES  # ("_": a builtin in interactive sessions only)
)


def _reserved(name: str) -> bool:
    return name in RESERVED or (name.startswith("__") and name.endswith("__"))


class Namer:
    """The identifiers of one generated module, each given out once."""

    __slots__ = ("taken", "next_suffix")

    def __init__(self):
        self.taken: set[str] = set()
        self.next_suffix: dict[str, int] = {}

    def fresh(self, text: str) -> str:
        """A new identifier made from ``text``: never reserved, never given out before."""
        base = _NOT_NAME.sub("_", text)[:MAX_BASE] or "v"
        if base[0].isdigit():
            base = "v" + base
        if _reserved(base):
            base += "_"
        name = base
        suffix = self.next_suffix.get(base, 1)
        while name in self.taken:
            name = f"{base}_{suffix}"
            suffix += 1
        self.next_suffix[base] = suffix
        self.taken.add(name)
        return name
