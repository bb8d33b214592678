"""``rt.function``: trace a Python function into graphs, cache them per input signature, run them.

``rt.function(f)`` returns a ``Function``.  Calling it binds the arguments
to ``f``'s signature and computes a *cache key*:

* numpy arrays and numpy scalars are graph inputs, keyed by dtype and shape;
* Python ``bool``/``int``/``float``/``str``/``None`` (and types, dtypes,
  functions, enums) are constants, keyed by value: each new value traces a
  new graph, in which the function sees the Python value itself;
* tuples, lists, dicts and namedtuples are walked (dict keys in sorted
  order); an ``rt.Variable`` is keyed by identity and used by reference.

(``runtime/signature.py`` builds, compares and relaxes the keys.)

The first call with a key *traces*: it runs ``trace_transform(f)`` (``f``
itself without one; ``ag.function`` passes ``ag.convert``) on placeholders
inside a new ``Graph``, flattens what it returns into ``graph.outputs``,
optimizes the graph (``optimize=True``) and keeps the result as a
``ConcreteFunction``.  Every call then runs the concrete function's graph
(the interpreter, or the compiled function with ``jit_compile=True``) and
returns numpy values -- 0-d results as numpy scalars -- nested the way the
Python function nests them; Python constants it returns pass through.

Calls made while another function is being traced (a ``Function`` called
from a traced function) do not run a graph: the inner Python body is traced
into the current graph (inlined).

``input_signature`` (a list of ``TensorSpec``, possibly nested) fixes the
graph once; arguments must match it (``None`` dimensions accept any size).
``reduce_retracing=True`` relaxes the dimensions that changed into ``None``
instead of tracing every new shape.  A function retraced
``RETRACE_WARNING_THRESHOLD`` times warns (``RetracingWarning``) naming the
argument that changed.  On methods, each instance has its own cache.

Cached calls are the hot path: a call whose positional arguments are numpy
values and Python scalars (no keywords) looks its concrete function up by a
flat tuple of dtypes, shapes and values, without binding the signature.
"""

from __future__ import annotations

import functools
import inspect
import threading
import types
import weakref

import numpy as np

from autograph.runtime import errors, optimizer

from autograph.runtime.backends.numpy import codegen as jit

from autograph.runtime.core import opdef, shapes

from autograph.runtime.exec import parallel

from autograph.runtime.ops import apply

from autograph.runtime.tracing import signature
from autograph.runtime.errors import AutoGraphWarning, TracingError
from autograph.runtime.core.graph import Graph, current_graph
from autograph.runtime.core.location import user_location_text, warn_at_user
from autograph.runtime.ops import variables
from autograph.runtime.core.tensor import Tensor, TensorSpec

RETRACE_WARNING_THRESHOLD = 5


class RetracingWarning(AutoGraphWarning):
    """A traced function was traced again and again for new argument signatures.

    Each new dtype or shape of an array argument, and each new value of a
    Python scalar argument, traces a new graph.  Pass varying Python numbers
    as numpy values, or give an ``input_signature`` (``None`` for the
    dimensions that vary), or use ``reduce_retracing=True``.
    """


def function(
    python_function=None,
    *,
    input_signature=None,
    trace_transform=None,
    jit_compile=False,
    optimize=True,
    parallel=True,
    reduce_retracing=False,
    name=None,
    max_traces=None,
):
    """Makes a ``Function`` of ``python_function``; usable as ``@function`` or ``@function(...)``.

    ``max_traces``: if not None, at most that many concrete functions stay
    cached (the oldest traced is dropped first, and traced again if needed).
    """

    def decorate(fn):
        return Function(
            fn,
            input_signature=input_signature,
            trace_transform=trace_transform,
            jit_compile=jit_compile,
            optimize=optimize,
            parallel=parallel,
            reduce_retracing=reduce_retracing,
            name=name,
            max_traces=max_traces,
        )

    if python_function is None:
        return decorate
    return decorate(python_function)


# --------------------------------------------------------------------------
# Outputs: nested Python structure <-> flat graph outputs
# --------------------------------------------------------------------------


class _Out:
    """Marks output number ``index`` in a structure template."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


def _to_numpy(value, dtype):
    """One output value as returned to the caller: numpy, 0-d arrays as numpy scalars."""
    if type(value) is np.ndarray:
        return value[()] if value.ndim == 0 else value
    if isinstance(value, np.generic):
        return value
    array = np.asarray(value, dtype=dtype)
    return array[()] if array.ndim == 0 else array


def _map_leaves(value, leaf_type, fn):
    """``value`` with each ``leaf_type`` leaf inside tuples, namedtuples, lists and dicts
    replaced by ``fn(leaf)``; other values kept."""
    if isinstance(value, leaf_type):
        return fn(value)
    if isinstance(value, tuple):
        items = [_map_leaves(v, leaf_type, fn) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [_map_leaves(v, leaf_type, fn) for v in value]
    if isinstance(value, dict):
        return {k: _map_leaves(v, leaf_type, fn) for k, v in value.items()}
    return value


def _fill(template, leaf):
    """``template`` with each ``_Out`` marker replaced by ``leaf(index)``; other values kept."""
    return _map_leaves(template, _Out, lambda out: leaf(out.index))


def _make_packer(template, out_dtypes):
    """A function turning the flat list of output values into the returned structure."""
    if isinstance(template, _Out):  # the common case of one returned tensor: no walk
        index = template.index
        dtype = out_dtypes[index]
        return lambda values: _to_numpy(values[index], dtype)
    return lambda values: _fill(template, lambda i: _to_numpy(values[i], out_dtypes[i]))


# --------------------------------------------------------------------------
# Concrete functions
# --------------------------------------------------------------------------


class ConcreteFunction:
    """One traced graph of a ``Function``, for one input signature.

    ``graph`` is the graph as traced; ``execution_graph`` is the one that
    runs (optimized unless ``optimize=False``).  Calling it takes the same
    arguments as the ``Function``; they must fit the signature it was
    traced for.
    """

    def __init__(self, function, key, graph, template, structured_input_signature):
        self._function = function
        self._key = key
        self.graph = graph
        self.structured_outputs = _fill(template, graph.outputs.__getitem__)
        self.structured_input_signature = structured_input_signature
        self.execution_graph = graph
        self._compiled = None
        self._variables = _variables_used(graph)
        out_dtypes = [t.dtype for t in graph.outputs]
        self._pack = _make_packer(template, out_dtypes)
        self._run = None
        self._prepare(function)

    def _prepare(self, function):
        graph = optimizer.optimize(self.graph) if function._optimize else self.graph
        self.execution_graph = graph
        if function._jit_compile:
            try:
                self._compiled = jit.compile_graph(graph)
            except jit.JitUnsupported as e:
                warn_at_user(f"{function._label()}: jit_compile=True could not compile the graph ({e}); "
                              "running the interpreter instead", AutoGraphWarning)
        if self._compiled is not None:
            self._run = self._compiled[0]
        else:
            self._run = parallel.runner(graph, parallel=function.parallel)
        self._copy_constant_outputs(graph)

    def _copy_constant_outputs(self, graph):
        """Returns copies of outputs that are ``Const`` values (folding makes many), so a
        caller editing a returned array in place cannot change the next call's result."""
        constants = [i for i, t in enumerate(graph.outputs) if t.op.type == "Const" and t.shape]
        if not constants:
            return
        run = self._run

        def run_copying(args):
            values = list(run(args))
            for i in constants:
                values[i] = values[i].copy()
            return values

        self._run = run_copying

    def _call_flat(self, leaves):
        """Runs the graph on the array leaves; returns the structured numpy result."""
        return self._pack(self._run(leaves))

    def __call__(self, *args, **kwargs):
        function = self._function
        key, leaves, _ = function._key_of(args, kwargs)
        if not signature.keys_match(self._key, key):
            raise TypeError(
                f"{function._label()}: this concrete function was traced for "
                f"{function._describe_key(self._key)}, but got {function._describe_key(key)}; call the "
                "Function itself to trace for new arguments"
            )
        return self._call_flat(leaves)

    def compiled_source(self) -> str:
        """The Python source of the graph compiled by ``jit_compile`` (compiled now if needed)."""
        if self._compiled is None:
            return jit.compile_graph(self.execution_graph)[1]
        return self._compiled[1]

    def __repr__(self):
        return f"<ConcreteFunction {self.graph.name} {self._function._describe_key(self._key)}>"


def _all_graphs(graph):
    yield graph
    seen = {id(graph)}
    for sub in list(graph.library.values()):
        if id(sub) not in seen:
            seen.add(id(sub))
            yield sub


def _variables_used(graph):
    """Strong references to the variables the graph's ops refer to (keeps them alive)."""
    found = {}
    for g in _all_graphs(graph):
        for op in g.operations:
            handle = op.attrs.get("handle")
            if isinstance(handle, variables.VariableHandle) and handle.id in variables._VARIABLES:
                found[handle.id] = variables._VARIABLES[handle.id]
    return tuple(found[k] for k in sorted(found))


# --------------------------------------------------------------------------
# Function
# --------------------------------------------------------------------------


class Function:
    """A Python function traced into graphs on demand (see the module docstring)."""

    def __init__(
        self,
        python_function,
        *,
        input_signature=None,
        trace_transform=None,
        jit_compile=False,
        optimize=True,
        parallel=True,
        reduce_retracing=False,
        name=None,
        max_traces=None,
        _instance=None,
    ):
        if not callable(python_function):
            raise TypeError(
                f"rt.function needs a callable, got {python_function!r} (at {user_location_text()}); "
                "decorate a function with @rt.function or pass one: rt.function(f)"
            )
        self._python_function = python_function
        self._trace_transform = trace_transform
        self._jit_compile = jit_compile
        self._optimize = optimize
        self.parallel = parallel
        self._reduce_retracing = reduce_retracing
        if max_traces is not None and (type(max_traces) is not int or max_traces < 1):
            raise ValueError(f"rt.function: max_traces must be a positive int or None, got {max_traces!r}")
        self._max_traces = max_traces
        self._name = name or getattr(python_function, "__name__", type(python_function).__name__)
        self._instance_ref = _instance
        self._lock = threading.RLock()
        self._cache: dict = {}
        self._fast: dict = {}
        self._general: list = []
        self._signature = None
        self._param_names = None
        self._traced_callable = None
        self._tracing_count = 0
        self._last_key = None
        self._warned = False
        self._bound: dict = {}
        self.input_signature = None if input_signature is None else self._check_signature(input_signature)
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

    def _instance(self):
        ref = self._instance_ref
        if ref is None:
            return None
        return ref() if isinstance(ref, weakref.ref) else ref

    def _label(self) -> str:
        code = getattr(self._python_function, "__code__", None)
        where = f" (defined at {errors.at(code.co_filename, code.co_firstlineno)})" if code is not None else ""
        return f"function {self._name!r}{where}"

    def _bad_arg(self, path, value, problem) -> str:
        shown = repr(value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        return (
            f"{self._label()}: argument {path!r} = {shown} {problem} (called at {user_location_text()}). "
            "A traced function takes numpy arrays and scalars (bool, int, float dtypes), Python "
            "bool/int/float/str/None (traced as constants), rt.Variable, and tuples/lists/dicts/"
            "namedtuples of those; convert the value to a numpy array, or close over it instead of "
            "passing it."
        )

    def _describe_key(self, key) -> str:
        names = self._names()
        return "(" + ", ".join(f"{n}={signature.describe(k)}" for n, k in zip(names, key)) + ")"

    def __repr__(self):
        return f"<rt.Function {self._name} traced {self._tracing_count} time(s)>"

    # -- signature -----------------------------------------------------------

    def _sig(self):
        if self._signature is None:
            try:
                sig = inspect.signature(self._python_function)
            except (TypeError, ValueError):
                sig = inspect.Signature(
                    [inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
                     inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)]
                )
            self._signature = sig
        return self._signature

    def _names(self):
        """Names of the parameters that make up the key (the instance of a method excluded)."""
        if self._param_names is None:
            names = list(self._sig().parameters)
            self._param_names = names[1:] if self._instance_ref is not None else names
        return self._param_names

    def _check_signature(self, input_signature):
        if not isinstance(input_signature, (list, tuple)):
            raise TypeError(
                f"{self._label()}: input_signature must be a list of rt.TensorSpec, got {input_signature!r}"
            )

        def check(spec):
            if isinstance(spec, TensorSpec):
                return
            if isinstance(spec, (list, tuple)):
                for s in spec:
                    check(s)
            elif isinstance(spec, dict):
                for s in spec.values():
                    check(s)
            else:
                raise TypeError(
                    f"{self._label()}: input_signature entries must be rt.TensorSpec (or nested "
                    f"lists/dicts of them), got {spec!r}"
                )

        for spec in input_signature:
            check(spec)
        params = list(self._sig().parameters.values())[1 if self._instance_ref is not None else 0:]
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(input_signature) > len(positional) and not any(p.kind == p.VAR_POSITIONAL for p in params):
            raise TypeError(
                f"{self._label()}: input_signature has {len(input_signature)} entries but the function takes "
                f"{len(positional)} positional argument(s)"
            )
        return list(input_signature)

    def _bind(self, args, kwargs):
        instance = self._instance()
        try:
            if instance is not None:
                bound = self._sig().bind(instance, *args, **kwargs)
            else:
                bound = self._sig().bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(
                f"{self._label()}: cannot call {self._name}{self._sig()} with these arguments: {e} (called at "
                f"{user_location_text()}); pass the arguments the function declares"
            ) from None
        bound.apply_defaults()
        return bound

    def _bound_values(self, bound):
        values = list(bound.arguments.items())
        return values[1:] if self._instance_ref is not None else values

    def _key_of(self, args, kwargs, allow_specs=False):
        """(key, array leaves, bound arguments) of a call."""
        bound = self._bind(args, kwargs)
        values = self._bound_values(bound)
        if self.input_signature is not None:
            key, leaves = self._match_signature(values, bound, allow_specs)
            return key, leaves, bound
        encoder = signature.Encoder(self, allow_specs)
        key = tuple(encoder.encode(v, name) for name, v in values)
        return key, encoder.leaves, bound

    def _match_signature(self, values, bound, allow_specs):
        sig = self.input_signature
        for name, value in values[len(sig):]:
            param = self._sig().parameters[name]
            unused = (
                (param.kind is param.VAR_POSITIONAL and value == ())
                or (param.kind is param.VAR_KEYWORD and value == {})
                or (param.default is not param.empty and value is param.default)
            )
            if not unused:
                raise TypeError(
                    f"{self._label()}: argument {name!r} is not covered by input_signature ({len(sig)} "
                    f"entries), called at {user_location_text()}; pass only the argument(s) the "
                    "signature describes"
                )
        leaves = []
        key = tuple(self._match(value, spec, name, leaves, allow_specs) for (name, value), spec in zip(values, sig))
        if len(key) < len(sig):
            raise TypeError(
                f"{self._label()}: input_signature has {len(sig)} entries but only {len(key)} argument(s) "
                f"were bound, called at {user_location_text()}"
            )
        return key, leaves

    def _match(self, value, spec, path, leaves, allow_specs):
        if isinstance(spec, TensorSpec):
            expected = f"{spec.dtype.name}{shapes.format_shape(spec.shape)} (input_signature)"
            if isinstance(value, TensorSpec) and allow_specs:
                if not spec.is_compatible_with(value):
                    raise TypeError(
                        f"{self._label()}: argument {path!r}: expected {expected}, got {value!r} (called at "
                        f"{user_location_text()}); pass a TensorSpec of that dtype whose shape fits"
                    )
                leaves.append(spec)
                return ("A", spec.dtype, spec.shape)
            array = self._signature_array(value, spec, path, expected)
            if not shapes.is_subshape(array.shape, spec.shape):
                raise ValueError(
                    f"{self._label()}: argument {path!r} has shape {shapes.format_shape(array.shape)} but "
                    f"expected {expected} (called at {user_location_text()}); pass a value of "
                    "that shape, or use None in the TensorSpec for dimensions that vary"
                )
            leaves.append(array)
            return ("A", spec.dtype, spec.shape)
        if isinstance(spec, (list, tuple)):
            if not isinstance(value, (list, tuple)) or len(value) != len(spec):
                raise TypeError(
                    f"{self._label()}: argument {path!r} must be a sequence of {len(spec)} values matching "
                    f"input_signature {spec!r}, got {value!r} (called at {user_location_text()}); pass one "
                    "value per entry"
                )
            items = enumerate(zip(value, spec))
            return ("T", tuple(self._match(v, s, f"{path}[{i}]", leaves, allow_specs) for i, (v, s) in items))
        keys = signature.sorted_keys(spec)
        if not isinstance(value, dict) or signature.sorted_keys(value) != keys:
            raise TypeError(
                f"{self._label()}: argument {path!r} must be a dict with keys {list(keys)} matching "
                f"input_signature, got {value!r} (called at {user_location_text()}); pass a dict with "
                "exactly those keys"
            )
        return ("D", keys, tuple(self._match(value[k], spec[k], f"{path}[{k!r}]", leaves, allow_specs) for k in keys))

    def _signature_array(self, value, spec, path, expected):
        if isinstance(value, (np.ndarray, np.generic)):
            if value.dtype != spec.dtype:
                raise TypeError(
                    f"{self._label()}: argument {path!r} has dtype {value.dtype} but expected {expected} "
                    f"(called at {user_location_text()}); convert it with .astype({spec.dtype.name!r})"
                )
            return value
        kind = type(value)
        fits = (
            (kind is bool and spec.dtype.kind == "b")
            or (kind is int and spec.dtype.kind in "iuf")
            or (kind is float and spec.dtype.kind == "f")
        )
        if fits:
            return np.asarray(value, dtype=spec.dtype)[()]
        if isinstance(value, (list, tuple)) and value:
            array = np.asarray(value)
            if array.dtype != object and np.can_cast(array.dtype, spec.dtype, "same_kind"):
                return array.astype(spec.dtype)
        raise TypeError(
            f"{self._label()}: argument {path!r} = {value!r} does not match {expected} (called at "
            f"{user_location_text()}); pass a numpy value of dtype {spec.dtype.name}"
        )

    # -- calling -------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if current_graph() is not None:
            return self._inline(args, kwargs)
        if not kwargs:
            key = signature.flat_key(args)
            entry = None if key is None else self._fast.get(key)
            if entry is not None:
                cf, index = entry
                if index is None:
                    return cf._call_flat(args)
                return cf._call_flat([args[i] for i in index])
        return self._call_slow(args, kwargs)

    def _call_slow(self, args, kwargs):
        key, leaves, bound = self._key_of(args, kwargs)
        cf = self._concrete(key, bound, leaves)
        if not kwargs:
            self._remember_fast(args, leaves, cf)
        return cf._call_flat(leaves)

    def _concrete(self, key, bound, leaves):
        """The concrete function cached for ``key``, traced (once, under the lock) if there is none."""
        cf = self._lookup(key)
        if cf is None:
            with self._lock:
                cf = self._lookup(key)
                if cf is None:
                    cf = self._trace(key, bound, leaves)
        return cf

    def _lookup(self, key):
        try:
            found = self._cache.get(key)
        except TypeError:  # an unhashable constant argument
            return None
        if found is None and self._general:
            for general, cf in self._general:
                if signature.keys_match(general, key):
                    self._cache[key] = cf
                    return cf
        return found

    def _remember_fast(self, args, leaves, cf):
        """Makes the hot path of ``__call__`` find ``cf`` for calls like this one, when it can."""
        key = signature.flat_key(args)
        if key is None or any(type(a) is float and a != a for a in args):
            return  # NaN never equals itself: a key holding it would never be found
        index = [i for i, a in enumerate(args) if type(a) is np.ndarray or isinstance(a, np.generic)]
        if len(index) != len(leaves) or any(args[i] is not leaf for i, leaf in zip(index, leaves)):
            return  # defaults or signature conversions hold arrays: the flat key does not say it all
        self._fast[key] = (cf, None if len(index) == len(args) else tuple(index))

    def _inline(self, args, kwargs):
        """Traces the Python body into the current graph (a call from inside another trace)."""
        fn = self._callable()
        instance = self._instance()
        if instance is not None:
            return fn(instance, *args, **kwargs)
        return fn(*args, **kwargs)

    def _callable(self):
        if self._traced_callable is None:
            fn = self._python_function
            self._traced_callable = self._trace_transform(fn) if self._trace_transform is not None else fn
        return self._traced_callable

    # -- tracing -------------------------------------------------------------

    def _trace(self, key, bound, leaves):
        if self._reduce_retracing and self.input_signature is None:
            key = self._relaxed(key)
        specs = []
        for component in key:
            signature.leaf_specs(component, specs)
        graph = Graph(_identifier(self._name, "function"))
        with variables.creation_scope(self._tracing_count == 0, self._name) as created, graph.as_default():
            placeholders = iter(specs)

            def make_leaf(path):
                dtype, shape = next(placeholders)
                return graph.add_placeholder(dtype, shape, name=_identifier(path, "input"))

            values = self._bound_values(bound)
            if self.input_signature is not None:
                traced_values = {
                    name: signature.rebuild_spec(spec, make_leaf, name)
                    for (name, _), spec in zip(values, self.input_signature)
                }
            else:
                traced_values = {name: signature.rebuild(value, make_leaf, name) for name, value in values}
            for name, value in traced_values.items():
                bound.arguments[name] = value
            result = self._callable()(*bound.args, **bound.kwargs)
            outputs = []
            template = self._flatten_output(result, outputs, graph, "result")
        graph.outputs = outputs
        input_signature = self._input_structure(bound)
        cf = ConcreteFunction(self, key, graph, template, input_signature)
        cf._variables += tuple(created)
        self._tracing_count += 1
        self._cache[key] = cf
        if any(shape is None or None in shape for _, shape in specs):
            self._general.append((key, cf))
        self._warn_retracing(key)
        if self._max_traces is not None:
            self._evict(self._max_traces)
        return cf

    def _traced_graphs(self) -> list:
        """The distinct concrete functions cached, oldest first."""
        return list({id(cf): cf for cf in self._cache.values()}.values())

    def _evict(self, keep: int) -> None:
        """Drops the oldest cached concrete functions until ``keep`` remain (under the lock)."""
        cached = self._traced_graphs()
        for old in cached[: max(0, len(cached) - keep)]:
            for key in [k for k, cf in self._cache.items() if cf is old]:
                del self._cache[key]
            for key in [k for k, entry in self._fast.items() if entry[0] is old]:
                del self._fast[key]
            self._general = [(k, cf) for k, cf in self._general if cf is not old]

    def _relaxed(self, key):
        """With reduce_retracing: ``key`` relaxed against the keys traced before, if any fits."""
        for previous in list(self._cache):
            if len(previous) != len(key):
                continue
            relaxed = tuple(signature.relax_key(a, b) for a, b in zip(previous, key))
            if None not in relaxed and relaxed != key:
                return relaxed
        return key

    def _input_structure(self, bound):
        """(args, kwargs) of the traced call with TensorSpecs in place of the placeholders."""

        def spec_of(value):
            return _map_leaves(value, Tensor, lambda t: TensorSpec(t.shape, t.dtype, name=t.op.name))

        args = tuple(spec_of(v) for v in bound.args)
        if self._instance_ref is not None:
            args = args[1:]
        return args, {k: spec_of(v) for k, v in bound.kwargs.items()}

    def _flatten_output(self, value, outputs, graph, path):
        """The structure template of a returned value; appends its tensors to ``outputs``."""
        if isinstance(value, Tensor):
            if value.op.graph is not graph:
                raise TracingError(
                    f"{self._label()} returned tensor {value.name} as {path}, which belongs to another graph "
                    f"(created at {value.op.location or '<unknown>'}): a tensor escaped the trace that made "
                    "it (e.g. kept in a global or an attribute). Compute it inside this function."
                )
            outputs.append(value)
            return _Out(len(outputs) - 1)
        if isinstance(value, (np.ndarray, np.generic)):
            outputs.append(apply.constant(value))
            return _Out(len(outputs) - 1)
        if isinstance(value, variables.Variable):
            outputs.append(value.read_value())
            return _Out(len(outputs) - 1)
        if isinstance(value, tuple):
            items = [self._flatten_output(v, outputs, graph, f"{path}[{i}]") for i, v in enumerate(value)]
            return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
        if isinstance(value, list):
            return [self._flatten_output(v, outputs, graph, f"{path}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, dict):
            return {k: self._flatten_output(v, outputs, graph, f"{path}[{k!r}]") for k, v in value.items()}
        if type(value) in signature.FAST_SCALARS or isinstance(value, signature.CONSTANT_OBJECTS):
            return value
        raise TypeError(
            f"{self._label()} returned a {type(value).__name__} as {path} ({value!r:.60}): a traced function "
            "may return tensors, numpy values, Python scalars/strings/None and tuples/lists/dicts/namedtuples "
            "of those"
        )

    def _warn_retracing(self, key):
        previous, self._last_key = self._last_key, key
        retraces = self._tracing_count - 1
        if self._warned or retraces < RETRACE_WARNING_THRESHOLD or previous is None:
            return
        self._warned = True
        changed = [(n, old, new) for n, old, new in zip(self._names(), previous, key) if old != new]
        what = "; ".join(
            f"argument {n!r} changed from {signature.describe(old)} to {signature.describe(new)}"
            for n, old, new in changed
        )
        fix = "give an input_signature with None for dimensions that vary, or use reduce_retracing=True"
        if any(new[0] == "P" for _, _, new in changed):
            fix = "pass numbers that vary as numpy values (e.g. np.float32(x)) rather than Python scalars; " + fix
        message = (
            f"{self._label()} was retraced {retraces} times (traced {self._tracing_count} times); last retrace: "
            f"{what or 'arguments changed'}. Every new dtype/shape of an array argument and every new value "
            f"of a Python scalar argument traces a new graph. To fix it, {fix}."
        )
        warn_at_user(message, RetracingWarning)

    # -- concrete functions --------------------------------------------------

    def check_arguments(self, *args, **kwargs) -> None:
        """Raises the ``TypeError``/``ValueError`` a call would raise for bad arguments, without tracing.

        ``TensorSpec`` values stand for arrays, as in ``get_concrete_function``.
        """
        self._key_of(args, kwargs, allow_specs=True)

    def get_concrete_function(self, *args, **kwargs) -> ConcreteFunction:
        """The concrete function for these arguments (``TensorSpec``s allowed), tracing it if needed."""
        if not args and not kwargs and self.input_signature is not None:
            args = tuple(self.input_signature)
        key, leaves, bound = self._key_of(args, kwargs, allow_specs=True)
        return self._concrete(key, bound, leaves)

    # -- methods -------------------------------------------------------------

    def __get__(self, instance, owner=None):
        if instance is None or self._instance_ref is not None:
            return self
        found = self._bound.get(id(instance))
        if found is not None and found._instance() is instance:
            return BoundFunction(found, instance)
        bound = Function(
            self._python_function,
            input_signature=None,
            trace_transform=self._trace_transform,
            jit_compile=self._jit_compile,
            optimize=self._optimize,
            parallel=self.parallel,
            reduce_retracing=self._reduce_retracing,
            max_traces=self._max_traces,
            name=self._name,
            _instance=self._instance_reference(instance),
        )
        if self.input_signature is not None:
            bound.input_signature = bound._check_signature(self.input_signature)
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


def _identifier(text: str, default: str) -> str:
    """``text`` made a readable identifier for graph and op names (``<lambda>`` -> ``lambda``)."""
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in text).strip("_")
    return name or default

