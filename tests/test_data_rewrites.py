"""rt.data static rewrites: each pinned (the pipeline after it) and checked to give identical elements."""

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.data import AUTOTUNE, Dataset, Options

ag.convert  # noqa: B018 - loads autograph.api, which installs the conversion hook

OFF = Options(optimize=False)


def kinds(ds):
    """The node kinds of the optimized pipeline, source first (a linear pipeline)."""
    node, out = _optimized(ds), []
    while True:
        out.append(node.kind)
        if not node.inputs:
            return out[::-1]
        node = node.inputs[0]


def _optimized(ds):
    from autograph.runtime.data import rewrites

    return rewrites.optimized(ds)


def same_elements(ds):
    """The elements of ``ds`` optimized and as written, compared exactly (dtype, shape, values)."""
    got, want = list(ds.flat_elements()), list(ds.with_options(OFF).flat_elements())
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            x, y = np.asarray(x), np.asarray(y)
            assert x.dtype == y.dtype and x.shape == y.shape
            np.testing.assert_array_equal(x, y)
    return got


def double(x):
    return x * 2


def inc(x):
    return x + 1


def positive(x):
    return x > 0


def small(x):
    return x < 50


XS = np.arange(-20, 80, dtype=np.int32)


def test_noop_elimination():
    ds = Dataset.range(10).take(-1).skip(0).repeat(1).prefetch(0).map(lambda x: x)
    assert kinds(ds) == ["range", "prefetch"]
    same_elements(ds)
    assert kinds(ds.with_options(Options(noop_elimination=False, inject_prefetch=False))) == [
        "range", "take", "skip", "repeat", "prefetch", "map"]


def test_an_identity_map_with_an_effect_is_kept():
    def checked(x):
        assert x < 5, "too large"
        return x

    ds = Dataset.range(10).map(checked)
    assert kinds(ds) == ["range", "map"]  # (nor a prefetch injected: the assert is an effect)
    with pytest.raises(AssertionError, match="too large"):
        list(ds)


def test_map_fusion():
    ds = Dataset.from_tensor_slices(XS).map(double).map(inc).take(30)
    assert kinds(ds) == ["from_tensor_slices", "map", "take", "prefetch"]
    assert "'double' defined at" in ds.explain() and "then 'inc' defined at" in ds.explain()
    same_elements(ds)
    assert kinds(ds.with_options(Options(map_fusion=False))) == ["from_tensor_slices", "map", "map", "take",
                                                                  "prefetch"]


def test_map_fusion_keeps_the_dtype_of_a_python_constant_between_the_maps():
    ds = Dataset.from_tensor_slices(XS).map(lambda x: (x, 3)).map(lambda x, k: x * k)
    assert kinds(ds)[:2] == ["from_tensor_slices", "map"] and len(kinds(ds)) == 3
    same_elements(ds)


def test_a_parallel_map_is_not_fused():
    ds = Dataset.from_tensor_slices(XS).map(double, num_parallel_calls=2).map(inc)
    assert kinds(ds) == ["from_tensor_slices", "map", "map", "prefetch"]
    same_elements(ds)


def test_filter_fusion():
    ds = Dataset.from_tensor_slices(XS).filter(positive).filter(small)
    assert kinds(ds) == ["from_tensor_slices", "filter", "prefetch"]
    assert [int(v) for v in ds] == [int(v) for v in XS if 0 < v < 50]
    same_elements(ds)


def test_fused_filters_keep_short_circuit_order():
    def divides(x):
        assert x != 0, "the second predicate saw a zero"
        return 100 % x == 0

    ds = Dataset.from_tensor_slices(XS).filter(positive).filter(divides)
    assert kinds(ds) == ["from_tensor_slices", "filter"]
    assert [int(v) for v in ds] == [v for v in range(1, 80) if 100 % v == 0]


def test_map_filter_fusion():
    ds = Dataset.from_tensor_slices(XS).map(double).filter(positive).take(100)
    assert kinds(ds) == ["from_tensor_slices", "map_filter", "take", "prefetch"]
    same_elements(ds)
    assert kinds(ds.with_options(Options(map_filter_fusion=False))) == [
        "from_tensor_slices", "map", "filter", "take", "prefetch"]


def test_injected_prefetch_and_explain():
    ds = Dataset.range(4).map(double)
    text = ds.explain()
    assert text.startswith("pipeline as written:\nrange(start=0, stop=4, step=1)  -> int64[]\nmap(")
    assert "optimized (rewrites: inject_prefetch):" in text
    assert text.endswith("prefetch(buffer_size=-1)  -> int64[]")
    assert kinds(Dataset.range(4).prefetch(3)) == ["range", "prefetch"]  # already ends with one


def test_optimize_false_runs_the_pipeline_as_written():
    ds = Dataset.range(5).map(double).map(inc).with_options(OFF)
    assert kinds(ds) == ["range", "map", "map"]
    assert "optimized (rewrites: none)" in ds.explain()


# -- map+batch vectorization ---------------------------------------------------------------


def features(x, y):
    return rt.sqrt(x * x + 1.0) * 0.5 - y, y * 2.0


def keep(a, b):
    return a > 0.0


def columns(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=n).astype(np.float32), rng.normal(size=n).astype(np.float32)


@pytest.mark.parametrize("drop", [False, True])
@pytest.mark.parametrize("size", [1, 7, 256, 5000])
def test_map_filter_batch_is_vectorized_with_identical_batches(size, drop):
    ds = Dataset.from_tensor_slices(columns()).map(features).filter(keep).batch(size, drop_remainder=drop)
    assert kinds(ds) == ["from_tensor_slices", "chunks", "vectorized", "rebatch", "prefetch"]
    got = same_elements(ds)
    kept = sum(1 for a, b in zip(*columns()) if np.sqrt(a * a + 1.0) * 0.5 - b > 0)
    assert sum(len(batch[0]) for batch in got) == (kept // size * size if drop else kept)
    assert ds.element_spec == (rt.TensorSpec((size if drop else None,), "float32"),) * 2


def test_vectorization_over_a_source_that_is_not_sliced():
    ds = Dataset.range(1000).map(double).filter(lambda v: v % 3 == 0).batch(10)
    assert kinds(ds) == ["range", "chunks", "vectorized", "rebatch", "prefetch"]
    same_elements(ds)


def test_vectorized_batches_do_not_alias_the_source():
    xs = np.arange(10, dtype=np.float32)
    ds = Dataset.from_tensor_slices(xs).map(lambda x: (x, x + 1)).batch(4)
    assert "vectorized" in kinds(ds)
    first = next(iter(ds))
    first[0][:] = -1
    assert xs[0] == 0 and same_elements(ds)


def reduce_row(x):
    return rt.reduce_sum(x)


def shape_dependent(x):
    return x * len(x.shape)


def add_row_constant(x):
    return x + np.ones((2, 3), np.float32)


def constant_output(x):
    return x, np.float32(7)


def noisy(x):
    return x + rt.random.uniform(())


@pytest.mark.parametrize("fn", [reduce_row, shape_dependent, add_row_constant, constant_output, noisy])
def test_functions_that_are_not_batch_polymorphic_stay_per_element(fn):
    shape = (3,) if fn is not noisy else ()
    ds = Dataset.from_tensor_slices(np.ones((12, *shape), np.float32)).map(fn).batch(4)
    assert "vectorized" not in kinds(ds)
    if fn is not noisy:
        same_elements(ds)


def test_vectorization_can_be_switched_off():
    ds = Dataset.from_tensor_slices(columns()).map(features).batch(8)
    assert kinds(ds) == ["from_tensor_slices", "chunks", "vectorized", "rebatch", "prefetch"]
    off = ds.with_options(Options(map_batch_vectorization=False))
    assert kinds(off) == ["from_tensor_slices", "map", "batch", "prefetch"]


def test_staged_loop_over_a_vectorized_pipeline():
    @ag.function
    def total(ds):
        s = np.float64(0.0)
        for a, b in ds:
            s += rt.cast(rt.reduce_sum(a) + rt.reduce_sum(b), "float64")
        return s

    ds = Dataset.from_tensor_slices(columns()).map(features).filter(keep).batch(64).prefetch(AUTOTUNE)
    assert float(total(ds)) == float(total(ds.with_options(OFF)))


def test_no_prefetch_is_injected_into_a_pipeline_with_effects(capsys):
    def show(x):
        rt.print("map", x)
        return x

    @ag.function
    def consume(ds):
        for x in ds:
            rt.print("body", x)
        return 0

    ds = Dataset.range(3).map(show)
    assert kinds(ds) == ["range", "map"]
    consume(ds)
    assert capsys.readouterr().out.split("\n") == ["map 0", "body 0", "map 1", "body 1", "map 2", "body 2", ""]
    gen = Dataset.from_generator(lambda: iter([1, 2]), rt.TensorSpec((), "int64"))
    assert kinds(gen) == ["from_generator"]


def test_fused_filters_before_a_batch_are_vectorized_as_masks_in_turn():
    import warnings

    def reciprocal_small(x):
        return 1.0 / x < 0.5  # divides by zero where the first predicate drops the element

    ds = (Dataset.from_tensor_slices(np.arange(-50, 50, dtype=np.float32))
          .filter(lambda x: x != 0.0)
          .filter(reciprocal_small)
          .batch(16))
    assert kinds(ds) == ["from_tensor_slices", "chunks", "vectorized", "rebatch", "prefetch"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second predicate never sees the zero: no divide warning
        got = same_elements(ds)
    assert np.concatenate([b[0] for b in got]).tolist() == [v for v in range(-50, 50) if v != 0 and 1.0 / v < 0.5]


@pytest.mark.parametrize("reshuffle", [True, False])
@pytest.mark.parametrize("count", [0, 1, 3, -1])
def test_shuffle_and_repeat_fusion(count, reshuffle):
    def make():
        return Dataset.range(10).shuffle(4, seed=5, reshuffle_each_iteration=reshuffle).repeat(count).take(45)

    ds = make()
    if count == 1:  # repeat(1) is a no-op, removed first
        assert kinds(ds) == ["range", "shuffle", "take", "prefetch"]
    else:
        assert kinds(ds) == ["range", "shuffle_repeat", "take", "prefetch"]
    fused = [int(v) for v in ds]
    assert fused == [int(v) for v in make().with_options(OFF)]  # the same epochs, in the same order
    if count != 1:
        unfused = make().with_options(Options(shuffle_and_repeat_fusion=False))
        assert kinds(unfused) == ["range", "shuffle", "repeat", "take", "prefetch"]
