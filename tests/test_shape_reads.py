"""``x.shape`` of a tensor whose dimensions are unknown while tracing reads what Python reads.

Converted code reads ``x.shape`` through ``ag__.shape_of`` (``converters/shapes.py``,
``runtime/operators/shapes.py``): a dimension a tensor loop relaxed (or an input
signature left open) is a scalar int64 tensor of its size when the graph runs,
a known one a Python int; a fully known shape is the tensor's own tuple (no
op); anything that is not a symbolic tensor gives its own ``.shape``; a
tensor of unknown rank is an ``ag.TracingError`` naming the line.
"""

from __future__ import annotations

import numpy as np
import pytest

import autograph as ag
import autograph.runtime as rt
from autograph.runtime import operators
from modes import check, modes

i32 = np.int32


def shape_after_growing(x, n):
    y = x
    hits = 0
    for _ in range(n):
        y = rt.concat([y, x], 0)
        if y.shape[0] == 4:
            hits += 1
    return hits


def test_the_reproducer_counts_the_length_python_sees():
    assert check(shape_after_growing, np.arange(2.0), i32(3)) == 1


def grown_size(x, n):
    y = x
    for _ in range(n):
        y = rt.concat([y, x], 0)
    return y.shape[0] * 2, y.shape[0] > 5, y.shape[0] - len(x), y.shape[0] != 8


@pytest.mark.parametrize("n", [0, 1, 3])
def test_comparisons_and_arithmetic_of_a_relaxed_dimension(n):
    check(grown_size, np.arange(2.0), i32(n))


def grown_rows(x, n):
    y = x
    for _ in range(n):
        y = rt.concat([y, x], 0)
    rows, cols = y.shape
    return rows, cols, y.shape[-2], y.shape[-1], len(y.shape)


def test_unpacking_and_negative_indices():
    check(grown_rows, np.ones((2, 3), dtype=np.float32), i32(2))


def grown_columns(x, n):
    y = x
    for _ in range(n):
        y = rt.concat([y, x], 1)
    return y.shape[-1] // 2, y.shape[0]


def test_an_unknown_last_dimension_by_negative_index():
    check(grown_columns, np.ones((2, 3), dtype=np.float32), i32(2))


def sum_over_grown(x, n):
    y = x
    for _ in range(n):
        y = rt.concat([y, x], 0)
    total = 0.0
    for i in range(y.shape[0]):
        total += y[i] * i
    return total


def test_a_loop_bound_from_a_relaxed_dimension():
    check(sum_over_grown, np.arange(2.0), i32(2))


def doubled_length(x):
    return x.shape[0] * 2, x.shape[1]


def test_a_dimension_left_open_by_the_input_signature():
    check(doubled_length, np.ones((3, 2)), input_signature=[rt.TensorSpec((None, 2), "float64")])


def reshaped_by_shape(x, n):
    y = x
    for _ in range(n):
        y = rt.concat([y, x], 0)
    return rt.reshape(y, (y.shape[0] // 2, 2)), rt.zeros(y.shape)


def test_a_mixed_shape_tuple_feeds_rt_ops():
    for _, g in modes(reshaped_by_shape):
        a, z = g(np.arange(2.0), i32(2))
        np.testing.assert_array_equal(a, np.tile([0.0, 1.0], (3, 1)))
        assert z.shape == (6,)


def numpy_zeros_of_shape(x, n):
    y = x
    for _ in range(n):
        y = rt.concat([y, x], 0)
    return np.zeros(y.shape)


def test_numpy_given_an_unknown_size_is_an_error_naming_the_line():
    for _, g in modes(numpy_zeros_of_shape):
        with pytest.raises(ag.TracingError, match=r"test_shape_reads\.py:\d+"):
            g(np.arange(2.0), i32(2))


def rank_of_nothing(x):
    return x.shape[0]


def test_an_unknown_rank_is_an_error_naming_the_line():
    for _, g in modes(rank_of_nothing, input_signature=[rt.TensorSpec(None, "float64")]):
        with pytest.raises(ag.TracingError, match=r"rank is unknown.*test_shape_reads\.py:\d+.*x\.shape"):
            g(np.arange(3.0))


def test_a_known_shape_is_the_tensors_own_tuple_and_adds_no_op():
    seen = {}

    @rt.function
    def probe(x):
        seen["read"], seen["static"] = operators.shape_of(x), x.shape
        return x

    probe.get_concrete_function(rt.TensorSpec((2, 3), "float64"))
    assert seen["read"] is seen["static"] == (2, 3)

    def uses_shape(x):
        return x * x.shape[0] + x.shape[1]

    graph = ag.function(uses_shape).get_concrete_function(rt.TensorSpec((2, 3), "float64")).graph
    assert "Shape" not in {op.type for op in graph.operations}
    check(uses_shape, np.ones((2, 3)))


def test_an_unknown_dimension_is_a_weak_int64_scalar_and_the_known_ones_ints():
    seen = {}

    @rt.function(input_signature=[rt.TensorSpec((None, 3), "float32")])
    def probe(x):
        seen["read"] = operators.shape_of(x)
        return x

    probe.get_concrete_function()
    rows, cols = seen["read"]
    assert type(cols) is int and cols == 3
    assert isinstance(rows, rt.Tensor) and rows.dtype == np.int64 and rows.weak and rows.shape == ()


class Box:
    def __init__(self):
        self.shape = [1, 2]


def read_shape(obj):
    return obj.shape


def write_shape(obj):
    obj.shape[0] = 5
    obj.shape.append(obj.shape[1])
    shape = obj.shape
    del obj.shape
    return shape


def test_values_that_are_not_symbolic_tensors_are_untouched():
    converted = ag.convert(read_shape, always_converted=True)
    box = Box()
    assert converted(box) is box.shape
    array = np.ones((2, 3))
    assert converted(array) == (2, 3) and type(converted(array)) is tuple
    with pytest.raises(AttributeError):
        converted(object())
    assert "ag__.shape_of(obj)" in ag.to_code(read_shape)

    written = ag.convert(write_shape, always_converted=True)
    box, expected = Box(), write_shape(Box())
    assert written(box) == expected == [5, 2, 2] and not hasattr(box, "shape")
    code = ag.to_code(write_shape)
    assert "obj.shape[0] = 5" in code and "del obj.shape" in code and "obj.shape.append" in code


def test_jax_arrays_keep_their_static_shapes():
    jax = pytest.importorskip("jax")

    def scaled_by_rows(x):
        total = 0.0
        for i in range(x.shape[0]):
            total = total + x[i]
        return total * x.shape[0]

    x = np.arange(4.0, dtype=np.float32)
    got = jax.jit(ag.convert(scaled_by_rows))(x)
    np.testing.assert_allclose(np.asarray(got), scaled_by_rows(x))


class Holder:
    pass


def attribute_named_shape_as_loop_state(h, n):
    h.shape = 0
    for _ in range(n):
        h.shape = h.shape + 1
    return h.shape


def test_an_attribute_named_shape_is_still_loop_state():
    assert check(attribute_named_shape_as_loop_state, Holder(), i32(3)) == 3


def reshaped_in_place(x):
    y = x * 2
    y.shape = (2, 2)
    return y + np.ones((2, 1))


def retyped_in_place(x):
    y = x + 0
    y.dtype = np.int32
    return y


@pytest.mark.parametrize("f, attribute, fix", [
    (reshaped_in_place, "shape", r"y = y.reshape\(\.\.\.\)"),
    (retyped_in_place, "dtype", r"y = y.astype\(\.\.\.\)"),
])
def test_assigning_the_shape_or_dtype_of_a_tensor_is_refused(f, attribute, fix):
    x = np.arange(4.0, dtype=np.float32)
    f(x.copy())  # numpy: the array changes in place
    assert f"y.{attribute} = ag__.array_attribute_store(" in ag.to_code(f)
    for _, g in modes(f):
        with pytest.raises(ag.TracingError, match=rf"assigning .{attribute} of the tensor .* in `y.{attribute} = .*{fix}"):
            g(x.copy())


def shape_of_an_object_set_in_a_tensor_branch(h, x):
    h.shape = (1, 1)
    h.dtype = 0.0
    if x > 0:
        h.shape = (2, 2)
        h.dtype = x
    return h.shape[0] + 0 * x, h.dtype


def test_objects_with_shape_and_dtype_attributes_are_set_as_python_sets_them():
    for x in (np.float32(1.5), np.float32(-1.5)):
        expected = shape_of_an_object_set_in_a_tensor_branch(Holder(), x)
        for _, g in modes(shape_of_an_object_set_in_a_tensor_branch):
            h = Holder()
            got = g(h, x)
            assert got[0] == expected[0] and got[1] == expected[1]
            assert h.shape[0] == expected[0] and h.dtype == expected[1]


def test_a_staged_list_has_no_shape_to_assign():
    def grown(n):
        xs = []
        for i in range(n):
            xs.append(i)
        xs.shape = (3,)
        return xs

    with pytest.raises(AttributeError, match="'list' object has no attribute 'shape'"):
        grown(3)
    with pytest.raises(AttributeError, match="'list' object has no attribute 'shape'"):
        ag.function(grown)(i32(3))
