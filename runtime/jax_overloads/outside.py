"""Python state outside the function that converted code under JAX changes: refused, never
left silently wrong.

While ``lax.cond``/``while_loop``/``scan`` trace a body, its Python code
runs once, whatever the traced values.  Two kinds of change would then be
wrong without a word:

* a change the converter cannot see, made by something the body calls (a
  method ``c.bump()`` doing ``self.n += 1``, a helper setting ``d[k]``,
  ``setattr``, ``s.add(1)``): it would happen once, while tracing, on a
  branch that may not be taken.  ``watched`` runs each body under the numpy
  runtime's ``outside_writes.Snapshot``, which finds it and undoes it; an
  attribute or item then joins the statement's state and the statement is
  traced again (``outside_writes.as_state``, as in the numpy runtime); a
  set or deque is refused;
* a traced value so assigned to an attribute or item of an object a module
  global holds (``COUNTER.n``): the object would keep JAX's tracer after
  the jitted function returns.  ``refuse_leaks`` looks, when the outermost
  converted function returns, through the globals its code names (two
  levels of attributes and items), puts back and refuses a tracer found
  there that was not there before.

Objects the function creates or is passed may hold traced values: JAX gives
a jitted function copies of its pytree arguments, and an object a caller
passes may be that caller's own.
"""

from __future__ import annotations

import threading
import types

import jax

from autograph.runtime.errors import TracingError
from autograph.runtime.jax_overloads import errors
from autograph.runtime.operators import outside_writes

_DEPTH = 2
_OPAQUE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, str, bytes,
           int, float, complex, bool, type(None), range, jax.Array, jax.core.Tracer)
outside_writes.add_opaque_types((jax.Array, jax.core.Tracer))
_LIBRARY_MODULES = frozenset({"builtins", "abc", "typing", "enum", "collections", "numpy", "jax", "jaxlib"})


def watched(bodies, symbol_names, where, traced=False):
    """``bodies`` (the statement's functions; ``None`` for one it lacks, kept) each checked, after it
    runs, for a change outside the statement's state: undone, then ``NewState`` for an attribute or
    item (``as_state`` adds it to the state), a ``TracingError`` naming it and ``where`` for anything else.
    ``traced``: the bodies are only ever traced (a cond's branches, not a loop's first iterations, which
    run as Python): numpy arrays made before the statement are read-only meanwhile (``locked_arrays``)."""
    snapshot = outside_writes.Snapshot(symbol_names or (), where)

    def watch(fn):
        body = snapshot.locking(fn) if traced else fn

        def run(*item):
            result = snapshot.call(body, *item)
            snapshot.check(where)  # raises NewState for a place that can join the state (as_state)
            return result

        return run

    return [None if fn is None else watch(fn) for fn in bodies]


_calls = threading.local()


def run_converted(original, generated, args, kwargs):
    """How an ``ag.convert``-ed function runs while JAX traces it (``calls.register_probe_runner``):
    JAX's errors about a tracer used as a Python value named at the user's line (``errors.py``);
    for the outermost one, a tracer left in state it does not own refused (``refuse_leaks``)."""
    depth = getattr(_calls, "depth", 0)
    _calls.depth = depth + 1
    try:
        before = _Reach(_roots(original)) if depth == 0 else None
        try:
            result = generated(*args, **kwargs)
        except Exception as error:
            better = errors.translate(error)
            if better is not None:
                raise better from error
            raise
        if before is not None:
            refuse_leaks(original, before)
        return result
    finally:
        _calls.depth = depth


def refuse_leaks(function, before):
    """Refuses (``TracingError``) a JAX tracer that was not there before the call (``before``) in the
    module globals ``function``'s code names, after putting back what those places held."""
    after = _Reach(_roots(function))
    leaked = [entry for key, entry in after.tracers.items() if key not in before.tracers]
    if not leaked:
        return
    for _, holder, kind, key in leaked:
        before.restore(holder, kind, key)
    code = function.__code__
    raise TracingError(
        f"'{leaked[0][0]}' holds a value JAX traces after {function.__qualname__} ({code.co_filename}:"
        f"{code.co_firstlineno}) returned: converted code under JAX assigned a traced value to an "
        "attribute or item of an object a global holds, which would keep JAX's tracer after the compiled "
        "function returns (it is put back). Return the value from the function instead, and set it outside "
        "the jitted call."
    )


def _roots(function):
    """``(name, value)`` of the module globals ``function``'s code names: what outlives a trace of it
    for sure (JAX gives a jitted function copies of its pytree arguments, and an object a caller
    passes may be that caller's own)."""
    names = function.__code__.co_names
    return [(name, function.__globals__[name]) for name in names if name in function.__globals__]


class _Reach:
    """What ``roots`` reach (two levels of attributes and items): ``tracers``, ``{id: (path, holder,
    kind, key)}`` of the tracers (and tuples holding one) in attributes and items (kept alive by
    ``places``, so their ids stay theirs), and ``places``, ``{(id(holder), kind, key): (holder, value)}``."""

    def __init__(self, roots):
        self.tracers, self.places, self._seen = {}, {}, set()
        for name, value in roots:
            self._visit(value, name, _DEPTH)

    def restore(self, holder, kind, key):
        """Puts back what ``holder``'s attribute or item ``key`` held (removes it if it was not there)."""
        found = self.places.get((id(holder), kind, key))
        if kind == "attr":
            setattr(holder, key, found[1]) if found else delattr(holder, key)
        elif found:
            holder[key] = found[1]
        else:
            del holder[key]

    def _visit(self, value, path, depth):
        user_class = isinstance(value, type) and value.__module__.partition(".")[0] not in _LIBRARY_MODULES
        if depth < 0 or (isinstance(value, _OPAQUE) and not user_class) or id(value) in self._seen:
            return
        self._seen.add(id(value))
        if user_class:  # its attributes (Model.calls), not what it defines
            kind = "attr"
            children = [(k, v) for k, v in vars(value).items() if not k.startswith("__")][:256]
        elif type(value) is dict:
            kind, children = "item", list(value.items())[:256]
        elif type(value) is list:
            kind, children = "item", list(enumerate(value[:256]))
        elif type(value) is tuple:
            kind, children = "tuple", list(enumerate(value[:256]))
        else:
            attributes = getattr(value, "__dict__", None)
            if type(attributes) is not dict:
                return
            kind, children = "attr", list(attributes.items())[:256]
        for key, child in children:
            child_path = f"{path}.{key}" if kind == "attr" else f"{path}[{key!r}]"
            if kind != "tuple":
                self.places[(id(value), kind, key)] = (value, child)
                if _holds_tracer(child):  # a tracer, or a tuple of them: a new one is a leak of this place
                    self.tracers.setdefault(id(child), (child_path, value, kind, key))
                    continue
            self._visit(child, child_path, depth - 1)


def _holds_tracer(value) -> bool:
    if type(value) is tuple:
        return any(_holds_tracer(v) for v in value)
    return isinstance(value, jax.core.Tracer)
