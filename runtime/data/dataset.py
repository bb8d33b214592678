"""``rt.data.Dataset``: an input pipeline as data.

A ``Dataset`` is one node of a pipeline: its ``kind`` (``'map'``,
``'batch'``, ...), its input datasets, its attributes (the traced
``DataFunction``s among them) and the ``element_spec`` of what it yields.
Building one checks its arguments and traces its functions at once, so a
bad argument or a function that does not fit the element spec fails where
the pipeline is written.  Nothing runs until it is iterated: ``iter(ds)``
runs the pipeline (``execution.py``) and yields numpy values;
``print(ds)`` shows it (``printing.py``).

    ds = (rt.data.Dataset.from_tensor_slices(np.arange(10))
          .map(lambda x: x * 2).filter(lambda x: x % 3 == 0).batch(2))
    list(ds)   # [array([0, 6]), array([12, 18])]
"""

from __future__ import annotations

from autograph.runtime.core import nest
from autograph.runtime.core.tensor import TensorSpec
from autograph.runtime.data import argument, checks, execution, printing, sources, staged_loop, state_functions
from autograph.runtime.data import in_trace, rewrites, structure
from autograph.runtime.data.functions import trace
from autograph.runtime.data.options import Options
from autograph.runtime.errors import TracingError


class Dataset:
    """A pipeline node; see the module docstring.  Build one with the static sources."""

    __slots__ = ("kind", "inputs", "attrs", "element_spec", "optimized", "__weakref__")

    def __init__(self, kind, inputs, attrs, element_spec):
        self.optimized = None  # (the optimized pipeline, the rewrites applied): rewrites.optimized
        self.kind = kind
        self.inputs = tuple(inputs)
        self.attrs = dict(attrs)
        self.element_spec = element_spec

    # -- sources -------------------------------------------------------------------------

    @staticmethod
    def from_tensor_slices(tensors) -> "Dataset":
        """The slices of ``tensors`` (a nest of arrays) along their first dimension."""
        leaves, spec = sources.slices(tensors)
        return Dataset("from_tensor_slices", (), {"leaves": leaves}, spec)

    @staticmethod
    def range(*args, dtype="int64") -> "Dataset":  # noqa: A003 - tf.data's name
        """``range(stop)``, ``range(start, stop[, step])`` as scalar ``dtype`` elements."""
        spec = TensorSpec((), dtype)
        start, stop, step = sources.range_bounds(args, spec.dtype)
        return Dataset("range", (), {"start": start, "stop": stop, "step": step}, spec)

    @staticmethod
    def from_generator(generator, output_signature) -> "Dataset":
        """The values of ``generator()`` (called anew on each iteration), checked against
        ``output_signature`` (a nest of ``TensorSpec``).  Runs Python code: not portable."""
        spec = sources.generator_signature(generator, output_signature)
        return Dataset("from_generator", (), {"generator": generator}, spec)

    @staticmethod
    def zip(datasets) -> "Dataset":  # noqa: A003 - tf.data's name
        """Elements of ``datasets`` (a nest of datasets) side by side, until the shortest ends."""
        inputs = nest.flatten(datasets)
        if not inputs or not all(isinstance(d, Dataset) for d in inputs):
            raise TypeError(f"Dataset.zip expects a nest of datasets, got {datasets!r:.80}")
        spec = nest.pack_as(datasets, [d.element_spec for d in inputs])
        return Dataset("zip", inputs, {"structure": datasets}, spec)

    def concatenate(self, other) -> "Dataset":
        """This dataset's elements, then ``other``'s (the specs must agree but for dimensions)."""
        return Dataset("concatenate", (self, other), {}, sources.concatenated_spec(self, other))

    # -- transformations -------------------------------------------------------------------

    def map(self, fn, num_parallel_calls=None, deterministic=True) -> "Dataset":  # noqa: A003
        """``fn(element)`` for each element (a tuple element is unpacked into arguments)."""
        parallel = checks.parallelism(num_parallel_calls, "map(num_parallel_calls=...)")
        function = trace(fn, self.element_spec, "the map function")
        return Dataset("map", (self,), {"fn": function, "num_parallel_calls": parallel,
                                        "deterministic": bool(deterministic)}, function.output_spec)

    def filter(self, predicate) -> "Dataset":  # noqa: A003
        """The elements for which ``predicate(element)`` is true (a scalar bool)."""
        function = trace(predicate, self.element_spec, "the filter predicate")
        _check_predicate(function, self.element_spec)
        return Dataset("filter", (self,), {"predicate": function}, self.element_spec)

    def take_while(self, predicate) -> "Dataset":
        """The elements up to the first for which ``predicate(element)`` is false."""
        function = trace(predicate, self.element_spec, "the take_while predicate")
        _check_predicate(function, self.element_spec)
        return Dataset("take_while", (self,), {"predicate": function}, self.element_spec)

    def batch(self, batch_size, drop_remainder=False) -> "Dataset":
        """Consecutive elements stacked along a new first dimension."""
        n = checks.positive(batch_size, "batch(batch_size=...)")
        _check_ranked(self.element_spec, "batch")
        spec = structure.batched(self.element_spec, n if drop_remainder else None)
        return Dataset("batch", (self,), {"batch_size": n, "drop_remainder": bool(drop_remainder)}, spec)

    def unbatch(self) -> "Dataset":
        """The rows of each element's components (all must have the same first dimension)."""
        for s in structure.flat(self.element_spec):
            if s.shape is None or len(s.shape) == 0:
                raise ValueError(
                    f"unbatch() needs elements whose components have a first dimension; this dataset's "
                    f"elements are {structure.format_spec(self.element_spec)}"
                )
        spec = structure.map_specs(lambda s: TensorSpec(s.shape[1:], s.dtype), self.element_spec)
        return Dataset("unbatch", (self,), {}, spec)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True) -> "Dataset":
        """Elements drawn at random from a buffer of ``buffer_size`` elements."""
        size = checks.buffer_size(buffer_size, "shuffle(buffer_size=...)", allow_autotune=False)
        if size == 0:
            raise ValueError("shuffle(buffer_size=...) must be at least 1, got 0")
        attrs = {"buffer_size": size, "seed": checks.seed(seed, "shuffle(seed=...)"),
                 "reshuffle_each_iteration": bool(reshuffle_each_iteration)}
        return Dataset("shuffle", (self,), {**attrs, "epochs": execution.EpochCounter(attrs["seed"])},
                       self.element_spec)

    def repeat(self, count=None) -> "Dataset":
        """This dataset ``count`` times (``None`` or -1: forever)."""
        return Dataset("repeat", (self,), {"count": checks.count(count, "repeat(count=...)")}, self.element_spec)

    def take(self, count) -> "Dataset":
        """The first ``count`` elements (-1: all)."""
        return Dataset("take", (self,), {"count": checks.count(count, "take(count=...)")}, self.element_spec)

    def skip(self, count) -> "Dataset":
        """All but the first ``count`` elements (-1: none)."""
        return Dataset("skip", (self,), {"count": checks.count(count, "skip(count=...)")}, self.element_spec)

    def enumerate(self, start=0) -> "Dataset":  # noqa: A003
        """``(index, element)`` pairs, the index an int64 scalar counting from ``start``."""
        first = checks.integer(start, "enumerate(start=...)")
        return Dataset("enumerate", (self,), {"start": first}, (TensorSpec((), "int64"), self.element_spec))

    def scan(self, initial_state, scan_func) -> "Dataset":
        """``state, out = scan_func(state, element)`` for each element; yields the ``out``s."""
        scan = state_functions.trace_scan(scan_func, initial_state, self.element_spec)
        return Dataset("scan", (self,), {"scan": scan}, scan.output_spec)

    def cache(self) -> "Dataset":
        """Keeps the elements of the first complete iteration in memory and replays them."""
        return Dataset("cache", (self,), {"store": execution.CacheStore()}, self.element_spec)

    def prefetch(self, buffer_size) -> "Dataset":
        """Computes up to ``buffer_size`` elements ahead, on a background thread."""
        size = checks.buffer_size(buffer_size, "prefetch(buffer_size=...)", allow_autotune=True)
        return Dataset("prefetch", (self,), {"buffer_size": size}, self.element_spec)

    def with_options(self, options) -> "Dataset":
        """This pipeline, optimized as ``options`` (an ``rt.data.Options``) says."""
        if not isinstance(options, Options):
            raise TypeError(f"with_options expects an rt.data.Options, got {type(options).__name__}")
        return Dataset("options", (self,), {"options": options}, self.element_spec)

    # -- consuming -------------------------------------------------------------------------

    def flat_elements(self):
        """The elements of the optimized pipeline, as flat tuples of numpy leaves (a generator)."""
        return execution.elements(rewrites.optimized(self))

    def reduce(self, initial_state, reduce_func):
        """``state = reduce_func(state, element)`` over all elements; the final state (numpy; while
        ``rt.function`` traces, tensors of one ``DatasetReduce`` op: ``in_trace.py``)."""
        if in_trace.tracing():
            return in_trace.reduce_in_trace(self, initial_state, reduce_func)
        reduction = state_functions.trace_reduce(reduce_func, initial_state, self.element_spec)
        return reduction.run(self.flat_elements())

    def __iter__(self):
        in_trace.check_python_iteration(self)
        spec = self.element_spec
        for leaves in self.flat_elements():
            yield structure.pack(spec, leaves)

    def explain(self) -> str:
        """The pipeline as written and as it runs, with the rewrites applied (``rewrites.py``)."""
        return rewrites.explain(self)

    def __ag_for_stmt__(self, extra_test, body, get_state, set_state, symbol_names, opts):
        """``for x in ds`` in converted code while tracing: one ``DatasetReduce`` op."""
        staged_loop.for_stmt(self, extra_test, body, get_state, set_state, symbol_names, opts)

    def __autograph_stand_in__(self):
        """What a trace of an ``rt.function`` uses in place of this argument (``argument.py``)."""
        return argument.stand_in(self)

    def __bool__(self):
        return True

    def __len__(self):
        raise TypeError("len() of a Dataset is not defined: its length is known only by iterating it")

    def to_text(self) -> str:
        """The pipeline, one transformation per line, sources first."""
        return printing.to_text(self)

    def __repr__(self):
        return printing.to_text(self)


def _check_predicate(function, spec):
    out = function.output_spec
    if nest.is_nested(out) or out.dtype.kind != "b" or out.shape != ():
        raise TracingError(
            f"{function.role} {function.label} must return a scalar bool, but for elements "
            f"{structure.format_spec(spec)} it returns {structure.format_spec(out)}. Return a comparison, "
            "or reduce with rt.reduce_all."
        )


def _check_ranked(spec, what):
    for s in structure.flat(spec):
        if s.shape is None:
            raise ValueError(f"{what}() needs components of known rank; got {structure.format_spec(spec)}")
