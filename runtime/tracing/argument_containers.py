"""List and dict arguments of a trace: values, whose changes the caller would not see.

A traced function gets its list and dict arguments as rebuilt copies (their
arrays become the graph's inputs: ``signature.rebuild``), so a change the
trace makes to one would not reach the caller's, where Python's would.
``argument_containers`` records them before the trace, ``traced_arguments``
names them while it runs (``argument_path``: a tensor loop staging one
refuses, ``operators/aliases.py``), and ``refuse_changed_arguments`` refuses
a trace that changed one.
"""

from __future__ import annotations

import collections

from autograph.runtime.core.scoped import ScopedMap
from autograph.runtime.errors import TracingError


def argument_containers(traced_values) -> list:
    """``(path, container, copy of its contents)`` of the lists and dicts in the traced arguments
    (``{name: value}``, each a rebuilt copy of the caller's: ``signature.rebuild``)."""
    found = []
    todo = list(traced_values.items())
    while todo:
        path, value = todo.pop()
        if isinstance(value, list):
            found.append((path, value, list(value)))
            todo.extend((f"{path}[{i}]", v) for i, v in enumerate(value))
        elif isinstance(value, dict):
            found.append((path, value, dict(value)))
            todo.extend((f"{path}[{k!r}]", v) for k, v in value.items())
        elif isinstance(value, tuple):
            todo.extend((f"{path}[{i}]", v) for i, v in enumerate(value))
    return found


_PATHS = ScopedMap()  # id(container) -> path, of the list and dict arguments of the traces running


def traced_arguments(containers):
    """``with traced_arguments(containers):`` while a trace runs on them (``argument_containers``):
    ``argument_path`` names them (a tensor loop staging one refuses: ``operators/aliases.py``)."""
    return _PATHS.extended({id(container): path for path, container, _ in containers})


def argument_path(container):
    """The path of ``container`` if it is a list or dict argument of a trace running, else None."""
    return _PATHS.get(id(container))


def refuse_changed_arguments(containers, label) -> None:
    """A ``TracingError`` if the trace changed a list or dict argument (``argument_containers``):
    the graph gets copies of them, so a call would leave the caller's unchanged, where Python
    changes them."""
    for path, container, before in containers:
        if isinstance(container, dict):  # (keys a defaultdict adds when read are let pass: a read, not a change)
            added = container.keys() - before.keys() if not isinstance(container, collections.defaultdict) else ()
            changed = added or before.keys() - container.keys() or any(container[k] is not v for k, v in before.items())
        else:
            changed = len(container) != len(before) or any(a is not b for a, b in zip(container, before))
        if changed:
            kind = "dict" if isinstance(container, dict) else "list"
            raise TracingError(
                f"{label} changed its {kind} argument '{path}' while it was traced (an item set, added or "
                f"removed): a traced function gets its list and dict arguments as values (their arrays become "
                f"the graph's inputs), so a call would leave the caller's {kind} unchanged, where Python changes "
                f"it. Return the new {kind} and assign it where you call the function, or keep the state in an "
                "attribute of an object (written back after each call)."
            )

