"""rt.data refuses arrays it would change on the way in (a masked array's mask, np.matrix rows, dtypes the
runtime does not have), naming where the value was given; plain arrays and harmless subclasses pass."""

import numpy as np
import pytest

from autograph import runtime as rt
from autograph.runtime.data import Dataset

MASKED = np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0])
MASK_LOST = r"is a masked array; a dataset holds plain arrays, so its mask would be lost. Pass x.filled"


@pytest.mark.parametrize("make, where", [
    (lambda: Dataset.from_tensor_slices(MASKED), r"from_tensor_slices: tensors "),
    (lambda: Dataset.from_tensor_slices({"a": np.arange(3.0), "b": MASKED}), r"from_tensor_slices: tensors\['b'\] "),
    (lambda: Dataset.from_tensor_slices((np.arange(3), np.ma.masked)), r"from_tensor_slices: tensors\[1\] "),
    (lambda: Dataset.range(3).reduce(np.ma.masked_array([0.0], mask=[1]), lambda s, x: s),
     r"the initial state of the reduce function "),
    (lambda: Dataset.range(3).scan((np.int64(0), MASKED), lambda s, x: (s, x)),
     r"the initial state\[1\] of the scan function "),
], ids=["slices", "dict-component", "masked-constant", "reduce-state", "scan-state"])
def test_a_masked_array_is_refused_where_it_is_given(make, where):
    with pytest.raises(TypeError, match=where + MASK_LOST):
        make()


def test_a_generator_yielding_a_masked_array_is_refused_when_it_yields_it():
    def values():
        yield np.arange(3.0)
        yield MASKED

    ds = Dataset.from_generator(values, rt.TensorSpec((3,), "float64"))
    it = iter(ds)
    assert list(next(it)) == [0.0, 1.0, 2.0]
    with pytest.raises(TypeError, match=r"from_generator: value 1 of '.*values' " + MASK_LOST):
        next(it)


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_a_matrix_is_refused():
    with pytest.raises(TypeError, match=r"from_tensor_slices: tensors\[0\] is an np.matrix, whose rows are 2-d "
                                        r"matrices .* pass np.asarray\(x\)"):
        Dataset.from_tensor_slices((np.matrix([[1, 2], [3, 4]]), np.arange(2)))


@pytest.mark.parametrize("value, dtype", [
    (np.array([1j, 2.0]), "complex128"),
    (np.zeros(3, dtype=[("a", "f4"), ("b", "i4")]), r"\[\('a', '<f4'\)"),
    (np.array([1, "a"], dtype=object), "object"),
    (np.array(["2020-01-01"], dtype="M8[D]"), r"datetime64\[D\]"),
], ids=["complex", "structured", "object", "datetime"])
def test_dtypes_the_runtime_does_not_have_are_refused(value, dtype):
    with pytest.raises(TypeError, match=r"from_tensor_slices: tensors is not an array of numbers or bools the "
                                        r"runtime supports \(bool, int8, .*float64\): it has dtype " + dtype):
        Dataset.from_tensor_slices(value)
    with pytest.raises(TypeError, match=r"the initial state of the reduce function is not an array of numbers"):
        Dataset.range(2).reduce(value, lambda s, x: s)


def test_a_ragged_list_names_the_argument():
    with pytest.raises(ValueError, match=r"from_tensor_slices: a list in tensors is not rectangular"):
        Dataset.from_tensor_slices([[1, 2], [3]])


def test_harmless_ndarray_subclasses_are_taken_as_their_values(tmp_path):
    class Tagged(np.ndarray):
        pass

    mapped = np.memmap(tmp_path / "m.bin", dtype="float32", mode="w+", shape=(4,))
    mapped[:] = [1, 2, 3, 4]
    tagged = np.arange(3).view(Tagged)
    assert [float(x) for x in Dataset.from_tensor_slices(mapped)] == [1.0, 2.0, 3.0, 4.0]
    rows = list(Dataset.from_tensor_slices(tagged))
    assert [int(x) for x in rows] == [0, 1, 2] and all(type(x) is np.int64 for x in rows)


@pytest.mark.parametrize("start", [2**40, -1])
def test_a_python_int_initial_state_out_of_the_elements_range_is_numpys_overflow_error(start):
    # functools.reduce(f, ds, 2**40) over uint8 elements raises it too (NEP 50), never a wrapped value
    ds = Dataset.from_tensor_slices(np.arange(4, dtype=np.uint8))
    with pytest.raises(OverflowError, match=r"the initial state of the reduce function: Python integer"):
        ds.reduce(start, lambda s, v: s + v)
    with pytest.raises(OverflowError, match=r"initial state.*Python integer"):
        list(ds.scan(start, lambda s, v: (s + v, s)))
    assert ds.reduce(3, lambda s, v: s + v) == np.uint8(9)


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_a_generators_python_int_out_of_the_signatures_range_is_numpys_overflow_error(dtype):
    def gen():
        yield 5
        yield 300

    ds = Dataset.from_generator(gen, output_signature=rt.TensorSpec((), dtype))
    with pytest.raises(OverflowError, match=r"from_generator: value 1 of '.*gen': Python integer 300 out of bounds"):
        list(ds)
    assert list(ds.take(1)) == [np.dtype(dtype).type(5)]
