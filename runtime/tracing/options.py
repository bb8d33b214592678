"""The options of ``rt.function``: one frozen record.

``rt.function(f, **options)`` builds an ``Options`` once; the ``Function``
keeps it, and a method's per-instance ``Function`` (``Function.__get__``)
gets the same record.  A field is added here and nowhere else.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional, Sequence


@dataclasses.dataclass(frozen=True)
class Options:
    """How a ``Function`` traces and runs its graphs.

    * ``input_signature`` -- a list of ``rt.TensorSpec`` (possibly nested in
      lists/tuples/dicts), one per positional parameter: the graph is traced
      once, for any arguments that fit it (``None`` dimensions accept any
      size); None: one trace per argument signature.
    * ``trace_transform`` -- applied to the Python function before it is
      traced (``ag.function`` passes ``ag.convert``); None: traced as is.
    * ``jit_compile`` -- ``True``: run the graph compiled by the numpy
      backend's ``compile`` (one Python/numpy function) instead of the
      interpreter; ``True``/``False`` only (XLA is ``backend="jax"``).
    * ``backend`` -- the name of the backend that runs the graphs: None (the
      default backend, numpy), ``"numpy"``, or ``"jax"`` (the whole graph
      lowered to JAX and compiled by XLA, ``runtime/backends/jax/``; needs
      ``pip install autograph[jax]``).  Checked, and an optional backend
      loaded, when the options are made (``backends.resolve``).
    * ``optimize`` -- run the optimized graph (constant folding, CSE,
      pruning, hoisting).
    * ``parallel`` -- let independent heavy work run on a second thread.
    * ``reduce_retracing`` -- relax the dimensions that changed to ``None``
      instead of tracing every new shape.
    * ``name`` -- the name of the graphs and of the function in messages
      (default: the Python function's ``__name__``).
    * ``max_traces`` -- if not None, at most that many concrete functions
      stay cached (the oldest traced is dropped first, and traced again if
      needed).
    """

    input_signature: Optional[Sequence[Any]] = None
    trace_transform: Optional[Callable] = None
    jit_compile: bool = False
    optimize: bool = True
    parallel: bool = True
    reduce_retracing: bool = False
    name: Optional[str] = None
    max_traces: Optional[int] = None
    backend: Optional[str] = None

    def __post_init__(self):
        if type(self.jit_compile) is not bool:
            hint = " (XLA compilation is backend='jax')" if isinstance(self.jit_compile, str) else ""
            raise TypeError(f"rt.function: jit_compile must be True or False, got {self.jit_compile!r}{hint}")
        if self.backend is not None:
            if not isinstance(self.backend, str):
                raise TypeError(f"rt.function: backend must be a backend's name or None, got {self.backend!r}")
            from autograph.runtime import backends  # an optional backend is imported on first use

            backends.resolve(self.backend)
        max_traces = self.max_traces
        if max_traces is not None and (type(max_traces) is not int or max_traces < 1):
            raise ValueError(f"rt.function: max_traces must be a positive int or None, got {max_traces!r}")


def make(options: dict) -> Options:
    """``Options(**options)``, with a clear error for a keyword that is not an option."""
    unknown = sorted(set(options) - {f.name for f in dataclasses.fields(Options)})
    if unknown:
        known = ", ".join(f.name for f in dataclasses.fields(Options))
        raise TypeError(f"rt.function got unknown option(s) {', '.join(unknown)}; the options are: {known}")
    return Options(**options)
