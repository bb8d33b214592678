"""rt.data pipelines saved and loaded: records that lie are refused, the work a loaded pipeline may do is bounded."""

import json

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.data import Dataset
from autograph.runtime.errors import GraphDefError
from autograph.runtime.exec import interpreter


@ag.function
def total(ds):
    s = np.int64(0)
    for x in ds:
        s += x
    return s


def _graph_def(ds):
    return json.loads(json.dumps(total.get_concrete_function(ds).graph.as_graph_def()))


def _pipeline(graph_def):
    node = next(n for n in graph_def["graph"]["nodes"] if n["type"] == "DatasetReduce")
    return node["attrs"]["dataset"]["dataset"]


def test_a_source_spliced_under_a_node_that_declares_other_elements_is_refused():
    graph_def = _graph_def(Dataset.range(5).take(5).map(lambda x: x // 2))
    floats = Dataset.from_tensor_slices(np.array([0.5, 1.5, 2.5], np.float32)).map(lambda x: rt.cast(x, "int64"))
    # a float32 source where the int64 range was: the take and the map's graph were made for int64
    _pipeline(graph_def)["nodes"][0] = _pipeline(_graph_def(floats))["nodes"][0]
    with pytest.raises(GraphDefError, match=r"dataset node 1 \(take\) declares elements int64\[\], but its "
                                            r"input\(s\) float32\[\] make it yield others"):
        rt.Graph.from_graph_def(graph_def)


def test_a_batch_that_declares_a_fixed_batch_dimension_it_does_not_make_is_refused():
    graph_def = _graph_def(Dataset.range(7).batch(3, drop_remainder=True).map(rt.reduce_sum))
    batch = next(n for n in _pipeline(graph_def)["nodes"] if n["kind"] == "batch")
    batch["attrs"]["drop_remainder"] = False  # a last batch of 1 row; the record still says [3]
    with pytest.raises(GraphDefError, match=r"\(batch\) declares elements int64\[3\], but its input\(s\) int64\[\]"):
        rt.Graph.from_graph_def(graph_def)


def test_a_range_declaring_vectors_is_refused():
    graph_def = _graph_def(Dataset.range(3).map(rt.reduce_sum))
    _pipeline(graph_def)["nodes"][0]["spec"] = {"spec": [{"tuple": [3]}, "int64"]}
    with pytest.raises(GraphDefError, match=r"dataset node 0 \(range\) must yield scalar numbers"):
        rt.Graph.from_graph_def(graph_def)


@pytest.mark.parametrize("make", [
    lambda: Dataset.range(10).map(lambda x: x * 2).filter(lambda x: x > 3).batch(3, drop_remainder=True).unbatch(),
    lambda: Dataset.from_tensor_slices(np.arange(40, dtype=np.int64)).map(lambda x: x + 1).batch(4).unbatch(),
    lambda: Dataset.zip((Dataset.range(4), Dataset.range(6))).map(lambda a, b: a + b).shuffle(3, seed=2).repeat(2),
    lambda: Dataset.range(3).concatenate(Dataset.range(5)).enumerate().map(lambda i, x: i * x).cache().skip(1),
    lambda: Dataset.range(6).scan(np.int64(0), lambda s, x: (s + x, s)).take_while(lambda x: x < 10),
], ids=["vectorized", "unbatch", "zip-shuffle-repeat", "concatenate-enumerate", "scan"])
def test_honest_records_of_every_kind_still_load_and_rerun(make):
    ds = make()
    want = total(ds)
    loaded = rt.Graph.from_graph_def(_graph_def(ds))
    assert interpreter.run_graph(loaded, [])[0] == want


@pytest.mark.parametrize("kind, make", [
    ("skip", lambda: Dataset.range(10 ** 15).skip(10 ** 14)),
    ("filter", lambda: Dataset.range(10 ** 15).filter(lambda x: x < 0)),
    ("batch", lambda: Dataset.range(10 ** 15).batch(10 ** 12)),
    ("filter", lambda: Dataset.range(10 ** 15).map(lambda x: x + 1, num_parallel_calls=2).filter(lambda x: x < 0)),
    ("filter", lambda: Dataset.range(10 ** 15).map(lambda x: x * 2).filter(lambda x: x < 0).prefetch(2)),
    ("chunks", lambda: Dataset.range(10 ** 15).map(lambda x: x * 2).batch(4).map(rt.reduce_sum)),
])
def test_a_loaded_pipeline_that_consumes_without_yielding_stops_at_the_iteration_budget(kind, make):
    # each element consumed and not passed on (skipped, rejected, batched) is an iteration of the run,
    # on the pipeline's threads too: before, these ran for 10**14 elements
    loaded = rt.Graph.from_graph_def(_graph_def(make()), max_iterations=1000)
    with pytest.raises(rt.ResourceLimitError, match=rf"the {kind} of a loaded pipeline would make one run of the "
                                                    r"loaded graph exceed max_iterations=1000"):
        interpreter.run_graph(loaded, [])


def test_an_honest_loaded_pipeline_that_drops_elements_fits_a_budget_of_its_size():
    ds = Dataset.range(300).filter(lambda x: x % 3 == 0).skip(10).batch(7).map(rt.reduce_sum)
    loaded = rt.Graph.from_graph_def(_graph_def(ds), max_iterations=300 + 10)
    assert interpreter.run_graph(loaded, [])[0] == total(ds)
    with pytest.raises(rt.ResourceLimitError):
        interpreter.run_graph(rt.Graph.from_graph_def(_graph_def(ds), max_iterations=250), [])


@pytest.mark.parametrize("make", [
    lambda a: Dataset.from_tensor_slices(a),
    lambda a: Dataset.from_tensor_slices({"x": a}).map(lambda d: d["x"]),
    lambda a: Dataset.from_tensor_slices(a).map(lambda x: x * 2.0).batch(3).unbatch(),  # vectorized: chunks of a
], ids=["eager", "dict", "vectorized"])
def test_a_dataset_holds_the_values_it_was_built_from(make):
    data = np.arange(8, dtype=np.float32)
    ds = make(data)
    before = [float(x) for x in ds]
    data[:] = -1.0  # as tf.data (a constant), the dataset does not see later changes to the array
    assert [float(x) for x in ds] == before

    @ag.function
    def first_sum(ds):
        s = np.float32(0)
        for x in ds:
            s += x
        return s

    assert first_sum(ds) == sum(before)


def test_a_dataset_passed_to_a_function_is_not_kept_alive_by_its_trace():
    import gc
    import weakref

    ds = Dataset.range(3)
    ref = weakref.ref(ds)
    assert total(ds) == 3
    del ds
    gc.collect()
    assert ref() is None


def _node_of(graph_def, kind):
    return next(n for n in _pipeline(graph_def)["nodes"] if n["kind"] == kind)


def test_a_filter_whose_spliced_predicate_returns_numbers_is_refused():
    graph_def = _graph_def(Dataset.range(10).filter(lambda x: x > 3))
    numbers = _node_of(_graph_def(Dataset.range(10).map(lambda x: x % 2)), "map")["attrs"]["function"]
    _node_of(graph_def, "filter")["attrs"]["function"] = numbers  # a graph that fits, but counts as a verdict
    with pytest.raises(GraphDefError, match=r"dataset node 1: the filter predicate must return a bool of shape "
                                            r"\[\], not int64\[\]"):
        rt.Graph.from_graph_def(graph_def)


def test_a_vectorized_stage_that_does_not_take_what_the_stage_before_gives_is_refused():
    data = np.arange(40, dtype=np.float32)

    def pipeline(first):
        ds = Dataset.from_tensor_slices(data).map(first).filter(lambda x: x > 3).batch(4).unbatch()
        return ds.with_options(rt.data.Options(map_filter_fusion=False))  # two stages

    graph_def = _graph_def(pipeline(lambda x: rt.cast(x, "int64")))
    floats = _node_of(json.loads(json.dumps(_graph_def_float(pipeline))), "vectorized")["attrs"]["stages"][0]
    _node_of(graph_def, "vectorized")["attrs"]["stages"][0] = floats  # float32 columns for an int64 filter
    with pytest.raises(GraphDefError, match=r"dataset node 2 \(stage 1\): the function's arguments int64\[\?\] "
                                            r"do not match the elements float32\[\?\]"):
        rt.Graph.from_graph_def(graph_def)


def _graph_def_float(pipeline):
    @ag.function
    def float_total(ds):
        s = np.float32(0)
        for x in ds:
            s += x
        return s

    ds = pipeline(lambda x: x * 2.0)  # alive while its graph is saved: the trace holds it weakly
    return float_total.get_concrete_function(ds).graph.as_graph_def()


@pytest.mark.parametrize("limits", [{"max_elements": 1000, "max_iterations": 7}, {"max_iterations": None}])
def test_a_loaded_pipelines_functions_get_the_callers_load_limits(limits):
    # they were loaded with the default limits: a stricter max_elements did not reach a map's graph,
    # and a trusted load (max_iterations=None) still bounded each call of a map function
    loaded = rt.Graph.from_graph_def(_graph_def(Dataset.range(5).map(lambda x: x + 1)), **limits)
    node = next(op for op in loaded.operations if op.type == "DatasetReduce").attrs["dataset"].dataset
    while node.kind != "map":
        node = node.inputs[0]
    options = node.attrs["fn"].graph.load_options
    assert {k: getattr(options, k) for k in limits} == limits


@pytest.mark.parametrize("field, value, message", [
    ("stop", 300, r"dataset node 0 \(range\): Dataset.range\(0, 300, 1\): the elements 0..299 do not fit dtype "
                  r"uint8"),
    ("step", 0, r"dataset node 0 \(range\): Dataset.range\(step=...\) must not be zero"),
])
def test_a_range_record_its_dtype_cannot_hold_is_refused(field, value, message):
    graph_def = _graph_def(Dataset.range(5, dtype="uint8").map(lambda x: rt.cast(x, "int64")))
    _pipeline(graph_def)["nodes"][0]["attrs"][field] = value  # overflowed (or spun) only when run
    with pytest.raises(GraphDefError, match=message):
        rt.Graph.from_graph_def(graph_def)
