"""numpy's floating-point warnings of a graph's kernels, at the user's ``file:line``.

numpy warns (``overflow encountered in scalar add``) at the innermost
Python frame calling the ufunc: inside a graph that is the interpreter's
loop, never the user's line, and since every op runs from that one line,
Python's once-per-line warning filter shows one overflow for all of them.
A counter that starts as a Python number takes its partner's dtype
(README, "weak typing"), so ``i = 0 ... i += 100`` next to an ``int8`` wraps
where Python's ``int`` would not, and the warning is how the user learns
it.  ``naming_user_lines(run, graph)`` runs such a graph with numpy told to
call back, for each kind the caller's ``np.seterr`` sets to ``"warn"``,
instead of warning; the callback warns ``RuntimeWarning`` naming the op, at
the line that made it (the running op is found in the interpreter's frame,
or from the line of jit-compiled code, ``GENERATED``).
Other settings (``"raise"``, ``"ignore"``) stay the caller's own.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

from autograph.runtime.core.location import warn_at
from autograph.runtime.exec import interpreter

try:  # numpy's own error state (``np.errstate`` sets it); one lookup per run instead of an errstate
    from numpy._core._ufunc_config import _extobj_contextvar as _ERRSTATE
except ImportError:  # pragma: no cover - another numpy layout: errstate per run
    _ERRSTATE = None

# the file name of jit-compiled code -> {its line: the op it computes} (``backends/numpy/compiled.py``)
GENERATED: dict = {}
_last = (None, None)  # (the caller's error state last seen, the same state calling back instead of warning)


def naming_user_lines(run, graph):
    """``run`` (a run of ``graph``'s plan), warning at the user's lines if ``graph`` counts with
    weakly typed integer scalars (a loop's counter); ``run`` itself otherwise."""
    if not _counts_weakly(graph):
        return run

    def run_naming_lines(args):
        if _ERRSTATE is None:  # pragma: no cover
            with np.errstate(call=_warn, **_calling()):
                return run(args)
        token = _ERRSTATE.set(_state_for(_ERRSTATE.get()))
        try:
            return run(args)
        finally:
            _ERRSTATE.reset(token)

    run_naming_lines.__wrapped__ = run  # inspect.unwrap gives the plan's own run
    return run_naming_lines


def _counts_weakly(graph) -> bool:
    graphs = [graph, *graph.library.values()]
    return any(
        t.weak and t.shape == () and t.dtype.kind in "iu"
        for g in graphs for op in g.operations if op.type not in ("Const", "Placeholder") for t in op.outputs
    )


def _calling() -> dict:
    return {kind: "call" for kind, mode in np.geterr().items() if mode == "warn"}


def _state_for(state):
    global _last
    last = _last
    if last[0] is not state:
        with np.errstate(call=_warn, **_calling()):
            last = _last = (state, _ERRSTATE.get())
    return last[1]


def _warn(kind: str, flag: int) -> None:
    """numpy's callback: ``kind`` ("overflow", "divide by zero", ...) met by the running op."""
    op = _running_op(sys._getframe(1))
    filename, _, line = (op.location or "").rpartition(":") if op is not None else ("", "", "")
    if not filename or not line.isdigit():
        warnings.warn(f"{kind} encountered while running a graph", RuntimeWarning, stacklevel=2)
        return
    warn_at(f"{kind} encountered in {op.type} op '{op.name}' of graph '{op.graph.name}'", RuntimeWarning,
            filename, int(line))


def _running_op(frame):
    """The op the innermost interpreter loop (``interpreter.run``) or jit-compiled line above
    ``frame`` is running (for a compiled line of several ops, the op running that code)."""
    code = interpreter.run.__code__
    while frame is not None:
        if frame.f_code is code:
            return frame.f_locals.get("op")
        line_ops = GENERATED.get(frame.f_code.co_filename)
        if line_ops is not None and frame.f_lineno in line_ops:
            return line_ops[frame.f_lineno]
        # (a line of no single op -- a hot loop's update of its variables, compiled by tiering --
        # is the loop's: the op of the interpreter running that code, further out)
        frame = frame.f_back
    return None
