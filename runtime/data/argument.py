"""A dataset passed to an ``rt.function``: the trace's stand-in, which holds it weakly.

A trace is keyed by a dataset argument's identity, held weakly
(``tracing/signature.py``: a ``Dataset`` defines neither equality nor a
trace key).  The graph does not take the pipeline as an input: its
``DatasetReduce`` runs the pipeline its attribute names.  So the trace
traces the argument's *stand-in* -- an ``argument`` node of the same
element spec that refers to the dataset weakly (``rebuild`` of the
signature calls ``Dataset.__autograph_stand_in__``) -- and whatever the
function builds on it (``ds.map(f)``) is built on the stand-in:

    @ag.function
    def total(ds): ...          # for x in ds: s += x
    total(ds)                   # traced once for ds; ds, its arrays and its trace are freed together
    total(other)                # another dataset (other data, shuffle state, cache): its own trace

Reusing one trace for an equal pipeline over other data would run the old
dataset, so a new dataset is traced anew; the cache drops a trace once its
dataset is gone.  Running (``execution.py``), saving (``saving.py``) and
the effect check of the rewrites see the dataset the stand-in refers to.
"""

from __future__ import annotations

import weakref

from autograph.runtime.errors import AutoGraphError

KIND = "argument"


def stand_in(ds):
    """The node a trace uses in place of the argument ``ds`` (a stand-in already is one)."""
    if ds.kind == KIND:
        return ds
    return type(ds)(KIND, (), {"dataset": weakref.ref(ds)}, ds.element_spec)


def referent(node):
    """The dataset the stand-in ``node`` stands for; an ``AutoGraphError`` once it is gone."""
    ds = node.attrs["dataset"]()
    if ds is None:
        raise AutoGraphError(
            "this graph loops over a dataset that was passed as an argument to its function and no longer "
            "exists (a trace does not keep its dataset arguments alive). Call the function with the dataset "
            "again, or build the dataset inside the function to embed it in the graph."
        )
    return ds
