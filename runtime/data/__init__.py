"""``rt.data``: input pipelines (tf.data's ``Dataset``) over numpy values.

    from autograph import runtime as rt
    ds = rt.data.Dataset.from_tensor_slices({"x": xs, "y": ys}).shuffle(1000, seed=0).batch(32)
    for batch in ds: ...                      # numpy values
    ds.element_spec                           # {'x': TensorSpec([?, 3], float32), 'y': ...}
    print(ds)                                 # the pipeline, one transformation per line

The functions given to ``map``/``filter``/``take_while``/``scan``/``reduce``
are converted (once ``autograph`` is loaded) and traced into graphs against
the element spec when the pipeline is built (``functions.py``).  Modules:
``dataset.py`` (the node and its constructors), ``sources.py``,
``functions.py``, ``state_functions.py`` (``scan``/``reduce``),
``execution.py`` (a generator per kind), ``threads.py`` (prefetch, parallel
map), ``printing.py``, ``checks.py`` (argument checks); the static rewrites
run before a pipeline is first iterated: ``options.py`` (``rt.data.Options``,
``ds.with_options``), ``rewrites.py`` (the walker and rule table,
``ds.explain()``), ``fusion.py`` (fused functions), ``vectorize.py``
(map+batch vectorization); ``staged_loop.py`` and ``reduce_op.py``: ``for x
in ds`` inside ``ag.function`` as one ``DatasetReduce`` op; ``argument.py``: a
dataset passed to a traced function, held weakly by its trace; ``in_trace.py``:
``ds.reduce`` and Python iteration while a function is traced; ``saving.py``:
the pipeline in graph files.
"""

from autograph.runtime.data.checks import AUTOTUNE
from autograph.runtime.data.dataset import Dataset
from autograph.runtime.data.options import Options
from autograph.runtime.data import saving  # noqa: F401 - registers the graph-file codec of pipelines

__all__ = ["AUTOTUNE", "Dataset", "Options"]
