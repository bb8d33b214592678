"""A graph that loops over a dataset saves its pipeline as data and reruns after loading."""

import copy
import json
import subprocess
import sys

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.data import Dataset
from autograph.runtime.errors import GraphDefError


def features(x, y):
    return rt.sqrt(x * x + 1.0) - y, y * 2.0


@ag.function
def total(ds):
    s = np.float32(0)
    for a, b in ds:
        s += rt.reduce_sum(a) + rt.reduce_sum(b)
    return s


def _vectorized_pipeline():
    xs, ys = np.arange(50, dtype=np.float32), np.ones(50, np.float32)
    return Dataset.from_tensor_slices((xs, ys)).map(features).filter(lambda a, b: a > 3.0).batch(8)


PIPELINE = _vectorized_pipeline()


def vectorized_pipeline():
    return PIPELINE  # one object: `total` traces it once


def graph_def_of(fn, ds):
    return json.loads(json.dumps(fn.get_concrete_function(ds).graph.as_graph_def()))


def test_a_saved_loop_reruns_in_a_process_without_the_users_code(tmp_path):
    ds = vectorized_pipeline()
    expected = total(ds)
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(graph_def_of(total, ds)))
    code = ("import json, sys\nfrom autograph import runtime as rt\n"
            f"g = rt.Graph.from_graph_def(json.load(open({str(path)!r})))\n"
            "print(repr(rt.run_graph(g, [])[0]))\n"
            "print(any('test_data_saving' in m for m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [repr(expected), "False"]


def mixed(ds):
    s = np.float64(0)
    n = 0
    for i, (x, r) in ds:
        s += rt.cast(x, "float64") * rt.cast(i + 1, "float64") + rt.cast(r, "float64")
        n += 1
        if n >= 40:
            break
    return s


def test_every_kind_round_trips():
    base = Dataset.from_tensor_slices(np.arange(12, dtype=np.int64))
    ds = Dataset.zip((
        base.map(lambda v: v * 3).concatenate(base.skip(2).take(5)).shuffle(4, seed=1,
                                                                         reshuffle_each_iteration=False).repeat(2),
        base.scan(np.int64(0), lambda s, v: (s + v, s)).cache().repeat(),
    )).enumerate().map(lambda i, pair: (i, pair)).prefetch(2)
    fn = ag.function(mixed)
    assert "shuffle_repeat" in ds.explain()
    expected = fn(ds)
    loaded = rt.Graph.from_graph_def(graph_def_of(fn, ds))
    assert rt.run_graph(loaded, [])[0] == expected
    assert rt.run_graph(loaded, [])[0] == expected  # and again (a cache and a shuffle of its own)


def test_a_generator_source_saves_with_a_warning_and_does_not_load():
    def gen():
        yield from range(3)

    ds = Dataset.from_generator(gen, rt.TensorSpec((), "int64"))

    @ag.function
    def count(ds):
        n = 0
        for _ in ds:
            n += 1
        return n

    with pytest.warns(ag.AutoGraphWarning, match=r"reads the Python generator '.*gen': the graph saves, but it "
                                                  r"cannot be loaded"):
        graph_def = graph_def_of(count, ds)
    with pytest.raises(GraphDefError, match=r"reads the Python generator '.*gen', which cannot be rebuilt from a "
                                            r"graph file"):
        rt.Graph.from_graph_def(graph_def)


def _record(graph_def):
    for node in graph_def["graph"]["nodes"]:
        if node["type"] == "DatasetReduce":
            return node["attrs"]["dataset"]["dataset"]
    raise AssertionError("no DatasetReduce")


def _node(record, kind):
    return next(n for n in record["nodes"] if n["kind"] == kind)


def _set(path, value):
    def edit(record):
        target = record
        for step in path[:-1]:
            target = target[step] if not callable(step) else step(target)
        target[path[-1]] = value
    return edit


HOSTILE = {
    "unknown kind": (_set([lambda r: r["nodes"], 0, "kind"], "exec"), r"dataset node 0 has the unknown kind 'exec'"),
    "a cycle": (_set([lambda r: r["nodes"], 0, "inputs"], [1]), r"dataset node 0: field 'inputs' must list earlier"),
    "a zero batch": (_set([lambda r: _node(r, "rebatch"), "attrs", "batch_size"], 0),
                     r"field 'batch_size' must be an integer >= 1"),
    "a bool for an int": (_set([lambda r: _node(r, "chunks"), "attrs", "rows"], True), r"field 'rows' must be an integer"),
    "a root out of range": (_set(["root"], 99), r"field 'root' must name one of its nodes"),
    "too many inputs": (_set([lambda r: _node(r, "chunks"), "inputs"], [0, 0]), r"\(chunks\) takes 1 inputs"),
    "a source that lies about its spec": (
        _set([lambda r: r["nodes"], 0, "spec"], {"tuple": [{"spec": [{"tuple": []}, "int32"]}] * 2}),
        r"does not fit its spec"),
    "a stage whose graph does not fit": (
        _set([lambda r: _node(r, "vectorized"), "attrs", "stages", 0, 1, "output_spec"],
             {"spec": [{"tuple": [None]}, "float32"]}),
        r"the function graph's outputs do not match its output spec"),
    "extra fields": (_set([lambda r: _node(r, "prefetch"), "attrs", "evil"], 1), r"must be a record with the fields"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_pipeline_record_is_a_graph_def_error(name):
    edit, message = HOSTILE[name]
    graph_def = graph_def_of(total, vectorized_pipeline())
    bad = copy.deepcopy(graph_def)
    edit(_record(bad))
    with pytest.raises(GraphDefError, match=message):
        rt.Graph.from_graph_def(bad)


def test_a_dataset_attribute_that_is_not_a_pipeline():
    bad = graph_def_of(total, vectorized_pipeline())
    for node in bad["graph"]["nodes"]:
        if node["type"] == "DatasetReduce":
            node["attrs"]["dataset"] = 3
    with pytest.raises(GraphDefError, match=r"field 'attrs.dataset' must be a dataset record"):
        rt.Graph.from_graph_def(bad)


def test_a_loaded_loop_over_a_huge_range_stops_at_the_iteration_budget():
    @ag.function
    def count(ds):
        n = np.int64(0)
        for _ in ds:
            n += 1
        return n

    ds = Dataset.range(10 ** 15)
    graph_def = graph_def_of(count, ds)
    loaded = rt.Graph.from_graph_def(graph_def, max_iterations=1000)
    with pytest.raises(rt.ResourceLimitError,
                       match=r"the DatasetReduce over 'dataset_body.*' would make one run of the loaded graph exceed "
                             r"max_iterations=1000"):
        rt.run_graph(loaded, [])
    small = rt.Graph.from_graph_def(graph_def_of(count, Dataset.range(500)), max_iterations=1000)
    assert rt.run_graph(small, [])[0] == 500
