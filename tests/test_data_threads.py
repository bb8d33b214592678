"""rt.data threads: prefetch and parallel map keep the order, pass errors on, and never leak a thread."""

import gc
import threading

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.data import AUTOTUNE, Dataset, threads

ag.convert  # noqa: B018 - loads autograph.api, which installs the conversion hook


def data_threads():
    return [t for t in threading.enumerate() if t.name.startswith(threads.THREAD_PREFIX)]


@pytest.fixture(autouse=True)
def no_leaked_threads():
    assert data_threads() == []
    yield
    gc.collect()
    assert data_threads() == []


def slow_square(x):
    m = rt.reshape(rt.cast(x, "float64"), (1, 1)) * np.ones((40, 40))
    return rt.reduce_sum(rt.matmul(m, m)) * 0 + x * x


@pytest.mark.parametrize("parallel", [1, 2, 3, AUTOTUNE])
def test_parallel_map_keeps_the_input_order(parallel):
    ds = Dataset.range(50).map(slow_square, num_parallel_calls=parallel)
    assert [int(v) for v in ds] == [i * i for i in range(50)]


def test_non_deterministic_parallel_map_yields_every_element():
    ds = Dataset.range(50).map(slow_square, num_parallel_calls=3, deterministic=False)
    assert sorted(int(v) for v in ds) == [i * i for i in range(50)]


@pytest.mark.parametrize("pipeline", [
    lambda: Dataset.range(10 ** 9).prefetch(4),
    lambda: Dataset.range(10).repeat().map(slow_square, num_parallel_calls=2).prefetch(AUTOTUNE),
    lambda: Dataset.range(10).repeat().prefetch(2).map(slow_square, num_parallel_calls=2).prefetch(1),
])
def test_break_out_of_an_infinite_pipeline_stops_its_threads(pipeline):
    seen = 0
    for _ in pipeline():
        seen += 1
        if seen == 25:
            break
    assert seen == 25
    # the for loop dropped its iterator: the generators' finally blocks joined the threads
    assert data_threads() == []


def test_dropped_iterator_stops_its_threads():
    it = iter(Dataset.range(10).repeat().prefetch(3).map(slow_square, num_parallel_calls=2))
    next(it)
    assert data_threads() != []
    del it
    assert data_threads() == []


def test_exception_in_the_consumer_stops_the_threads():
    with pytest.raises(KeyError):
        for value in Dataset.range(100).repeat().prefetch(2):
            if value == 7:
                raise KeyError("consumer")
    gc.collect()
    assert data_threads() == []


def check_small(x):
    assert x < 5, "element too large"
    return x


@pytest.mark.parametrize("make", [
    lambda: Dataset.range(20).map(check_small, num_parallel_calls=2).prefetch(2),
    lambda: Dataset.range(20).prefetch(3).map(check_small),
    lambda: Dataset.range(20).map(check_small).prefetch(AUTOTUNE),
])
def test_map_error_reaches_the_consumer_through_threads(make):
    got = []
    with pytest.raises(AssertionError, match="element too large") as info:
        for value in make():
            got.append(int(value))
    assert got == [0, 1, 2, 3, 4]
    assert any("check_small' defined at" in note and "test_data_threads.py:" in note for note in info.value.__notes__)


def test_generator_error_reaches_the_consumer_through_prefetch():
    def gen():
        yield 1
        raise RuntimeError("generator broke")

    ds = Dataset.from_generator(gen, rt.TensorSpec((), "int64")).prefetch(2)
    with pytest.raises(RuntimeError, match="generator broke"):
        list(ds)


def test_autotuned_prefetch_buffer_grows_only_up_to_its_limit():
    room = threads.Room(1)
    for _ in range(20):
        room.grow(threads.MAX_AUTOTUNED_BUFFER)
    assert room.capacity == threads.MAX_AUTOTUNED_BUFFER


def _threads_seen_while_iterating(ds):
    seen, values = set(), []
    for value in ds:
        seen.update(t.name.rsplit("_", 1)[0] for t in data_threads())
        values.append(int(value))
    return values, seen


def test_autotune_keeps_cheap_map_calls_inline(monkeypatch):
    monkeypatch.setattr(threads, "INLINE_SECONDS", 10.0)  # every call is "cheap": no timing in the test
    ds = Dataset.range(2000).map(lambda v: v + 1, num_parallel_calls=AUTOTUNE).with_options(
        rt.data.Options(inject_prefetch=False))
    values, seen = _threads_seen_while_iterating(ds)
    assert values == list(range(1, 2001)) and seen == set()


def sleepy(v):
    import time

    def nap(x):
        time.sleep(0.002)  # releases the GIL, as a large numpy op does
        return x * 3

    return rt.py_function(nap, [v], "int64", shape=())


def test_autotune_moves_costly_map_calls_to_threads_in_order(monkeypatch):
    monkeypatch.setattr(threads, "INLINE_SECONDS", 0.0)  # every call is "costly"
    ds = Dataset.range(40).map(sleepy, num_parallel_calls=AUTOTUNE).with_options(
        rt.data.Options(inject_prefetch=False))
    values, seen = _threads_seen_while_iterating(ds)
    assert values == [3 * v for v in range(40)]
    assert seen == {f"{threads.THREAD_PREFIX}-map"}


def test_a_prefetch_of_cheap_elements_makes_them_inline(monkeypatch):
    # handing a cheap element to a thread costs more than making it: no thread, the same elements
    monkeypatch.setattr(threads, "INLINE_SECONDS", 10.0)
    ds = Dataset.range(1500).map(lambda v: v * 2).prefetch(2)
    values, seen = _threads_seen_while_iterating(ds)
    assert values == [2 * v for v in range(1500)] and seen == set()


@pytest.mark.parametrize("buffer_size", [1, 3, AUTOTUNE])
def test_a_prefetch_of_costly_elements_moves_them_to_its_thread_in_order(monkeypatch, buffer_size):
    monkeypatch.setattr(threads, "INLINE_SECONDS", 0.0)  # every element is "costly"
    ds = Dataset.range(40).map(sleepy).prefetch(buffer_size)
    values, seen = _threads_seen_while_iterating(ds)
    assert values == [3 * v for v in range(40)]
    assert seen == {f"{threads.THREAD_PREFIX}-prefetch"}


@pytest.mark.parametrize("inline_seconds", [10.0, 0.0], ids=["inline", "thread"])
def test_a_prefetch_passes_errors_on_and_stops_on_break_either_way(monkeypatch, inline_seconds):
    monkeypatch.setattr(threads, "INLINE_SECONDS", inline_seconds)
    with pytest.raises(AssertionError, match="element too large"):
        list(Dataset.range(30).map(check_small).prefetch(2))
    for i, _ in enumerate(Dataset.range(5).repeat().prefetch(2)):
        if i == 100:
            break
