"""rt.data.Dataset: every source and transformation against a plain Python reference."""

import collections
import itertools
import random

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.data import AUTOTUNE, Dataset

ag.convert  # noqa: B018 - loads autograph.api, which installs the conversion hook

Point = collections.namedtuple("Point", ["x", "y"])


def values(ds):
    return [_plain(e) for e in ds]


def _plain(element):
    if isinstance(element, dict):
        return {k: _plain(v) for k, v in element.items()}
    if isinstance(element, tuple):
        return type(element)(*map(_plain, element)) if hasattr(element, "_fields") else tuple(map(_plain, element))
    return np.asarray(element).tolist()


def test_from_tensor_slices_of_a_nest_yields_numpy_rows():
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    ys = np.array([1, 2, 3, 4], dtype=np.int32)
    ds = Dataset.from_tensor_slices({"x": xs, "y": ys})
    assert ds.element_spec == {"x": rt.TensorSpec((3,), "float32"), "y": rt.TensorSpec((), "int32")}
    got = list(ds)
    assert len(got) == 4
    assert isinstance(got[0]["y"], np.int32) and got[0]["x"].dtype == np.float32
    assert [(e["x"].tolist(), int(e["y"])) for e in got] == [(xs[i].tolist(), int(ys[i])) for i in range(4)]


def test_from_tensor_slices_rows_are_copies():
    xs = np.zeros((2, 2))
    row = next(iter(Dataset.from_tensor_slices(xs)))
    row[0] = 5.0
    assert xs[0, 0] == 0.0


def test_namedtuple_structure_is_kept():
    ds = Dataset.from_tensor_slices(Point(np.arange(3), np.arange(3) * 2.0))
    assert values(ds) == [Point(i, 2.0 * i) for i in range(3)]


@pytest.mark.parametrize("args", [(5,), (2, 9), (10, 0, -3), (0,)])
def test_range(args):
    ds = Dataset.range(*args)
    assert ds.element_spec == rt.TensorSpec((), "int64")
    assert values(ds) == list(range(*args))


def test_zip_and_concatenate():
    a, b = Dataset.range(3), Dataset.range(10, 20)
    assert values(Dataset.zip((a, b))) == list(zip(range(3), range(10, 20)))
    assert values(Dataset.zip({"a": a, "b": b})) == [{"a": i, "b": j} for i, j in zip(range(3), range(10, 20))]
    assert values(a.concatenate(b)) == list(range(3)) + list(range(10, 20))


def test_concatenate_relaxes_differing_dimensions():
    a = Dataset.from_tensor_slices(np.zeros((2, 3)))
    b = Dataset.from_tensor_slices(np.ones((1, 4)))
    assert a.concatenate(b).element_spec == rt.TensorSpec((None,), "float64")
    assert [e.shape for e in a.concatenate(b)] == [(3,), (3,), (4,)]


def test_from_generator_checks_and_casts_values():
    def gen():
        for i in range(3):
            yield i, [float(i)] * i

    sig = (rt.TensorSpec((), "int32"), rt.TensorSpec((None,), "float32"))
    ds = Dataset.from_generator(gen, output_signature=sig)
    got = list(ds)
    assert values(ds) == [(i, [float(i)] * i) for i in range(3)]
    assert got[1][0].dtype == np.int32 and got[2][1].dtype == np.float32
    assert "not portable" in ds.to_text()


def f_map(x):
    if x % 2 == 0:
        y = x * 10
    else:
        y = -x
    return y


def test_map_with_converted_control_flow():
    assert values(Dataset.range(6).map(f_map)) == [f_map(i) for i in range(6)]


def test_map_unpacks_tuple_elements_and_builds_structures():
    ds = Dataset.zip((Dataset.range(4), Dataset.range(4).map(lambda x: x * 1.5)))
    mapped = ds.map(lambda a, b: {"sum": a + b, "a": a})
    assert mapped.element_spec == {"a": rt.TensorSpec((), "int64"), "sum": rt.TensorSpec((), "float64")}
    assert values(mapped) == [{"sum": i + 1.5 * i, "a": i} for i in range(4)]


def test_map_of_a_python_constant_output():
    assert values(Dataset.range(2).map(lambda x: (x, 7))) == [(0, 7), (1, 7)]


def test_filter_and_take_while():
    assert values(Dataset.range(20).filter(lambda x: x % 3 == 0)) == [i for i in range(20) if i % 3 == 0]
    assert values(Dataset.range(20).take_while(lambda x: x * x < 50)) == list(itertools.takewhile(
        lambda x: x * x < 50, range(20)))


@pytest.mark.parametrize("n,drop", [(3, False), (3, True), (5, False), (10, True), (11, False), (11, True)])
def test_batch(n, drop):
    ds = Dataset.range(10).batch(n, drop_remainder=drop)
    ref = [list(range(i, min(i + n, 10))) for i in range(0, 10, n)]
    if drop:
        ref = [b for b in ref if len(b) == n]
    assert values(ds) == ref
    assert ds.element_spec == rt.TensorSpec((n if drop else None,), "int64")


def test_unbatch_inverts_batch():
    ds = Dataset.from_tensor_slices((np.arange(10), np.arange(10.0))).batch(4).unbatch()
    assert values(ds) == [(i, float(i)) for i in range(10)]
    assert ds.element_spec == (rt.TensorSpec((), "int64"), rt.TensorSpec((), "float64"))


@pytest.mark.parametrize("count", [0, 1, 3])
def test_repeat_take_skip(count):
    assert values(Dataset.range(3).repeat(count)) == list(range(3)) * count
    assert values(Dataset.range(5).take(count)) == list(range(5))[:count]
    assert values(Dataset.range(5).skip(count)) == list(range(5))[count:]


def test_minus_one_means_all():
    assert values(Dataset.range(4).take(-1)) == [0, 1, 2, 3]
    assert values(Dataset.range(4).skip(-1)) == []
    assert values(Dataset.range(3).repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]


def test_repeat_forever_of_an_empty_dataset_is_empty():
    assert values(Dataset.range(0).repeat()) == []


def test_enumerate():
    assert values(Dataset.range(3, 6).enumerate(start=10)) == list(enumerate(range(3, 6), 10))


def test_scan_running_sum():
    ds = Dataset.range(6).scan(0, lambda total, x: (total + x, total * 2))
    ref, total = [], 0
    for x in range(6):
        ref.append(total * 2)
        total += x
    assert values(ds) == ref


def test_reduce_takes_the_element_dtype_for_a_python_number():
    total = Dataset.from_tensor_slices(np.arange(5, dtype=np.int32)).reduce(0, lambda s, x: s + x)
    assert total == 10 and type(total) is np.int32
    mean = Dataset.from_tensor_slices(np.arange(4.0, dtype=np.float32)).reduce(
        (0.0, 0), lambda s, x: (s[0] + x, s[1] + 1))
    assert mean == (6.0, 4) and type(mean[0]) is np.float32


def test_reduce_relaxes_a_growing_state_shape():
    def grow(acc, x):
        return rt.concat([acc, rt.reshape(x, (1,))], axis=0)

    got = Dataset.range(4).reduce(np.zeros((0,), np.int64), grow)
    assert got.tolist() == [0, 1, 2, 3]


def test_shuffle_is_a_permutation_reproducible_with_a_seed():
    ds = Dataset.range(50).shuffle(10, seed=7)
    first, second = values(ds), values(ds)
    assert sorted(first) == list(range(50)) and first != list(range(50))
    assert first != second  # reshuffled each iteration
    again = Dataset.range(50).shuffle(10, seed=7)
    assert values(again) == first and values(again) == second  # the same sequence of epochs
    fixed = Dataset.range(50).shuffle(10, seed=7, reshuffle_each_iteration=False)
    assert values(fixed) == values(fixed)


def test_shuffle_keeps_elements_near_their_position():
    order = values(Dataset.range(100).shuffle(5, seed=1))
    assert all(order.index(i) >= i - 4 for i in range(100))  # an element leaves the buffer only after it enters


def test_shuffle_then_repeat_reshuffles_each_epoch():
    got = values(Dataset.range(10).shuffle(10, seed=3).repeat(2))
    assert sorted(got[:10]) == sorted(got[10:]) == list(range(10)) and got[:10] != got[10:]


def test_cache_replays_the_first_complete_iteration():
    calls = []

    def gen():
        calls.append(1)
        yield from range(3)

    ds = Dataset.from_generator(gen, rt.TensorSpec((), "int64")).cache()
    assert values(ds) == values(ds) == [0, 1, 2]
    assert len(calls) == 1


def test_cache_ignores_an_unfinished_iteration():
    calls = []

    def gen():
        calls.append(1)
        yield from range(3)

    ds = Dataset.from_generator(gen, rt.TensorSpec((), "int64")).cache()
    next(iter(ds))
    assert values(ds) == [0, 1, 2] and values(ds) == [0, 1, 2]
    assert len(calls) == 2


@pytest.mark.parametrize("size", [0, 1, 3, AUTOTUNE])
def test_prefetch(size):
    assert values(Dataset.range(20).map(lambda x: x + 1).prefetch(size)) == list(range(1, 21))


def test_random_pipeline_against_python():
    rng = random.Random(0)
    data = [rng.randrange(100) for _ in range(57)]
    ds = (Dataset.from_tensor_slices(np.array(data))
          .map(lambda x: x * 3)
          .filter(lambda x: x % 2 == 1)
          .skip(2).take(20).batch(4))
    odd = [x * 3 for x in data if (x * 3) % 2 == 1][2:22]
    assert values(ds) == [odd[i:i + 4] for i in range(0, len(odd), 4)]


def double(x):
    return x * 2


def test_pipeline_prints_one_transformation_per_line():
    ds = Dataset.from_tensor_slices(np.zeros((8, 2), np.float32)).map(double).batch(4, drop_remainder=True)
    lines = ds.to_text().splitlines()
    assert lines[0] == "from_tensor_slices(rows=8)  -> float32[2]"
    assert lines[1].startswith("map(fn='double' defined at ") and "test_data_dataset.py:" in lines[1]
    assert lines[2] == "batch(batch_size=4, drop_remainder=True)  -> float32[4,2]"
    assert repr(ds) == ds.to_text()


def test_zip_prints_its_inputs_as_blocks():
    text = Dataset.zip((Dataset.range(2), Dataset.range(3))).to_text()
    assert text.splitlines() == [
        "  input 0:",
        "    range(start=0, stop=2, step=1)  -> int64[]",
        "  input 1:",
        "    range(start=0, stop=3, step=1)  -> int64[]",
        "zip()  -> (int64[], int64[])",
    ]


def test_a_python_list_is_one_array_as_in_tf_data():
    ds = Dataset.from_tensor_slices(([1, 2, 3], [[1.0], [2.0], [3.0]]))
    assert ds.element_spec == (rt.TensorSpec((), "int64"), rt.TensorSpec((1,), "float64"))
    assert values(Dataset.from_tensor_slices([4, 5])) == [4, 5]


def test_an_unseeded_shuffle_without_reshuffling_repeats_one_order():
    fixed = Dataset.range(40).shuffle(40, reshuffle_each_iteration=False)
    assert values(fixed) == values(fixed) and sorted(values(fixed)) == list(range(40))
    reshuffled = Dataset.range(40).shuffle(40)
    assert values(reshuffled) != values(reshuffled)  # (equal by chance with probability 1/40!)
