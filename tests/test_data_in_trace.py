"""A dataset consumed by Python code while ag.function traces (runtime/data/in_trace.py): ds.reduce is
staged, Python iteration of a pipeline whose elements vary is refused."""

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.data import Dataset


def counting_generator():
    calls = {"n": 0}

    def values():
        calls["n"] += 1
        for i in range(3):
            yield np.int64(i * calls["n"])
    return values


def test_reduce_in_a_function_runs_at_every_call():
    # run at trace time it was a constant: 9, 9, 9 where Python gives 9, 12, 15
    ds = Dataset.from_generator(counting_generator(), rt.TensorSpec((), "int64"))

    @ag.function
    def total(ds):
        return ds.reduce(np.int64(0), lambda s, x: s + x)

    python = [ds.reduce(np.int64(0), lambda s, x: s + x) for _ in range(3)]
    assert python == [3, 6, 9]
    assert [int(total(ds)) for _ in range(3)] == [12, 15, 18]
    assert total.tracing_count == 1
    graph = total.get_concrete_function(ds).graph
    assert [op.type for op in graph.operations].count("DatasetReduce") == 1


def test_a_staged_reduce_has_the_loop_state_rules_and_converted_control_flow():
    def step(state, x):
        count, best = state
        if x % 3 == 0:  # a tensor condition: the function is converted
            best = rt.maximum(best, x)
        return count + 1, best

    @ag.function
    def stats(ds):
        return ds.reduce((0, np.int64(-1)), step)  # a Python 0 takes the element's dtype

    ds = Dataset.range(10).map(lambda x: x * 2)
    want = ds.reduce((0, np.int64(-1)), step)
    got = stats(ds)
    assert [int(v) for v in got] == [int(v) for v in want] == [10, 18]
    assert got[0].dtype == np.int64


def test_a_staged_reduce_that_changes_the_state_dtype_is_refused():
    @ag.function
    def bad(ds):
        return ds.reduce(np.int32(0), lambda s, x: s + rt.cast(x, "float32"))

    with pytest.raises(ag.TracingError, match=r"'the reduce state' is int32 before the for loop over a dataset "
                                              r"at .*test_data_in_trace.py:\d+ but float64 after an iteration"):
        bad(Dataset.range(3))


@pytest.mark.parametrize("make, why", [
    (lambda: Dataset.from_generator(counting_generator(), rt.TensorSpec((), "int64")), "generator"),
    (lambda: Dataset.range(5).shuffle(5, seed=1), "reshuffling shuffle"),
    (lambda: Dataset.range(5).shuffle(5, seed=1).repeat(2), "reshuffling shuffle+repeat"),
    (lambda: Dataset.range(5).map(lambda x: x + rt.cast(rt.random.uniform(()) * 0, "int64")), "random map"),
])
def test_python_iteration_of_a_varying_pipeline_while_tracing_is_refused(make, why):
    @ag.do_not_convert
    def python_sum(ds):
        return sum(int(x) for x in ds)

    @ag.function
    def f(ds):
        return python_sum(ds)

    with pytest.raises(ag.TracingError, match=r"a dataset is iterated in Python while a function is traced "
                                              r"\(at .*test_data_in_trace.py:\d+\).*may give other elements"):
        f(make())
    assert python_sum(make()) >= 0  # outside a trace it is plain Python iteration


def test_python_iteration_of_a_fixed_pipeline_while_tracing_is_kept():
    @ag.function
    def first_two(ds):
        it = iter(ds)
        return next(it) + next(it)

    ds = Dataset.range(5).shuffle(5, seed=4, reshuffle_each_iteration=False).map(lambda x: x * 10)
    order = [int(x) for x in ds]
    assert [int(first_two(ds)) for _ in range(2)] == [order[0] + order[1]] * 2


def _rebinds_a_dict_over_a_dataset(w):
    params = {"w": w}
    for x in rt.data.Dataset.from_tensor_slices(np.arange(3.0, dtype=np.float32)):
        params = {"w": params["w"] + x}
    return params["w"]


def _rebinds_a_dict_another_name_holds(w):
    params = {"w": w}
    initial = params
    for x in rt.data.Dataset.from_tensor_slices(np.arange(3.0, dtype=np.float32)):
        params = {"w": params["w"] + x}
    params["w"] = 0.0  # Python: changes initial too when the dataset is empty
    return initial["w"]


def test_a_dict_rebound_in_a_loop_over_a_dataset_is_a_new_object():
    assert ag.function(_rebinds_a_dict_over_a_dataset)(np.float32(1.0)) == 4.0
    with pytest.raises(ag.TracingError, match=r"'params' is rebound to a new dict in the body of the for loop over "
                                              r"a dataset at .* which 'initial' holds too"):
        ag.function(_rebinds_a_dict_another_name_holds)(np.float32(1.0))
