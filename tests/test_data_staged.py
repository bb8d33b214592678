"""`for x in ds` inside ag.function: one DatasetReduce op, with the state rules of tensor loops.

Each function runs three ways: as plain Python over the dataset (the reference), traced by
ag.function (interpreted), and traced with jit_compile=True.
"""

import gc
import threading

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.data import Dataset, threads

NUMBERS = Dataset.from_tensor_slices(np.array([3, 8, 1, 9, 4, 7], dtype=np.int32))
BATCHES = Dataset.from_tensor_slices(np.arange(20, dtype=np.float32).reshape(10, 2)).batch(4)


def three_ways(fn, *args):
    """The Python result, the traced result and the compiled result of ``fn(*args)``."""
    return fn(*args), ag.function(fn)(*args), ag.function(fn, jit_compile=True)(*args)


def assert_same(python, *staged):
    for got in staged:
        assert type(got) is type(python) or isinstance(python, (int, float)), (python, got)
        np.testing.assert_equal(got, python)


def reduce_ops(fn, *args):
    graph = ag.function(fn).get_concrete_function(*args).graph
    return [op for op in graph.operations if op.type == "DatasetReduce"]


def sum_big(ds, limit):
    total = np.int32(0)
    for x in ds:
        if x > limit:
            total += x
    return total


def test_sum_with_a_tensor_condition():
    py, staged, jit = three_ways(sum_big, NUMBERS, np.int32(4))
    assert py == 24
    assert_same(py, staged, jit)
    assert len(reduce_ops(sum_big, NUMBERS, np.int32(4))) == 1


def count_and_sum(ds):
    n = 0
    total = 0
    for x in ds:
        n += 1
        total += x
    return n, total


def test_python_numbers_take_the_element_dtype():
    _, (n, total), (jn, jtotal) = three_ways(count_and_sum, NUMBERS)
    assert (int(n), int(total)) == (6, 32) and (int(jn), int(jtotal)) == (6, 32)
    assert total.dtype == np.int32  # 0 + int32 elements: int32, as in a tensor loop (NEP 50)


def first_above(ds, limit):
    found = -1
    for x in ds:
        if x > limit:
            found = x
            break
    return found


@pytest.mark.parametrize("limit", [0, 5, 8, 100])
def test_break_stops_the_reduction(limit):
    py, staged, jit = three_ways(first_above, NUMBERS, np.int32(limit))
    assert int(staged) == int(jit) == int(py)


def index_of(ds, wanted):
    i = 0
    for x in ds:
        if x == wanted:
            return i
        i += 1
    return -1


@pytest.mark.parametrize("wanted", [3, 9, 7, 5])
def test_return_inside_the_loop(wanted):
    py, staged, jit = three_ways(index_of, NUMBERS, np.int32(wanted))
    assert int(staged) == int(jit) == py


def batch_stats(ds):
    stats = {"sum": np.zeros(2, np.float32), "rows": 0}
    biggest = np.float32(-1.0)
    for batch in ds:
        stats["sum"] = stats["sum"] + rt.reduce_sum(batch, axis=0)
        stats["rows"] += rt.shape(batch)[0]
        biggest = rt.maximum(biggest, rt.reduce_max(batch))
    return stats, biggest


def test_composite_state_over_batches():
    (py_stats, py_big), (stats, big), (jstats, jbig) = three_ways(batch_stats, BATCHES)
    for got_stats, got_big in ((stats, big), (jstats, jbig)):
        np.testing.assert_array_equal(got_stats["sum"], py_stats["sum"])
        assert int(got_stats["rows"]) == py_stats["rows"] == 10
        assert got_big == py_big == 19.0


def concat_all(ds):
    seen = np.zeros((0,), np.int32)
    for x in ds:
        seen = rt.concat([seen, rt.reshape(x, (1,))], axis=0)
    return seen


def test_a_growing_dimension_is_relaxed():
    py, staged, jit = three_ways(concat_all, NUMBERS)
    np.testing.assert_array_equal(staged, py)
    np.testing.assert_array_equal(jit, py)


def unchanged_python_value(ds):
    scale = 2
    total = np.int32(0)
    for x in ds:
        total += x * scale
    return total, scale


def test_a_python_value_the_body_leaves_alone_stays_python():
    (_, py_scale), (total, scale), _ = three_ways(unchanged_python_value, NUMBERS)
    assert total == 64 and scale == 2 and type(scale) is int


def built_inside():
    ds = Dataset.range(5).map(lambda v: v * v)
    total = 0
    for x in ds:
        total += x
    return total


def test_a_dataset_built_inside_the_function():
    py, staged, jit = three_ways(built_inside)
    assert py == staged == jit == 30


def over_pairs(ds):
    acc = np.float32(0)
    for i, (a, b) in ds:
        acc += rt.cast(i, "float32") * a + b
    return acc


def test_structured_elements_are_unpacked():
    pairs = Dataset.zip((Dataset.from_tensor_slices(np.arange(4.0, dtype=np.float32)),
                         Dataset.from_tensor_slices(np.ones(4, np.float32)))).enumerate()
    py, staged, jit = three_ways(over_pairs, pairs)
    assert_same(py, staged, jit)


def test_printing_in_the_body_runs_once_per_element(capsys):
    @ag.function
    def show(ds):
        for x in ds:
            rt.print("element", x)
        return 0

    show(Dataset.range(3))
    assert capsys.readouterr().out == "element 0\nelement 1\nelement 2\n"


def test_an_empty_dataset_keeps_the_initial_state():
    py, staged, jit = three_ways(count_and_sum, NUMBERS.take(0))
    assert int(staged[0]) == int(jit[0]) == 0 and int(staged[1]) == 0


def test_infinite_dataset_with_break_frees_its_threads():
    ds = Dataset.range(10).repeat().map(lambda v: v + 1, num_parallel_calls=2).prefetch(2)
    assert int(ag.function(first_above)(ds, np.int64(8))) == 9
    gc.collect()
    assert [t for t in threading.enumerate() if t.name.startswith(threads.THREAD_PREFIX)] == []


def dtype_change(ds):
    total = np.int32(0)
    for x in ds:
        total = total + x * 0.5
    return total


def test_a_dtype_change_is_refused_naming_the_variable():
    with pytest.raises(ag.TracingError, match=r"'total' is int32 before the for loop over a dataset at "
                                              r".*test_data_staged.py:\d+ but float64 after an iteration"):
        ag.function(dtype_change)(NUMBERS)


def undefined_before(ds):
    for x in ds:
        last = x
    return last


def test_a_variable_undefined_before_the_loop_is_refused():
    with pytest.raises(ag.TracingError, match=r"'last' is not defined before the for loop over a dataset at "
                                              r".*test_data_staged.py:\d+ .* the dataset may be empty"):
        ag.function(undefined_before)(NUMBERS)


def appends(ds):
    out = []
    for x in ds:
        out.append(x)
    return out


def test_a_growing_list_is_refused():
    with pytest.raises(ag.TracingError, match=r"'out' is a list that the for loop over a dataset at .* grows or "
                                              r"shrinks; .* Dataset.scan or batch\(\)"):
        ag.function(appends)(NUMBERS)


def check_small(x):
    assert x < 5, "element too large"
    return x


def test_a_map_error_inside_a_staged_loop_reaches_the_caller():
    ds = Dataset.range(10).map(check_small)
    with pytest.raises(AssertionError, match="element too large") as info:
        ag.function(count_and_sum)(ds)
    notes = "\n".join(info.value.__notes__)
    assert "check_small' defined at" in notes and "DatasetReduce op" in notes


def test_outside_a_trace_the_loop_is_plain_python():
    assert ag.convert(count_and_sum, always_converted=True)(NUMBERS) == (6, 32)


def test_the_readme_example_gives_what_it_says(tmp_path):
    import importlib.util
    import pathlib
    import re

    readme = (pathlib.Path(__file__).resolve().parent.parent / "README.md").read_text()
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "rt.data.Dataset" in b]
    path = tmp_path / "readme_datasets.py"
    path.write_text("import numpy as np\nimport autograph as ag\n" + block)
    spec = importlib.util.spec_from_file_location("readme_datasets", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert "# np.float32(20.0)" in block and repr(module.total(module.ds)) == "np.float32(20.0)"
    assert "(TensorSpec([?], float32), TensorSpec([?], int64))" in block
    assert repr(module.ds.element_spec) == "(TensorSpec([?], float32), TensorSpec([?], int64))"


def _pipelines():
    xs = np.arange(24, dtype=np.float32)
    base = Dataset.from_tensor_slices(xs)
    gen = Dataset.from_generator(lambda: iter(range(7)), rt.TensorSpec((), "int64")).map(lambda v: rt.cast(v, "float32"))
    return {
        "from_tensor_slices": base,
        "range": Dataset.range(3, 30, 4).map(lambda v: rt.cast(v, "float32")),
        "from_generator": gen,
        "zip": Dataset.zip((base, base.skip(1))).map(lambda a, b: a * b),
        "concatenate": base.take(5).concatenate(base.skip(20)),
        "map": base.map(lambda v: v * v - 3.0),
        "filter": base.filter(lambda v: v % 3.0 == 1.0),
        "batch": base.batch(5).map(rt.reduce_sum),
        "batch_drop": base.batch(5, drop_remainder=True).map(rt.reduce_max),
        "unbatch": base.batch(5).unbatch(),
        "shuffle": base.shuffle(8, seed=3, reshuffle_each_iteration=False).take(10),
        "repeat": base.take(3).repeat(3),
        "take": base.take(4),
        "skip": base.skip(19),
        "take_while": base.take_while(lambda v: v < 9.0),
        "enumerate": base.enumerate().map(lambda i, v: rt.cast(i, "float32") * v),
        "scan": base.scan(np.float32(0), lambda s, v: (s + v, s)),
        "cache": base.map(lambda v: v + 1.0).cache(),
        "prefetch": base.prefetch(3),
        "parallel_map": base.map(lambda v: v * 2.0, num_parallel_calls=2),
    }


def weighted_sum(ds):
    total = np.float32(0)
    k = np.float32(1)
    for x in ds:
        total += x * k
        k += np.float32(1)
    return total


@pytest.mark.parametrize("name", sorted(_pipelines()))
def test_every_transformation_eager_staged_and_python(name):
    ds = _pipelines()[name]
    reference = np.float32(0)
    for k, x in enumerate(list(ds.with_options(rt.data.Options(optimize=False))), 1):
        reference += np.float32(x) * np.float32(k)  # plain Python over the unoptimized pipeline
    eager, staged, jit = three_ways(weighted_sum, ds)
    assert eager == reference
    assert staged == reference and jit == reference


def list_items(ds):
    acc = [0, 0]
    for x in ds:
        acc[0] += x
        acc[1] += 1
    return acc


def nested_return(ds, t):
    i = 0
    for x in ds:
        if x > t:
            return x, i
        i += 1
    return np.int32(-1), -1


class Box:
    def __init__(self):
        self.total = np.int32(0)


def attribute_state(ds):
    box = Box()
    for x in ds:
        box.total += x
    return box.total


def skip_small(ds):
    s = np.int32(0)
    for x in ds:
        if x < 5:
            continue
        s += x
    return s


@pytest.mark.parametrize("fn,args", [
    (list_items, ()), (nested_return, (np.int32(5),)), (nested_return, (np.int32(50),)), (attribute_state, ()),
    (skip_small, ()),
], ids=["list_items", "return_pair", "return_after_loop", "attribute", "continue"])
def test_state_rules_of_tensor_loops(fn, args):
    py, staged, jit = three_ways(fn, NUMBERS, *args)

    def ints(value):
        return [int(v) for v in value] if isinstance(value, (tuple, list)) else [int(value)]

    assert ints(staged) == ints(py) and ints(jit) == ints(py)
    assert type(staged) is type(py) or not isinstance(py, (tuple, list))
