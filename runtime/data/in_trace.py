"""A dataset consumed by Python code while an ``rt.function`` traces.

Run at trace time, ``ds.reduce(...)`` or ``list(ds)`` would make the
elements of that one iteration constants of the graph: every later call
would give them again.  That is only right for a pipeline whose elements
are the same each time it is iterated, so:

* ``reduce_in_trace``: ``ds.reduce(initial, fn)`` while tracing is staged,
  as the loop ``for x in ds: state = fn(state, x)`` (one ``DatasetReduce``
  op, ``staged_loop.py``, with the state rules of that loop), so it runs at
  every call, like tf.data's ``reduce`` in a ``tf.function``;
* ``check_python_iteration``: iterating in Python (``iter(ds)``, ``list(ds)``,
  a ``for`` in unconverted code) while tracing is refused for a pipeline
  that may give other elements each time (``rewrites.varies``: a generator
  source, a function with effects, a reshuffling shuffle); the elements of
  any other pipeline are the same at every call, and the trace may keep
  them.
"""

from __future__ import annotations

from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import user_location_text
from autograph.runtime.errors import TracingError
from autograph.runtime.operators import calls
from autograph.runtime.data import rewrites, staged_loop


def tracing() -> bool:
    return current_graph() is not None


def reduce_in_trace(ds, initial_state, reduce_func):
    """``ds.reduce(initial_state, reduce_func)`` in the graph being traced: the final state (tensors)."""
    if not callable(reduce_func):
        raise TypeError(f"the reduce function must be callable, got {type(reduce_func).__name__} "
                        f"{reduce_func!r:.60}")
    holder = [initial_state]

    def body(element):
        holder[0] = calls.converted_call(reduce_func, holder[0], element)

    def get_state():
        return (holder[0],)

    def set_state(values):
        holder[0] = values[0]

    staged_loop.for_stmt(ds, None, body, get_state, set_state, ("the reduce state",), {})
    return holder[0]


def check_python_iteration(ds):
    """Refuses Python iteration of ``ds`` while tracing if its elements may differ at the next call."""
    if tracing() and rewrites.varies(ds):
        raise TracingError(
            f"a dataset is iterated in Python while a function is traced (at {user_location_text()}): its "
            "elements would be computed once, at trace time, and kept by the graph, but this pipeline may "
            "give other elements each time it is iterated (a generator source, a function with effects or a "
            "reshuffling shuffle). Loop over it with `for x in ds` in converted code, or use ds.reduce: both "
            "run in the graph at every call."
        )
