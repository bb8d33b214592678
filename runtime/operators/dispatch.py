"""The overloads of the operators: which handler runs a construct for a value that is not plain Python.

Every operator generated code calls (``if_stmt``, ``while_stmt``,
``for_stmt``, ``if_exp``, ``and_``/``or_``/``not_``, ``assert_``, the list and item
operators, the builtins) runs plain Python control flow for plain Python
values.  For any other value it asks this registry: an *overload* is one
``detect`` function and one ``handler`` per operator and backend.  The
numpy runtime's symbolic ``Tensor`` is one registered backend (its handlers
trace sub-graphs and emit ``If``/``While``); JAX tracers are another (their
handlers call ``lax.cond``/``lax.while_loop``).  Nothing is monkey-patched.

Contract:

* ``register(operator, detect, handler, backend=...)``: ``detect(value)``
  answers for the value the operator decides on (the condition of
  ``if_stmt``/``if_exp``/``assert_``, the first evaluated ``test()`` of
  ``while_stmt``, the iterable of ``for_stmt``, the first operand of
  ``and_``/``or_``/``not_``, the receiver of a list operator, each argument
  of a builtin).  ``handler`` takes exactly the operator's own arguments
  (``while_stmt``'s handler continues the loop from the current state and
  calls ``test`` again).
* ``detect`` must depend only on the value's type: the answer is cached per
  type, so dispatch costs one dictionary lookup.
* The first backend registered for an operator whose ``detect`` accepts the
  value wins; a backend registers each operator once (registering again
  replaces its handler).

Example -- a backend whose values are ``MyTracer``s::

    dispatch.register("if_stmt", lambda v: isinstance(v, MyTracer), my_if, backend="mine")

The numpy runtime's handlers are registered by the modules of their
constructs when ``autograph.runtime.operators`` is imported:
``if_statements.staged_if_stmt``, ``loop_statements.staged_while_stmt`` /
``staged_for_stmt``, ``logical.staged_if_exp`` / ``staged_and`` /
``staged_or`` / ``staged_not``, ``exceptions.staged_assert``,
``data_structures.staged_append`` / ``staged_extend`` / ``staged_pop`` /
``staged_setitem`` (``aug_setitem``) / ``staged_del_item`` (``del_item``), and
the builtins' (operator names ``"range"``, ``"len"``, ``"max"``, ...:
``py_builtins``).  ``unregister(operator, backend)`` removes an overload.
"""

from __future__ import annotations

from typing import Any, Callable

# operator name -> [(backend, detect, handler)], in registration order.
_OVERLOADS: dict[str, list[tuple[str, Callable[[Any], bool], Callable]]] = {}
# operator name -> {type -> handler or None}: what the detects answered for that type.
_BY_TYPE: dict[str, dict[type, Callable | None]] = {}


def register(operator: str, detect: Callable[[Any], bool], handler: Callable, *, backend: str) -> None:
    """Makes ``handler`` run ``operator`` for the values ``detect`` accepts (see the module docstring)."""
    overloads = _OVERLOADS.setdefault(operator, [])
    for index, (name, _, _) in enumerate(overloads):
        if name == backend:
            overloads[index] = (backend, detect, handler)
            break
    else:
        overloads.append((backend, detect, handler))
    _BY_TYPE.clear()


def register_all(overloads: dict[str, tuple[Callable[[Any], bool], Callable]], *, backend: str) -> None:
    """``register`` of each ``operator: (detect, handler)`` of ``overloads``: a backend's table."""
    for operator, (detect, handler) in overloads.items():
        register(operator, detect, handler, backend=backend)


def unregister(operator: str, backend: str) -> None:
    """Removes ``backend``'s overload of ``operator`` (a ``KeyError`` if it has none): for tests
    and for a backend that is unloaded."""
    overloads = _OVERLOADS.get(operator, [])
    for index, (name, _, _) in enumerate(overloads):
        if name == backend:
            del overloads[index]
            _BY_TYPE.clear()
            return
    raise KeyError(f"the backend {backend!r} has no overload of {operator!r}")


def handler_for(operator: str, value) -> Callable | None:
    """The handler registered for ``operator`` that accepts ``value``, or ``None`` (plain Python)."""
    try:
        return _BY_TYPE[operator][type(value)]
    except KeyError:
        pass
    found = None
    for _, detect, handler in _OVERLOADS.get(operator, ()):
        if detect(value):
            found = handler
            break
    _BY_TYPE.setdefault(operator, {})[type(value)] = found
    return found


def handler_for_any(operator: str, values) -> Callable | None:
    """The handler for the first of ``values`` some overload of ``operator`` accepts (builtins' arguments)."""
    for value in values:
        handler = handler_for(operator, value)
        if handler is not None:
            return handler
    return None


def backends(operator: str) -> tuple[str, ...]:
    """The backends that registered an overload of ``operator``, in order."""
    return tuple(name for name, _, _ in _OVERLOADS.get(operator, ()))
