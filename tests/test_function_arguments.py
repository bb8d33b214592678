"""What ``ag.function`` makes of an argument: Python values passed through, variables, ndarray subclasses.

How arguments key the trace cache is tests/test_cache_keys_differential.py.
"""

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt


@pytest.mark.parametrize("value", [1 + 2j, b"raw", -0.0 + 1j])
def test_python_complex_and_bytes_results_pass_through(value):
    def f(x, v):
        return x, v

    got = ag.function(f)(np.float32(1), value)[1]
    assert type(got) is type(value) and repr(got) == repr(f(np.float32(1), value)[1])


def test_variable_argument_aliasing_a_captured_variable_sees_its_updates():
    v = rt.Variable(1.0)

    def f(x):
        before = v.read_value()
        x.assign_add(1.0)
        return before, v.read_value()

    traced = ag.function(f)
    assert [float(a) for a in traced(v)] == [1.0, 2.0]
    w = rt.Variable(5.0)
    assert [float(a) for a in traced(w)] == [2.0, 2.0]


@pytest.mark.filterwarnings("ignore:the matrix subclass is not the recommended way")
@pytest.mark.parametrize("value, fix", [
    ("matrix", r"np\.asarray\(x\)"),
    (np.ma.array([1.0, 2.0, 3.0], mask=[0, 1, 0]), r"x\.filled\(\.\.\.\)"),
])
@pytest.mark.parametrize("signature", [None, [rt.TensorSpec(None, "float64")]])
def test_ndarray_subclasses_with_their_own_operations_are_refused(value, fix, signature):
    if isinstance(value, str):
        value = np.matrix([[1.0, 2.0], [3.0, 4.0]])  # made here, where its warning is filtered
    # their operators leaked into the graph's kernels: the interpreter's `*` on a matrix is a matrix
    # product, a masked sum skipped the masked items, while the same ops run eagerly did not
    traced = ag.function(lambda x: rt.reduce_sum(x * x), input_signature=signature)
    with pytest.raises(TypeError, match=rf"(?s)argument 'x' = .* is a numpy\.(matrix|ma\.MaskedArray), an ndarray "
                                        rf"subclass whose operations differ .* \({fix}\) \(called at .*test_function_"
                                        r"arguments\.py:\d+\)"):
        traced(value)
    assert traced(np.asarray(value)) == np.sum(np.asarray(value) * np.asarray(value))


def test_other_ndarray_subclasses_are_arrays():
    class Tagged(np.ndarray):
        pass

    traced = ag.function(lambda x: rt.reduce_sum(x * x))
    assert traced(np.arange(3.0).view(Tagged)) == 5.0


def test_a_memmap_is_an_array():
    import tempfile

    with tempfile.TemporaryFile() as handle:
        mapped = np.memmap(handle, dtype="float32", mode="w+", shape=(3,))
        mapped[:] = [1.0, 2.0, 3.0]
        assert ag.function(lambda x: rt.reduce_sum(x))(mapped) == 6.0
