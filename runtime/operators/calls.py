"""``converted_call``: how converted code calls a function it cannot resolve statically.

``f(a, k=b)`` in a converted function becomes
``ag__.converted_call(f, a, k=b)``.  At run time:

* a function whose code autograph generated (a nested function converted
  inline, or an ``ag.convert``-ed function) is called directly;
* a user function (or bound method, ``functools.partial``, callable
  object) is converted through the *conversion hook*, once per function,
  and the converted version is called;
* everything else -- builtins, classes, C functions, functions from numpy,
  the standard library or autograph itself, ``do_not_convert``-ed
  functions, functions whose source is unavailable -- is called as it is.

Outside every trace, a converted function runs the original instead (see
``tracing``): ``ag.convert`` returns a function that asks ``tracing()``
once per call.

The runtime never imports the conversion pipeline: ``autograph`` installs
the hook at import time with ``set_conversion_hook(hook)``.  ``hook(f)``
returns the function to call instead of ``f`` (``f`` itself to leave it
unconverted); its answer is cached per function object (as an attribute of
the function, so it goes with it).  Every cache here is weak: a dropped
function frees its conversion.
"""

from __future__ import annotations

import functools
import types
import weakref

from autograph.runtime.core import location
from autograph.runtime.core.user_code import is_skipped_module, skipped_modules  # noqa: F401 - re-exported
from autograph.runtime.core.graph import active_traces, current_graph

DO_NOT_CONVERT_ATTR = "__ag_do_not_convert__"
"""Attribute set (to True) on functions that must never be converted."""

_CONVERTED_ATTR = "__ag_converted__"
"""Attribute caching ``(function, its converted version)`` on a converted user
function: checked by identity, so a copy made by ``functools.wraps`` is ignored."""

class _CodeIds(dict):
    """ids of live code objects, as a set: ``id(code) in ids`` (a code object's hash is
    computed over its whole content, so ids are looked up instead).  Each entry holds a
    weak reference whose callback removes it when the code object dies, before its id
    can be reused: dropped functions free their entries."""

    def add(self, code) -> None:
        key = id(code)
        if key not in self:
            self[key] = weakref.ref(code, lambda _ref, key=key: self.pop(key, None))


# ids of code objects autograph generated (functions with this code are called as
# they are), and of user code that runs unconverted.
converted_codes = _CodeIds()
_passthrough_codes = _CodeIds()

_hook = None

# Zero-argument functions, each true while a trace of its backend is active (the
# numpy runtime's trace is checked directly, in ``tracing``).
_trace_probes: list = []


def tracing() -> bool:
    """True while some backend is tracing: then the values converted code meets may be symbolic.

    Outside every trace they cannot be (outside a trace the ops run eagerly on
    numpy and return numpy values), so every operator would take its Python
    path and the converted function would do exactly what the original does:
    ``ag.convert``'s result then runs the original itself, at its own speed.
    A backend whose values trace without an autograph trace (say, tracers
    under ``jax.jit``) registers a probe with ``register_trace_probe``.
    """
    if active_traces[0] and current_graph() is not None:
        return True
    for probe in _trace_probes:
        if probe():
            return True
    return False


def register_trace_probe(probe) -> None:
    """Adds ``probe()``, true while a trace of another backend is active, to ``tracing``."""
    if probe not in _trace_probes:
        _trace_probes.append(probe)


# How converted code runs while another backend's probe traces it: ``run(original, generated,
# args, kwargs)`` (JAX's refuses Python state it leaves wrong and names the user's line in its
# errors), or None to call ``generated`` directly.
_probe_runner = [None]


def register_probe_runner(run) -> None:
    """Sets ``run(original, generated, args, kwargs)`` as the way an ``ag.convert``-ed function runs
    its generated code while a probe's backend traces it (not the numpy runtime's traces)."""
    _probe_runner[0] = run


_GENERATED_ATTR = "__ag_generated__"


def dispatching(original, generated):
    """A function that calls ``generated`` while a trace is active, else ``original``.

    This is what ``ag.convert`` returns.  Outside every trace the two do the
    same (``tracing``), so the original runs, at its own speed; the check
    costs one list lookup while no thread traces and no other backend is
    loaded.  Its frame leaves the traceback of an exception raised in the
    original: the user sees their own frames only.  Carries the original's
    name, docstring, attributes and ``__wrapped__`` (so ``inspect.signature``
    is the original's).
    """
    probes = _trace_probes

    def converted(*args, **kwargs):
        if (active_traces[0] or probes) and tracing():
            run = _probe_runner[0]
            if run is not None and current_graph() is None:  # traced by another backend
                return run(original, generated, args, kwargs)
            return generated(*args, **kwargs)
        try:
            return original(*args, **kwargs)
        except BaseException as e:
            e.__traceback__ = e.__traceback__.tb_next  # this frame: ours, not the user's
            raise

    functools.update_wrapper(converted, original)
    setattr(converted, _GENERATED_ATTR, generated)
    return converted


def generated_of(function):
    """The generated function a ``dispatching`` function calls in traces, or None."""
    if function.__code__ is _DISPATCH_CODE:
        return function.__dict__.get(_GENERATED_ATTR)
    return None


def set_conversion_hook(hook):
    """Installs ``hook(function) -> function``, the converter ``converted_call`` uses."""
    global _hook
    _hook = hook


def conversion_hook_installed() -> bool:
    """True once ``autograph`` has installed its converter (``set_conversion_hook``)."""
    return _hook is not None


def register_converted_code(code):
    """Marks ``code`` (and the code nested in it) as generated by autograph."""
    stack = [code]
    while stack:
        current = stack.pop()
        converted_codes.add(current)
        for const in current.co_consts:
            if type(const) is types.CodeType:
                stack.append(const)


_DISPATCH_CODE = dispatching(len, len).__code__
register_converted_code(_DISPATCH_CODE)  # converted code calls an ag.convert result as it is


def is_generated_from_user_code(code) -> bool:
    """True for code autograph generated from a user's function (its file and lines are the user's),
    not the wrapper ``ag.convert`` returns."""
    return id(code) in converted_codes and code is not _DISPATCH_CODE


location.register_converted_check(is_generated_from_user_code)


def is_converted(function) -> bool:
    """True if ``function``'s code was generated by autograph."""
    return id(function.__code__) in converted_codes




def cached_conversion(f):
    """The converted version of ``f`` cached by ``converted_call``, or None."""
    entry = f.__dict__.get(_CONVERTED_ATTR)
    if entry is not None and entry[0] is f:
        return entry[1]
    return None


def _converted(f):
    """The function to call in place of the plain Python function ``f``."""
    code_id = id(f.__code__)
    if code_id in converted_codes:
        return f
    entry = f.__dict__.get(_CONVERTED_ATTR)
    if entry is not None and entry[0] is f:
        return entry[1]
    if code_id in _passthrough_codes:
        return f
    if getattr(f, DO_NOT_CONVERT_ATTR, False) or _hook is None or is_skipped_module(f.__module__):
        target = f
    else:
        target = _hook(f)
    if target is f:
        _passthrough_codes.add(f.__code__)
    else:
        setattr(f, _CONVERTED_ATTR, (f, target))
    return target


def converted_call(f, /, *args, **kwargs):
    """Calls ``f(*args, **kwargs)``, converting ``f`` first if it is user code."""
    kind = type(f)
    if kind is types.FunctionType:
        return _converted(f)(*args, **kwargs)
    if kind is types.BuiltinFunctionType:  # builtins, and methods of builtin objects
        return f(*args, **kwargs)
    if kind is types.MethodType:
        func = f.__func__
        if type(func) is types.FunctionType:
            return _converted(func)(f.__self__, *args, **kwargs)
        return f(*args, **kwargs)
    if kind is functools.partial:
        return converted_call(f.func, *f.args, *args, **{**f.keywords, **kwargs})
    if kind is type:
        return f(*args, **kwargs)
    call = getattr(kind, "__call__", None)
    if type(call) is types.FunctionType and not isinstance(f, type):
        return _converted(call)(f, *args, **kwargs)
    return f(*args, **kwargs)
