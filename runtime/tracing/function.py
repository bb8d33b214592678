"""``rt.function``: trace a Python function into graphs, cache them per input signature, run them.

``rt.function(f)`` returns a ``Function``.  Calling it binds the arguments
to ``f``'s signature and computes a *cache key*:

* numpy arrays and numpy scalars are graph inputs, keyed by dtype and shape;
* Python ``bool``/``int``/``float``/``complex``/``str``/``bytes``/``None``
  are constants, keyed by type and value (``-0.0`` is not ``0.0``; NaN is
  one key): each new value traces a new graph, in which the function sees
  the Python value itself;
* tuples, lists, dicts and namedtuples are walked (dicts in insertion
  order, containers keyed by their type);
* an ``rt.Variable`` is keyed by dtype and shape: one graph serves every
  variable of that spec, and each call reads and updates the variable
  passed in;
* any other object is a static argument the trace sees as it is, keyed by
  ``__autograph_trace_key__()`` if its type defines it, else by equality if
  it defines ``__eq__`` and is hashable, else by identity -- held weakly,
  so the cache keeps no object alive (the traces of an object are dropped
  once it is gone).  A graph does not see attributes changed after it was
  traced.

(``binding.py`` binds the arguments and matches an ``input_signature``;
``signature.py`` builds, compares and relaxes the keys; ``cache.py`` holds
the traces per key.)

The first call with a key *traces* (``trace.py``): it runs
``trace_transform(f)`` (``f`` itself without one; ``ag.function`` passes
``ag.convert``) on placeholders inside a new ``Graph``, flattens what it
returns into ``graph.outputs``, optimizes the graph (``optimize=True``) and
keeps the result as a ``ConcreteFunction`` (``concrete.py``).  Every call then runs the concrete function's graph
(the interpreter, or the compiled function with ``jit_compile=True``) and
returns numpy values -- 0-d results as numpy scalars -- nested the way the
Python function nests them; Python constants it returns pass through.

Calls made while another function is being traced (a ``Function`` called
from a traced function) do not run a graph: the inner Python body is traced
into the current graph (inlined).

The options (``options.py``: one ``Options`` record) are given to
``function``; ``input_signature`` (a list of ``TensorSpec``, possibly
nested) fixes the graph once; arguments must match it (``None`` dimensions accept any size).
``reduce_retracing=True`` relaxes the dimensions that changed into ``None``
instead of tracing every new shape.  A function retraced
``RETRACE_WARNING_THRESHOLD`` times warns (``RetracingWarning``) naming the
argument that changed.  On methods, each instance has its own cache.

A function that creates variables is traced twice on its first call
(``trace.py``): creating them again is an ``ag.TracingError``, the
variable being created on every call.

Cached calls are the hot path: a call whose positional arguments are numpy
values and Python scalars (no keywords) looks its concrete function up by a
flat tuple of dtypes, shapes and values, without binding the signature.
The cache is safe under threads (``cache.py``): lookups take no lock;
traces, writes and eviction take the function's lock.
"""

from __future__ import annotations

import functools
import sys
import threading
import types
import weakref

from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import user_location_text, warn_at_user, without_library_frames
from autograph.runtime.errors import AutoGraphWarning
from autograph.runtime.tracing import escapes, options as options_module, signature, trace
from autograph.runtime.tracing.binding import Binding
from autograph.runtime.tracing.cache import TraceCache
from autograph.runtime.tracing.concrete import ConcreteFunction
from autograph.runtime.tracing.options import Options

__all__ = ["function", "Function", "BoundFunction", "ConcreteFunction", "Options", "RetracingWarning"]

RETRACE_WARNING_THRESHOLD = 5


class RetracingWarning(AutoGraphWarning):
    """A traced function was traced again and again for new argument signatures.

    Each new dtype or shape of an array argument, and each new value of a
    Python scalar argument, traces a new graph.  Pass varying Python numbers
    as numpy values, or give an ``input_signature`` (``None`` for the
    dimensions that vary), or use ``reduce_retracing=True``.
    """



def function(python_function=None, **options):
    """Makes a ``Function`` of ``python_function``; usable as ``@function`` or ``@function(...)``.

    ``options`` are the fields of ``Options`` (``input_signature``,
    ``jit_compile``, ``optimize``, ``parallel``, ``reduce_retracing``,
    ``name``, ``max_traces``, ``trace_transform``), checked here, once.
    """
    record = options_module.make(options)

    def decorate(fn):
        return Function(fn, record)

    if python_function is None:
        return decorate
    return decorate(python_function)


class Function:
    """A Python function traced into graphs on demand (see the module docstring)."""

    def __init__(self, python_function, options: Options | None = None, *, _instance=None, **keywords):
        if not callable(python_function):
            raise TypeError(
                f"rt.function needs a callable, got {python_function!r} (at {user_location_text()}); "
                "decorate a function with @rt.function or pass one: rt.function(f)"
            )
        if options is None:
            options = options_module.make(keywords)
        elif keywords:
            raise TypeError("Function: pass either an Options record or keyword options, not both")
        self.options = options
        self._python_function = python_function
        self._name = options.name or getattr(python_function, "__name__", type(python_function).__name__)
        self._instance_ref = _instance
        self.binding = Binding(python_function, self._name, method=_instance is not None)
        self.lock = threading.RLock()
        self._traces = TraceCache(self.lock)
        self._fast = self._traces.fast  # the hot path's table, one attribute away
        self._traced_callable = None
        self._tracing_count = 0
        self._last_key = None
        self._warned = False
        self._bound: dict = {}
        signature_ = options.input_signature
        self.input_signature = None if signature_ is None else self.binding.check_signature(signature_)
        functools.update_wrapper(self, python_function, updated=())

    # -- description ---------------------------------------------------------

    @property
    def python_function(self):
        """The original Python function (bound to the instance for methods)."""
        instance = self._instance()
        if instance is not None:
            return types.MethodType(self._python_function, instance)
        return self._python_function

    @property
    def tracing_count(self) -> int:
        """How many graphs were traced so far."""
        return self._tracing_count

    @property
    def parallel(self) -> bool:
        """Whether independent heavy work may run on a second thread (``Options.parallel``)."""
        return self.options.parallel

    def _instance(self):
        ref = self._instance_ref
        if ref is None:
            return None
        return ref() if isinstance(ref, weakref.ref) else ref

    def key_of(self, args, kwargs, allow_specs=False):
        """(key, array leaves, bound arguments, variable arguments) of a call."""
        return self.binding.key_of(args, kwargs, self._instance(), allow_specs)

    def __repr__(self):
        return f"<rt.Function {self._name} traced {self._tracing_count} time(s)>"

    # -- calling -------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        try:
            if current_graph() is not None:
                return self._inline(args, kwargs)
            if not kwargs:
                key = signature.flat_key(args)
                entry = None if key is None else self._fast.get(key)
                if entry is not None and not entry[0].guards:
                    cf, index = entry
                    if index is None:
                        return cf.call_flat(args)
                    return cf.call_flat([args[i] for i in index])
            return self._call_slow(args, kwargs)
        except Exception as error:  # leaving the library: show the user's frames
            without_library_frames(error)
            if sys.version_info < (3, 11):  # a bare raise re-raises the traceback as it was caught
                raise error
            raise  # without a frame of this function


    def _call_slow(self, args, kwargs):
        if self._traces.stale:
            self._traces.purge()
        key, leaves, bound, arg_variables = self.key_of(args, kwargs)
        cf = self._concrete(key, bound, leaves, arg_variables)
        if not kwargs and not arg_variables and self.binding.defaults_immutable(bound, len(args)):
            self._traces.remember_fast(args, leaves, cf)
        return cf.on_variables(arg_variables).call_flat(leaves)

    def _concrete(self, key, bound, leaves, arg_variables=()):
        """The concrete function cached for ``key``, traced (once, under the lock) if there is none."""
        cf = self._lookup(key)
        if cf is None or cf.guards:
            with self.lock:
                cf = self._lookup(key, remember=True)
                stale = cf is not None and escapes.stale_guard(cf.guards)
                if stale:
                    self._traces.forget(cf)
                if cf is None or stale:
                    cf = self._trace(key, bound, leaves, arg_variables, stale)
        return cf

    def _lookup(self, key, remember=False):
        try:
            return self._traces.lookup(key, remember)
        except Exception as error:  # noqa: BLE001 - an argument's __eq__ raised
            raise self._comparison_error(key, error) from error

    def _comparison_error(self, key, error):
        """The ``TypeError`` naming the argument whose ``__eq__`` raised ``error``."""
        cached = self._traces.keys()
        culprit = "an argument"
        for i, (name, component) in enumerate(zip(self.binding.names(), key)):
            try:
                [component == other[i] for other in cached if len(other) == len(key)]
            except Exception:  # noqa: BLE001 - found it
                culprit = f"argument {name!r}"
                break
        return TypeError(
            f"{self.binding.label}: comparing {culprit} with the one of an earlier trace raised "
            f"{type(error).__name__}: {error} (called at {user_location_text()}). A static argument is keyed "
            f"by equality when its type defines __eq__ and __hash__: make __eq__ return a bool, or give the "
            f"type a {signature.TRACE_KEY_METHOD}() method returning a hashable key."
        )

    def _inline(self, args, kwargs):
        """Traces the Python body into the current graph (a call from inside another trace)."""
        fn = self.traced_callable()
        instance = self._instance()
        if instance is not None:
            return fn(instance, *args, **kwargs)
        return fn(*args, **kwargs)

    def traced_callable(self):
        """What a trace runs: ``trace_transform(f)``, or ``f`` without one (made once)."""
        if self._traced_callable is None:
            fn = self._python_function
            transform = self.options.trace_transform
            self._traced_callable = transform(fn) if transform is not None else fn
        return self._traced_callable

    # -- tracing -------------------------------------------------------------

    def _trace(self, key, bound, leaves, arg_variables=(), stale=None):
        """Traces ``key`` (under the lock) and caches the concrete function (``stale``: the path of
        the written-back place whose change made the trace of ``key`` out of date)."""
        traces = self._traces
        if traces.stale:
            traces.purge()
        if self.options.reduce_retracing and self.input_signature is None:
            key = traces.relaxed(key)
        cf, specs, count = trace.trace(self, key, bound, arg_variables)
        self._tracing_count += count
        traces.add(key, cf, general=any(shape is None or None in shape for _, shape in specs))
        self._warn_retracing(key, stale)
        if self.options.max_traces is not None:
            traces.evict(self.options.max_traces)
        return cf

    def _traced_graphs(self) -> list:
        """The distinct concrete functions cached, oldest first."""
        return self._traces.graphs()

    def _warn_retracing(self, key, stale=None):
        previous, self._last_key = self._last_key, key
        retraces = self._tracing_count - 1
        if self._warned or retraces < RETRACE_WARNING_THRESHOLD or previous is None:
            return
        self._warned = True
        changed = [(n, old, new) for n, old, new in zip(self.binding.names(), previous, key) if old != new]
        what = "; ".join(
            f"argument {n!r} changed from {signature.describe(old)} to {signature.describe(new)}"
            for n, old, new in changed
        )
        fix = "give an input_signature with None for dimensions that vary, or use reduce_retracing=True"
        if any(new[0] == "P" for _, _, new in changed):
            fix = "pass numbers that vary as numpy values (e.g. np.float32(x)) rather than Python scalars; " + fix
        if stale:
            what = f"'{stale}', which the function writes, changed since it was traced (read as a constant)"
            fix = ("keep state updated at every call in an rt.Variable (read it with .value, update it with "
                   ".assign), or pass it as an argument and return its new value")
        if any(new[0] == "O" for _, _, new in changed):
            fix = (f"pass the same object each time, or give its type a {signature.TRACE_KEY_METHOD}() method "
                   "returning a key equal for objects the function treats alike; " + fix)
        message = (
            f"{self.binding.label} was retraced {retraces} times (traced {self._tracing_count} times); last retrace: "
            f"{what or 'arguments changed'}. Every new dtype/shape of an array argument, every new value "
            f"of a Python scalar argument and every new object traces a new graph. To fix it, {fix}."
        )
        warn_at_user(message, RetracingWarning)

    # -- concrete functions --------------------------------------------------

    def check_arguments(self, *args, **kwargs) -> None:
        """Raises the ``TypeError``/``ValueError`` a call would raise for bad arguments, without tracing.

        ``TensorSpec`` values stand for arrays, as in ``get_concrete_function``.
        """
        self.key_of(args, kwargs, allow_specs=True)

    def get_concrete_function(self, *args, **kwargs) -> ConcreteFunction:
        """The concrete function for these arguments (``TensorSpec``s allowed), tracing it if needed.

        With variable arguments, its graph uses those variables; called with
        other variables of the same spec, it runs on them.
        """
        if not args and not kwargs and self.input_signature is not None:
            args = tuple(self.input_signature)
        key, leaves, bound, arg_variables = self.key_of(args, kwargs, allow_specs=True)
        return self._concrete(key, bound, leaves, arg_variables).on_variables(arg_variables)

    # -- methods -------------------------------------------------------------

    def __get__(self, instance, owner=None):
        if instance is None or self._instance_ref is not None:
            return self
        found = self._bound.get(id(instance))
        if found is not None and found._instance() is instance:
            return BoundFunction(found, instance)
        bound = Function(self._python_function, self.options, _instance=self._instance_reference(instance))
        self._bound[id(instance)] = bound
        return BoundFunction(bound, instance)

    def _instance_reference(self, instance):
        key = id(instance)
        bound_dict = self._bound

        def forget(_ref):
            bound_dict.pop(key, None)

        try:
            return weakref.ref(instance, forget)
        except TypeError:
            return instance  # not weak-referenceable: kept alive with its bound function


class BoundFunction:
    """A ``Function`` accessed on an instance: the instance's own cache, plus the instance.

    The per-instance ``Function`` refers to its instance weakly (so caches
    die with their instances); this short-lived handle keeps the instance
    alive while a call on it runs, as in ``Model().f(x)``.
    """

    __slots__ = ("_function", "_instance")

    def __init__(self, function, instance):
        self._function = function
        self._instance = instance

    def __call__(self, *args, **kwargs):
        return self._function(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._function, name)

    def __repr__(self):
        return f"<bound {self._function!r} of {type(self._instance).__name__} object>"
