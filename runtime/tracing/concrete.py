"""Concrete functions: one traced graph of a ``Function``, ready to run.

A ``ConcreteFunction`` holds the graph as traced and the graph that runs
(``execution_graph``: optimized unless ``optimize=False``), and how it runs:
the interpreter's plan (or the parallel runner, ``exec/parallel.py``), or,
with ``jit_compile=True``, the whole graph compiled by the default backend's
``compile`` (``core/backend.py``; numpy: ``backends/numpy/codegen.py``).  A
graph the backend cannot compile runs in the interpreter, after one
``AutoGraphWarning``.

Variable arguments: the graph is traced with a *stand-in* variable per
variable argument (``trace.py``); ``on_variables`` makes (once per
combination of variables) the copy whose ops use the variables passed in.

Outputs: the traced function's result is flattened into ``graph.outputs``
plus a *template* of its structure, in which ``OutputSlot(i)`` marks output
``i`` (``trace.py`` builds it); a run turns the flat output values back
into that structure (``_make_packer``), as numpy values -- 0-d results as
numpy scalars -- with Python constants passed through.  Outputs that are
``Const`` values are copied at each call, so a caller editing a returned
array in place cannot change the next call's result.
"""

from __future__ import annotations

import weakref

import numpy as np

from autograph.runtime import errors, optimizer
from autograph.runtime.core import backend, nest
from autograph.runtime.core.location import warn_at_user
from autograph.runtime.errors import AutoGraphWarning
from autograph.runtime.exec import parallel
from autograph.runtime.ops import variables
from autograph.runtime.optimizer import graph_util
from autograph.runtime.tracing import signature

class OutputSlot:
    """Marks output number ``index`` in a structure template (``trace.py`` builds templates)."""

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


def _fill(template, leaf):
    """``template`` with each ``OutputSlot`` replaced by ``leaf(index)``; other values kept."""
    return nest.map_structure(lambda v: leaf(v.index) if type(v) is OutputSlot else v, template)


def _make_packer(template, out_dtypes):
    """A function turning the flat list of output values into the returned structure."""
    if type(template) is OutputSlot:  # the common case of one returned tensor: no walk
        index = template.index
        dtype = out_dtypes[index]
        return lambda values: _to_numpy(values[index], dtype)

    def pack(values):
        def leaf(value):
            if type(value) is OutputSlot:
                return _to_numpy(values[value.index], out_dtypes[value.index])
            return value

        return nest.map_structure(leaf, template)

    return pack


class ConcreteFunction:
    """One traced graph of a ``Function``, for one input signature.

    ``graph`` is the graph as traced; ``execution_graph`` is the one that
    runs (optimized unless ``optimize=False``).  Calling it takes the same
    arguments as the ``Function``; they must fit the signature it was
    traced for.
    """

    def __init__(self, function, key, graph, template, structured_input_signature, arg_variables=(),
                 *, execution_graph=None, keep=None, created=()):
        self._function = function
        self._key = key
        self.graph = graph
        self._template = template
        self.structured_outputs = _fill(template, graph.outputs.__getitem__)
        self.structured_input_signature = structured_input_signature
        self.execution_graph = graph
        self._compiled = None
        self._variables = (_variables_used(graph) if keep is None else keep) + tuple(created)
        self._arg_variables = tuple(arg_variables)  # the stand-ins traced for variable arguments
        self._specialized: dict = {}  # handle ids of argument variables -> ConcreteFunction running on them
        self._argument_refs = ()  # a specialized one: weak references to its argument variables
        self._base = None  # a specialized one: the concrete function it was made from
        out_dtypes = [t.dtype for t in graph.outputs]
        self._pack = _make_packer(template, out_dtypes)
        self._run = None
        # (path, owner, key, value): places the graph writes back, valid while they hold these (escapes.py)
        self.guards = ()
        self._prepare(function, execution_graph)

    def _prepare(self, function, execution_graph):
        options = function.options
        graph = execution_graph
        if graph is None:  # If ops in v1 form (optimizer/lower_if.py) pay off only when interpreted
            interpreted = not options.jit_compile and options.backend in (None, "numpy")
            graph = optimizer.optimize(self.graph, lower_ifs=interpreted) if options.optimize else self.graph
        self.execution_graph = graph
        if options.backend not in (None, "numpy"):  # the whole graph compiled by that backend (jax: XLA)
            self._compiled = _compile(graph, function.binding.label, options.backend)
        elif options.jit_compile:
            self._compiled = _compile(graph, function.binding.label)
        if self._compiled is not None:
            self._run = self._compiled[0]
        else:
            self._run = parallel.runner(graph, parallel=options.parallel)
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

    def call_flat(self, leaves):
        """Runs the graph on the array leaves; returns the structured numpy result."""
        return self._pack(self._run(leaves))

    def on_variables(self, arguments) -> "ConcreteFunction":
        """This concrete function running on the variables ``arguments`` (``rt.Variable``s, one per
        stand-in, in order): the graph traced once, with the stand-ins' handles replaced.

        Made once per combination and cached; an entry whose variables are gone
        is dropped when the next one is made.
        """
        if self._base is not None:  # a specialized one: its base makes the one for ``arguments``
            return self._base.on_variables(arguments)
        if not self._arg_variables:
            return self
        ids = tuple(v.handle.id for v in arguments)
        found = self._specialized.get(ids)
        if found is None:
            with self._function.lock:
                found = self._specialized.get(ids)
                if found is None:
                    found = self._specialize(arguments)
                    live = {k: cf for k, cf in self._specialized.items() if cf._arguments_alive()}
                    live[ids] = found
                    self._specialized = live  # replaced, not changed: lock-free readers stay safe
        return found

    def _specialize(self, arguments):
        mapping = {stand_in.handle: var.handle for stand_in, var in zip(self._arg_variables, arguments)}
        stand_ins = {id(v) for v in self._arg_variables}
        keep = tuple(v for v in self._variables if id(v) not in stand_ins)  # not the arguments: no strong refs
        cf = ConcreteFunction(
            self._function, self._key, _substituted(self.graph, mapping), self._template,
            self.structured_input_signature, execution_graph=_substituted(self.execution_graph, mapping), keep=keep,
        )
        cf._argument_refs = tuple(weakref.ref(v) for v in arguments)
        cf._base = self
        return cf

    def _arguments_alive(self) -> bool:
        return all(ref() is not None for ref in self._argument_refs)

    def __call__(self, *args, **kwargs):
        function = self._function
        key, leaves, _, arg_variables = function.key_of(args, kwargs)
        if not signature.keys_match(self._key, key):
            raise TypeError(
                f"{function.binding.label}: this concrete function was traced for "
                f"{function.binding.describe_key(self._key)}, but got {function.binding.describe_key(key)}; call the "
                "Function itself to trace for new arguments"
            )
        return self.on_variables(arg_variables).call_flat(leaves)

    def compiled_source(self) -> str:
        """The Python source of the graph compiled by ``jit_compile`` (compiled now if needed)."""
        if self._compiled is None:
            compile_graph = backend.get().compile
            if compile_graph is None:
                raise errors.AutoGraphError(f"the {backend.get().name} backend has no compiler (Backend.compile)")
            return compile_graph(self.execution_graph)[1]
        return self._compiled[1]

    def __repr__(self):
        return f"<ConcreteFunction {self.graph.name} {self._function.binding.describe_key(self._key)}>"


def _all_graphs(graph):
    yield graph
    seen = {id(graph)}
    for sub in list(graph.library.values()):
        if id(sub) not in seen:
            seen.add(id(sub))
            yield sub


def _substituted(graph, handles):
    """A copy of ``graph`` (sub-graphs included) whose variable ops use ``handles[h]`` in place of ``h``."""
    copy = graph_util.clone(graph)
    for g in _all_graphs(copy):
        for op in g.operations:
            handle = op.attrs.get("handle")
            if isinstance(handle, variables.VariableHandle) and handle in handles:
                op.attrs["handle"] = handles[handle]
    return copy


def _variables_used(graph):
    """Strong references to the variables the graph's ops refer to (keeps them alive)."""
    found = {}
    for g in _all_graphs(graph):
        for op in g.operations:
            handle = op.attrs.get("handle")
            if isinstance(handle, variables.VariableHandle) and handle.id not in found:
                try:
                    found[handle.id] = variables.lookup_variable(handle)
                except RuntimeError:  # freed already: nothing to keep alive
                    pass
    return tuple(found[k] for k in sorted(found))


def _compile(graph, label, name=None):
    """``(function, source)`` of ``graph`` compiled by the default backend (or the backend
    ``name``: the option ``backend=``), or None (after a warning) when it has no compiler or
    cannot compile this graph."""
    be = backend.get(name)
    if be.compile is None:
        problem = f"the {be.name} backend has no compiler"
    else:
        try:
            return be.compile(graph)
        except errors.AutoGraphError as e:  # numpy: JitUnsupported
            problem = str(e)
    what = "jit_compile=True could not compile the graph" if name is None else f"backend={name!r} cannot run the graph"
    warn_at_user(f"{label}: {what} ({problem}); running the numpy interpreter instead", AutoGraphWarning)
    return None
