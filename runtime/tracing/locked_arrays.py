"""Numpy arrays traced code must not change in place: read-only while that code is traced.

numpy changes an array in place with ``a[i] = v``, ``a += v``, ``a.fill(0)``
or ``np.add(x, y, out=a)``.  Traced code runs once, so such a change to an
array that existed before is wrong in two places:

* a trace (``trace.py``) of a function changing an array it reaches from
  outside (a global, its closure, an attribute of its instance or of an
  argument: ``escapes.values_before`` finds them): numpy changes it at every
  call, the graph once, while tracing;
* the body of a tensor ``if`` or loop (``operators/outside_writes.py``)
  changing an array made before the statement: the body's Python code runs
  once per traced body, on every path, where numpy changes the array only
  on the path taken.

``locked(arrays, describe)`` makes those arrays read-only while the code
runs, so that numpy raises at the change, and turns numpy's error (when it
locked some array: else the error is Python's own) into a ``TracingError`` (``describe(paths, line)`` says what was changed, where, and
how to write it instead); each array is writeable again afterwards.  An item
store through a name (``buf[i] = v``, which the converter lowers to
``aug_setitem``) into a locked array goes through the graph instead
(``is_locked``): the name becomes a tensor, as in a tensor loop.

The flags are the arrays' own: another thread writing into one of them while
it is locked gets numpy's read-only error.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core.location import is_user_line
from autograph.runtime.errors import TracingError

_locked: dict[int, int] = {}  # id(array) -> how many lockings hold it now


def arrays_in(pairs) -> list:
    """``(path, array)`` of the numpy arrays among ``(path, value)`` pairs, each once."""
    found, seen = [], set()
    for path, value in pairs:
        if type(value) is np.ndarray and id(value) not in seen:
            seen.add(id(value))
            found.append((path, value))
    return found


def is_locked(array) -> bool:
    return id(array) in _locked


class locked:  # noqa: N801 - used as a function: ``with locked(arrays, describe):``
    """Runs the block with ``arrays`` (``(path, array)`` pairs) read-only; numpy's error at a change
    to one of them becomes ``TracingError(describe(paths, 'file:line'))``.  An array read-only of its
    own (not by a locking) is left out: a change to it is Python's error too."""

    __slots__ = ("arrays", "describe", "held", "counted")

    def __init__(self, arrays, describe):
        self.arrays, self.describe, self.held, self.counted = arrays, describe, [], []

    def __enter__(self):
        for path, array in self.arrays:
            if array.flags.writeable:
                array.flags.writeable = False
                self.held.append(array)
            elif id(array) not in _locked:
                continue
            self.counted.append((path, array))
            _locked[id(array)] = _locked.get(id(array), 0) + 1

    def __exit__(self, kind, error, traceback):
        for array in self.held:
            array.flags.writeable = True
        for _, array in self.counted:
            count = _locked.pop(id(array)) - 1
            if count:
                _locked[id(array)] = count
        if kind is ValueError and self.counted and "read-only" in str(error):
            counted = self.counted
            paths = ", ".join(f"'{path}'" for path, _ in counted[:4]) + (", ..." if len(counted) > 4 else "")
            raise TracingError(self.describe(paths, _user_line(error))).with_traceback(traceback) from None
        return False


def from_outside(label):
    """The message of a trace of ``label`` changing an array it reaches from outside."""
    return lambda paths, line: (
        f"{line}: {label} changes in place a numpy array it reaches from outside ({paths}), which numpy "
        "does at every call but the graph only once, while tracing: every later call would start from the "
        "changed array. Keep such state in an rt.Variable, or pass the array in and return the new one "
        "(`w = w.copy(); w[0] += 1; return w`)."
    )


def in_body(where):
    """The message of a body of the statement ``where`` changing an array made before it."""
    construct = where.split(" at ")[0].split()[-1]
    return lambda paths, line: (
        f"{line}: the body of {where} changes in place a numpy array made before it ({paths}): that runs "
        "once, while tracing, on every path, where numpy changes the array only on the path taken (and at "
        "every iteration). Store into it through its own name (`buf[i] = v` makes `buf` a tensor; under "
        "JAX make it a jnp array first), write `buf = buf * 2` for `buf *= 2`, or build a new array; a "
        f"method changing it in place (fill, sort, out=) runs once in a tensor {construct}."
    )


def _user_line(error) -> str:
    """``file:line`` of the innermost frame of the user's code in ``error``'s traceback."""
    found = "<unknown>"
    tb = error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if is_user_line(code.co_filename):
            found = f"{code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found
