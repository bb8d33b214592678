"""rt.data bad input: clear errors naming the argument or the user's function, when the pipeline is built."""

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.data import Dataset

ag.convert  # noqa: B018 - loads autograph.api, which installs the conversion hook


def notes(info):
    return "\n".join(getattr(info.value, "__notes__", []))


@pytest.mark.parametrize("make,message", [
    (lambda: Dataset.range(3).batch(0), r"batch\(batch_size=...\) must be at least 1, got 0"),
    (lambda: Dataset.range(3).batch(-2), r"batch\(batch_size=...\) must be at least 1, got -2"),
    (lambda: Dataset.range(3).shuffle(-1), r"shuffle\(buffer_size=...\) must not be negative, got -1"),
    (lambda: Dataset.range(3).shuffle(0), r"shuffle\(buffer_size=...\) must be at least 1, got 0"),
    (lambda: Dataset.range(3).prefetch(-5), r"prefetch\(buffer_size=...\) must not be negative \(or rt.data.AUTOTUNE\)"),
    (lambda: Dataset.range(3).take(-2), r"take\(count=...\) must be -1 \(meaning all\) or at least 0, got -2"),
    (lambda: Dataset.range(3).skip(-3), r"skip\(count=...\) must be -1"),
    (lambda: Dataset.range(3).repeat(-4), r"repeat\(count=...\) must be -1"),
    (lambda: Dataset.range(3).map(abs, num_parallel_calls=0), r"map\(num_parallel_calls=...\) must be None"),
    (lambda: Dataset.range(3).shuffle(4, seed=-1), r"shuffle\(seed=...\) must not be negative"),
    (lambda: Dataset.range(1, 5, 0), r"Dataset.range\(step=...\) must not be zero"),
])
def test_bad_arguments_are_value_errors_naming_them(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_non_integer_arguments_are_type_errors():
    with pytest.raises(TypeError, match=r"batch\(batch_size=...\) must be a Python or numpy integer, got float"):
        Dataset.range(3).batch(2.5)
    with pytest.raises(TypeError, match=r"take\(count=...\) must be a Python or numpy integer, got bool"):
        Dataset.range(3).take(True)


def test_from_tensor_slices_first_dimensions_must_agree():
    with pytest.raises(ValueError, match=r"the same first dimension, but tensors\['a'\] has 3, tensors\['b'\] has 4"):
        Dataset.from_tensor_slices({"a": np.zeros(3), "b": np.zeros(4)})


def test_from_tensor_slices_of_a_scalar():
    with pytest.raises(ValueError, match=r"from_tensor_slices: tensors\[1\] is a scalar"):
        Dataset.from_tensor_slices((np.zeros(3), 5.0))


def test_from_tensor_slices_of_strings():
    with pytest.raises(TypeError, match=r"from_tensor_slices: tensors is not an array of numbers or bools"):
        Dataset.from_tensor_slices(["a", "b"])


def test_map_function_that_does_not_fit_the_spec_fails_at_build_time():
    def project(x):
        return rt.matmul(x, np.ones((4, 2), np.float32))

    ds = Dataset.from_tensor_slices(np.zeros((5, 1, 3), np.float32))
    with pytest.raises(ValueError, match="matmul") as info:
        ds.map(project)
    assert "while tracing the map function 'test_map_function_that_does_not_fit_the_spec_fails_at_build_time." \
           "<locals>.project' defined at" in notes(info)
    assert "test_data_errors.py:" in notes(info) and "for arguments float32[1,3]" in notes(info)


def test_filter_predicate_must_return_a_scalar_bool():
    def keep(x):
        return x > 0

    ds = Dataset.from_tensor_slices(np.zeros((4, 3)))
    with pytest.raises(ag.TracingError, match=r"the filter predicate '.*keep' defined at .*test_data_errors.py:\d+ "
                                              r"must return a scalar bool, but for elements float64\[3\] it "
                                              r"returns bool\[3\]"):
        ds.filter(keep)
    with pytest.raises(ag.TracingError, match=r"the take_while predicate .* returns int64\[\]"):
        Dataset.range(3).take_while(lambda x: x + 1)


def test_map_function_raising_on_one_element_reaches_the_consumer():
    def check(x):
        assert x < 3, "x is too large"
        return x * 2

    ds = Dataset.range(10).map(check)
    it = iter(ds)
    assert [int(next(it)) for _ in range(3)] == [0, 2, 4]
    with pytest.raises(AssertionError, match="x is too large") as info:
        next(it)
    assert "while running the map function '" in notes(info) and ".check' defined at" in notes(info)
    assert "test_data_errors.py:" in notes(info)


def test_reduce_state_dtype_change_is_refused():
    with pytest.raises(ag.TracingError, match=r"the reduce function '.*<lambda>' defined at .*test_data_errors.py:\d+ "
                                              r"changes the dtype of the state from int32 to float64"):
        Dataset.range(3).reduce(np.int32(0), lambda s, x: s + x * 0.5)


def test_reduce_state_structure_change_is_refused():
    with pytest.raises(ag.TracingError, match=r"returns a new state whose structure differs"):
        Dataset.range(3).reduce((0, 0), lambda s, x: s[0] + x)


def test_scan_must_return_a_pair():
    with pytest.raises(ag.TracingError, match=r"the scan function .* must return \(new_state, output_element\)"):
        Dataset.range(3).scan(0, lambda s, x: s + x)


def test_functions_must_be_callable():
    with pytest.raises(TypeError, match="the map function must be callable, got int 3"):
        Dataset.range(3).map(3)


def test_from_generator_value_checks():
    sig = rt.TensorSpec((2,), "float32")
    with pytest.raises(ValueError, match=r"value 1 of '.*gen' has shape \[3\], but output_signature says \[2\]"):
        def gen():
            yield [1.0, 2.0]
            yield [1.0, 2.0, 3.0]
        list(Dataset.from_generator(gen, sig))
    with pytest.raises(TypeError, match=r"value 0 of '.*strings' has dtype <U1, but output_signature says float32"):
        def strings():
            yield ["a", "b"]
        list(Dataset.from_generator(strings, sig))
    with pytest.raises(TypeError, match="from_generator expects a callable"):
        Dataset.from_generator(iter([1]), sig)


def test_batch_of_differently_shaped_elements():
    def gen():
        yield np.zeros(2)
        yield np.zeros(3)

    ds = Dataset.from_generator(gen, rt.TensorSpec((None,), "float64")).batch(2)
    with pytest.raises(ValueError, match=r"batch\(2\) cannot stack elements of different shapes \(\(2,\), \(3,\)\)"):
        list(ds)


def test_concatenate_of_different_dtypes():
    with pytest.raises(TypeError, match=r"concatenate: the datasets' elements differ: int64\[\] and float64\[\]"):
        Dataset.range(3).concatenate(Dataset.from_tensor_slices(np.zeros(2)))


def test_unbatch_of_scalars():
    with pytest.raises(ValueError, match=r"unbatch\(\) needs elements whose components have a first dimension"):
        Dataset.range(3).unbatch()


def test_len_is_refused():
    with pytest.raises(TypeError, match="len\\(\\) of a Dataset is not defined"):
        len(Dataset.range(3))


def test_without_the_converter_loaded_the_error_says_so(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "unconverted.py"
    script.write_text(
        "import numpy as np\n"
        "from autograph import runtime as rt\n"
        "def sign(x):\n"
        "    if x > 0:\n"
        "        return 1\n"
        "    return -1\n"
        "try:\n"
        "    rt.data.Dataset.range(3).map(sign)\n"
        "except rt.TracingError as e:\n"
        "    print(e.__notes__[-1])\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True).stdout
    assert out.startswith("autograph's converter is not loaded, so the function was traced unconverted: use an "
                          "ag.* name (such as ag.convert) before building the pipeline")


@pytest.mark.parametrize("make, error, message", [
    (lambda: Dataset.range(250, 260, dtype="uint8"), ValueError,
     r"Dataset.range\(250, 260\): the elements 250..259 do not fit dtype uint8, which holds the integers 0..255"),
    (lambda: Dataset.range(2 ** 70), ValueError, r"do not fit dtype int64"),
    (lambda: Dataset.range(-1, 2, dtype="uint16"), ValueError, r"the elements -1..1 do not fit dtype uint16"),
    (lambda: Dataset.range(3000, dtype="float16"), ValueError,
     r"the elements 0..2999 do not fit dtype float16, which holds the integers -2048..2048 exactly"),
    (lambda: Dataset.range(3, dtype="bool"), TypeError, r"Dataset.range\(dtype=...\) must be an integer or float "
                                                        r"dtype, got bool"),
    (lambda: Dataset.from_tensor_slices(()), ValueError, r"from_tensor_slices needs at least one array"),
    (lambda: rt.data.Options(map_fusion="no"), TypeError, r"rt.data.Options\(map_fusion=...\) must be True or "
                                                          r"False, got str 'no'"),
], ids=["uint8", "beyond-int64", "negative-unsigned", "float16-inexact", "bool", "no-arrays", "options"])
def test_values_a_dataset_could_not_give_exactly_are_refused_when_it_is_built(make, error, message):
    # before, range(250, 260, uint8) failed with an OverflowError only when iterated, range(3, dtype=bool)
    # gave False, True, True, and Options(map_fusion="no") left the fusion on
    with pytest.raises(error, match=message):
        make()


def test_ranges_that_fit_their_dtype_give_every_element():
    assert [int(x) for x in Dataset.range(5, 0, -2, dtype="uint8")] == [5, 3, 1]
    assert [float(x) for x in Dataset.range(2046, 2049, dtype="float16")] == [2046.0, 2047.0, 2048.0]
    assert list(Dataset.range(3, 3, dtype="uint8")) == []


def test_a_tensor_size_inside_a_traced_function_is_refused_naming_the_line():
    import autograph as ag

    def total(n):
        s = 0
        for v in Dataset.range(n):
            s += v
        return s

    with pytest.raises(ag.TracingError, match=r"Dataset.range\(stop=...\) at .*test_data_errors.py:\d+ is the "
                                               r"symbolic tensor n:0"):
        ag.function(total)(np.int64(4))
