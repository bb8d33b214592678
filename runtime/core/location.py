"""Where the user is: the innermost frame outside autograph's own code.

Every message, warning and op location that names the user's ``file:line``
comes from here.
"""

from __future__ import annotations

import linecache
import os
import sys
import types
import warnings

import numpy

from autograph.runtime import errors


def _own_dirs() -> tuple[str, ...]:
    """The directories of autograph's own packages: frames there are not the user's."""
    import importlib.util

    dirs = []
    for name in ("autograph", "autograph.runtime", "autograph.converters"):
        spec = importlib.util.find_spec(name)
        for path in spec.submodule_search_locations or ():
            dirs.append(os.path.abspath(path) + os.sep)
    return tuple(dirs)


_OWN_DIRS: tuple[str, ...] = ()


_IS_USER_FILE: dict[str, bool] = {}  # co_filename -> whether frames there are the user's (memoized)


def is_user_file(filename: str) -> bool:
    """True if frames in ``filename`` are the user's: not autograph's own, nor frozen or jit code."""
    global _OWN_DIRS
    found = _IS_USER_FILE.get(filename)
    if found is None:
        if not _OWN_DIRS:
            _OWN_DIRS = _own_dirs()
        if filename.startswith("<"):  # "<stdin>", "<string>"; not "<frozen ...>", nor jit code ("<autograph-jit ...>")
            found = not filename.startswith(("<frozen", "<autograph-"))
        else:
            found = not os.path.abspath(filename).startswith(_OWN_DIRS)
        _IS_USER_FILE[filename] = found
    return found


# Libraries whose frames are the user's in a traceback, but never the line a message names: a numpy
# function calling a tensor's method (``np.asarray``, fancy indexing) is not where the user wrote it.
_LIBRARY_DIRS: list[str] = [os.path.dirname(os.path.abspath(numpy.__file__)) + os.sep]
_IS_USER_LINE: dict[str, bool] = {}  # co_filename -> whether a frame there is the line to name (memoized)


def register_library_dirs(dirs) -> None:
    """Adds directories whose frames messages look past (JAX's, once it is loaded)."""
    _LIBRARY_DIRS.extend(d for d in dirs if d not in _LIBRARY_DIRS)
    _IS_USER_LINE.clear()


def is_user_line(filename: str) -> bool:
    """True if a frame in ``filename`` is the user's line for a message: the user's, not a library's."""
    found = _IS_USER_LINE.get(filename)
    if found is None:
        found = _IS_USER_LINE[filename] = is_user_file(filename) and not filename.startswith(tuple(_LIBRARY_DIRS))
    return found


def traceback_filtering() -> bool:
    """Whether tracebacks show the user's frames only: unless ``AUTOGRAPH_TRACEBACK_FILTERING`` is
    ``off`` (``0``, ``false``, ``no``) in the environment."""
    return os.environ.get("AUTOGRAPH_TRACEBACK_FILTERING", "").lower() not in ("off", "0", "false", "no")


def without_library_frames(error: BaseException) -> BaseException:
    """``error`` with autograph's own frames taken out of its traceback (the user's stay).

    Called where an error leaves the library (``ag.function`` calls), as
    TensorFlow and JAX do.  ``AUTOGRAPH_TRACEBACK_FILTERING=off`` in the
    environment keeps every frame.
    """
    if not traceback_filtering():
        return error
    kept, dropped = [], 0
    tb = error.__traceback__
    while tb is not None:
        if is_user_file(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        else:
            dropped += 1
        tb = tb.tb_next
    if not dropped or not kept:
        return error
    rebuilt = None
    for tb in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    note = (f"(autograph hid {dropped} of its own frames from this traceback; set "
            "AUTOGRAPH_TRACEBACK_FILTERING=off to see them)")
    if hasattr(error, "add_note") and note not in getattr(error, "__notes__", ()):
        error.add_note(note)
    return error.with_traceback(rebuilt)


_converted_check = None  # code object -> whether autograph generated it (operators/calls.py registers it)


def register_converted_check(check) -> None:
    """Tells this module how to recognize converted code (``check(code) -> bool``); called once, by
    the layer that converts (a registration: this module imports nothing above it)."""
    global _converted_check
    _converted_check = check


def in_converted_code(depth: int = 1) -> bool:
    """True if the innermost calling frame outside autograph's own code is converted code: what it
    does to a tensor there is a construct autograph leaves to Python (``x in (1, 2)``), not code
    it was never asked to convert."""
    frame = sys._getframe(depth)
    while frame is not None and not is_user_line(frame.f_code.co_filename):
        frame = frame.f_back
    return frame is not None and _converted_check is not None and _converted_check(frame.f_code)


def user_frame(depth: int = 1) -> tuple[str, int] | None:
    """(file, line) of the innermost calling frame outside autograph's own code and the libraries
    (``is_user_line``), if any."""
    frame = sys._getframe(depth)
    known = _IS_USER_LINE
    while frame is not None:
        filename = frame.f_code.co_filename
        if known.get(filename) or (filename not in known and is_user_line(filename)):  # the lookup inlined: hot
            return filename, frame.f_lineno
        frame = frame.f_back
    return None


# co_filename -> the warnings registry of that file, as a module's ``__warningregistry__``: the
# ``default`` filter action then shows a message once per user line (``always`` shows every one)
_WARNING_REGISTRIES: dict[str, dict] = {}


def warn_at_user(message: str, category) -> None:
    """Warns at the user's ``file:line`` (the innermost frame outside autograph), not ours; once
    per line under the default filters."""
    filename, lineno = user_frame(2) or ("<unknown>", 0)
    warn_at(message, category, filename, lineno)


def warn_at(message: str, category, filename: str, lineno: int) -> None:
    """Warns at ``filename:lineno`` (a user line known from elsewhere: an op's), once per line
    under the default filters."""
    registry = _WARNING_REGISTRIES.setdefault(filename, {})
    warnings.warn_explicit(message, category, filename, lineno, registry=registry)


def user_location(depth: int = 1) -> str | None:
    """``file:line`` of the innermost calling frame outside autograph's own code, if any."""
    found = user_frame(depth + 1)
    return errors.at(*found) if found is not None else None


def construct_at(construct: str) -> str:
    """``"the for loop at f.py:3"``: a construct and the user's line, for messages."""
    return f"{construct} at {user_location_text()}"


def quoted_user_line() -> str:
    """The user's current line of code in backticks (``"`return max(a, 3)`"``), or "" if unknown."""
    found = user_frame(2)
    text = linecache.getline(*found).strip() if found is not None else ""
    return f"`{text}`" if text else ""


def source_at(location: str | None) -> str:
    """The stripped source text at ``location`` (``"file:line"``, as ops record it), or ""."""
    filename, _, line = (location or "").rpartition(":")
    return linecache.getline(filename, int(line)).strip() if line.isdigit() else ""


def user_location_text() -> str:
    """``user_location()`` for messages: ``<unknown>`` when no frame is the user's."""
    return user_location() or "<unknown>"
