"""A dataset passed to ag.function: traced as a weak stand-in (runtime/data/argument.py)."""

import gc
import weakref

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.data import Dataset
from autograph.runtime.errors import AutoGraphError
from autograph.runtime.exec import interpreter


def _total_function():
    @ag.function
    def total(ds):
        s = np.float32(0)
        for x in ds:
            s += x
        return s
    return total


def _floats(values):
    return Dataset.from_tensor_slices(np.asarray(values, np.float32))


def test_neither_the_dataset_nor_its_arrays_outlive_the_call():
    total = _total_function()
    ds = _floats([1.0, 2.0, 3.0]).map(lambda x: x * 2.0)
    refs = [weakref.ref(ds), weakref.ref(ds.inputs[0].attrs["leaves"][0])]
    assert total(ds) == 12.0
    cf = total.get_concrete_function(ds)
    del ds
    gc.collect()
    assert [r() for r in refs] == [None, None]
    with pytest.raises(AutoGraphError, match=r"loops over a dataset that was passed as an argument to its "
                                             r"function and no longer exists"):
        interpreter.run_graph(cf.graph, [])


def test_other_data_of_the_same_structure_gives_its_own_result_from_its_own_trace():
    # the graph runs the dataset it was traced for: reusing it for other data would sum the old data
    total = _total_function()
    first, second = _floats([1.0, 2.0]), _floats([10.0, 20.0])
    assert total(first) == 3.0
    assert total(second) == 30.0
    assert total.tracing_count == 2
    assert total(first) == 3.0 and total(second) == 30.0
    assert total.tracing_count == 2  # the same dataset again: its trace


def test_the_trace_of_a_dead_dataset_is_dropped_and_a_new_one_traced():
    total = _total_function()
    for values in ([1.0], [2.0, 3.0], [4.0]):
        assert total(_floats(values)) == sum(values)
    assert total.tracing_count == 3
    ds = _floats([5.0])
    ref = weakref.ref(ds)
    assert total(ds) == 5.0
    del ds
    gc.collect()
    assert ref() is None


def test_a_pipeline_built_on_the_argument_in_the_function_runs_on_it_and_does_not_hold_it():
    @ag.function
    def evens_doubled(ds, limit):
        s = np.int64(0)
        for x in ds.filter(lambda v: v % 2 == 0).map(lambda v: v * 2):
            if x > limit:
                break
            s += x
        return s

    ds = Dataset.range(10)
    ref = weakref.ref(ds)
    assert evens_doubled(ds, np.int64(100)) == sum(2 * v for v in range(0, 10, 2))
    assert evens_doubled(ds, np.int64(9)) == 0 + 4 + 8
    assert "the dataset passed to the function" in repr(Dataset.range(1).__autograph_stand_in__())
    del ds
    gc.collect()
    assert ref() is None


def test_a_dataset_inside_a_container_argument_is_held_weakly_too():
    @ag.function
    def both(pair):
        s = np.int64(0)
        for x in pair["a"]:
            s += x
        for x in pair["b"]:
            s += 10 * x
        return s

    a, b = Dataset.range(3), Dataset.range(2)
    refs = [weakref.ref(a), weakref.ref(b)]
    assert both({"a": a, "b": b}) == 3 + 10
    del a, b
    gc.collect()
    assert [r() for r in refs] == [None, None]


def test_a_dataset_the_function_closes_over_is_part_of_the_graph():
    def make():
        ds = _floats([1.0, 2.0, 4.0])

        @ag.function
        def total():
            s = np.float32(0)
            for x in ds:
                s += x
            return s
        return total

    total = make()
    gc.collect()
    assert total() == 7.0 and total() == 7.0


def test_the_stand_in_runs_the_arguments_own_shuffle_state():
    # each iteration of a reshuffling dataset -- eager or in the graph -- is the next epoch of that dataset
    @ag.function
    def first(ds):
        out = np.int64(-1)
        for x in ds:
            out = x
            break
        return out

    ds, twin = (Dataset.range(50).shuffle(50, seed=3) for _ in range(2))
    seen = [int(next(iter(ds))), int(first(ds)), int(next(iter(ds))), int(first(ds))]
    assert seen == [int(next(iter(twin))) for _ in range(4)]
    assert len(set(seen)) > 1


def test_a_function_passing_its_dataset_argument_to_another_function():
    inner = _total_function()

    @ag.function
    def outer(ds):
        return inner(ds) + 1.0

    ds = _floats([1.0, 2.0])
    ref = weakref.ref(ds)
    assert outer(ds) == 4.0
    assert outer(_floats([5.0])) == 6.0
    del ds
    gc.collect()
    assert ref() is None
