"""Functions copying one node class field by field, made from a source template.

The tree walks every conversion runs on every node (``gast_conversion``'s
two directions, ``templates``' cloning) are written once as a template and
specialized per node class on first sight: the class's fields unrolled, no
table lookup or loop over fields per node.

    copier("node", body, _new=..., _target=...)

is the function

    def copy(node):
        old = node.__dict__
        new = _new(_target)
        d = new.__dict__
        <body: lines filling d from old>
        return new

with the keyword arguments as its globals.

Compiling one takes about 0.2 ms, and a first conversion makes some forty:
the code objects are kept, keyed by their source, in one marshal file in
this package's ``__pycache__`` (per interpreter, as ``.pyc`` files are;
written at exit when new ones were compiled, never when Python writes no
bytecode), so a later process only loads them.
"""

from __future__ import annotations

import atexit
import marshal
import os
import sys

_CACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__",
                      f"node_copiers.{sys.implementation.cache_tag}.marshal")
_HEADER = (sys.version, marshal.version)
_codes: dict = {}  # source -> code object; loaded on first use
_state = {"loaded": False, "compiled": False}

_SKELETON = """
def copy({parameters}):
    old = node.__dict__
    new = _new(_target)
    d = new.__dict__
{body}    return new
"""


def copier(parameters: str, body: str, **namespace):
    """The copying function with these ``parameters`` (``node`` among them) and ``body`` (lines
    indented four spaces, filling ``d`` from ``old``); ``namespace``: its globals."""
    exec(_code(_SKELETON.format(parameters=parameters, body=body)), namespace)  # noqa: S102 - our own template
    return namespace["copy"]


def _code(source: str):
    """``source`` compiled, from the cache when a process compiled it before."""
    if not _state["loaded"]:
        _state["loaded"] = True
        _codes.update(_load())
    code = _codes.get(source)
    if code is None:
        code = _codes[source] = compile(source, "<node copier>", "exec")
        if not _state["compiled"]:
            _state["compiled"] = True
            atexit.register(_save)
    return code


def _load() -> dict:
    try:
        with open(_CACHE, "rb") as f:
            header, codes = marshal.load(f)
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    return codes if header == _HEADER and type(codes) is dict else {}


def _save() -> None:
    """Writes the cache (atomically: another process may write it too); nothing when Python writes
    no bytecode (``PYTHONDONTWRITEBYTECODE``, ``-B``) or the folder is read-only."""
    if sys.dont_write_bytecode:
        return
    partial = f"{_CACHE}.{os.getpid()}"
    try:
        os.makedirs(os.path.dirname(_CACHE), exist_ok=True)
        with open(partial, "wb") as f:
            marshal.dump((_HEADER, _codes), f)
        os.replace(partial, _CACHE)
    except OSError:
        pass
