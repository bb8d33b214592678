"""Tracebacks of a graph's failures end at the user's lines, not in the executor.

An op fails deep inside the executor: the interpreter's loop, a ``While``'s
rule, the loop of its body's plan, a kernel -- or a jit-compiled function.
None of those frames is the user's, and ``ag.function``'s boundary hides
them (``core/location.without_library_frames``).  What the user needs is
where the failing op came from: ``at_user_lines(error, op, caught)`` gives
``error`` a traceback of one frame per user line -- the ``If``/``While`` ops
the failure is nested in, outermost first, then the failing op -- named by
its op, each showing the source line as a frame of the user's file would::

    File "f.py", line 12, in <module>
      g(x, n)
    File "f.py", line 4, in While op 'while'
      while i < n:
    File "f.py", line 5, in Reshape op 'reshape'
      x = rt.reshape(x, (3, 2))
    autograph.runtime.errors.ExecutionError: Reshape op 'reshape' created at f.py:5 failed ...

Frames of the user's own code the kernel ran (a ``py_function``'s function)
follow them.  The kernel's exception stays the ``ExecutionError``'s
``__cause__``, with its own traceback; ``AUTOGRAPH_TRACEBACK_FILTERING=off``
leaves every traceback as it was raised.

A frame of a user line is made by running, compiled under the user's file
name, a ``raise`` placed on that line (as template engines map their
errors to template lines): the frame is real, so ``traceback``, pdb's
post-mortem and ``linecache`` treat it as any other.
"""

from __future__ import annotations

import functools
import linecache
import types

from autograph.runtime.core.location import traceback_filtering

_LINES = "__autograph_user_lines__"  # on an error: its ((file, line, op) ...), outermost first
_TAIL = "__autograph_tail__"  # on the user's own exception: its traceback as the kernel raised it


class _Marker(Exception):
    """Raised at a user line to make its frame."""


def at_user_lines(error: BaseException, op, caught: BaseException) -> None:
    """Gives ``error`` (``caught``, wrapped or noted for ``op``) the traceback of the user lines of
    ``op`` and of the ops ``caught`` came from, followed by the frames of the user's own code."""
    if not traceback_filtering():
        return
    inner = getattr(caught, _LINES, ())
    if inner:
        tail = getattr(caught, _TAIL, None)
    else:  # the kernel's exception: the user's own (kept, with its frames) or wrapped (its __cause__)
        tail = caught.__traceback__ if error is caught else None
    site = _site(op)
    lines = inner if site is None else (site, *inner)
    try:
        setattr(error, _LINES, lines)
        setattr(error, _TAIL, tail)
    except AttributeError:  # an exception taking no attributes: its traceback stays
        return
    tb = tail
    for filename, lineno, name in reversed(lines):
        tb = _frame(filename, lineno, name, tb)
    error.with_traceback(tb)


def cause_of(error: BaseException, caught: BaseException) -> BaseException:
    """The ``__cause__`` to raise ``error`` (an ``ExecutionError`` wrapping ``caught``) from: the
    kernel's exception, not the ``ExecutionError`` of an inner op (its message is in ``error``'s)."""
    original = getattr(error, "original", None)
    if original is None or not traceback_filtering():
        return caught
    return original


def _site(op):
    filename, _, line = (op.location or "").rpartition(":")
    if not filename or not line.isdigit() or int(line) < 1:
        return None
    return filename, int(line), f"{op.type} op '{op.name}'"


def _frame(filename, lineno, name, tb_next):
    """A traceback entry whose frame is at ``filename:lineno``, named ``name``, before ``tb_next``."""
    try:
        exec(_raising_code(filename, lineno, name), {"__marker": _Marker()})
    except _Marker as marker:
        made = marker.__traceback__.tb_next
    return types.TracebackType(tb_next, made.tb_frame, made.tb_lasti, made.tb_lineno)


@functools.lru_cache(maxsize=256)
def _raising_code(filename, lineno, name):
    """Code raising ``__marker`` on line ``lineno`` of ``filename``, at that line's indentation and
    spanning past it, so that a traceback underlines none of the user's line."""
    line = linecache.getline(filename, lineno)
    indent = line[: len(line) - len(line.lstrip())] if line.strip() and lineno > 1 else ""
    head = "\n" * (lineno - 2) + "if 1:\n" if indent else "\n" * (lineno - 1)
    source = f"{head}{indent}raise (\n{indent}__marker)\n"
    return compile(source, filename, "exec").replace(co_name=name)
