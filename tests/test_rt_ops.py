"""Every op: eager result == numpy reference == graph result, with inferred dtypes and shapes.

Each check runs the op eagerly on numpy values, then traces it on
placeholders (once with the inputs' static shapes, once with every
dimension unknown), checks the inferred dtype/shape against the real result,
runs the graph through the executor and compares values and dtypes, and
runs the graph again after a round trip through ``as_graph_def`` + JSON.  When
numpy rejects an input (e.g. ``-`` on bools), tracing must reject it too,
with a TypeError/ValueError raised at trace time.
"""

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograph import runtime as rt
from autograph.runtime.core import shapes
from autograph.runtime.exec import interpreter as executor
from autograph.runtime.ops import math as rt_math
from autograph.runtime.ops import reduction as rt_reduction

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])

DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.float16, np.float32, np.float64]
MAIN_DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]


def arrays(dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        elements = st.floats(-20, 20, width=min(dtype.itemsize * 8, 64), allow_nan=False)
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        elements = st.integers(max(info.min, -20), min(info.max, 20))
    else:
        elements = st.booleans()
    return hnp.arrays(dtype, shape, elements=elements)


small_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


def trace(fn, values, *, unknown_dims=False):
    """A graph computing ``fn`` on placeholders standing for ``values``; returns (graph, outputs)."""
    graph = rt.Graph("test")
    with graph.as_default():
        placeholders = []
        for i, v in enumerate(values):
            v = np.asarray(v)
            shape = tuple(None for _ in v.shape) if unknown_dims else v.shape
            placeholders.append(graph.add_placeholder(v.dtype, shape, name=f"in{i}"))
        out = fn(*placeholders)
        graph.outputs = list(out) if isinstance(out, tuple) else [out]
    return graph


def assert_same(actual, expected):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_array_equal(actual, expected)


def check(fn, *values, reference=None):
    """fn eager == reference (if given) == fn traced and run, for known and unknown static shapes."""
    try:
        eager = fn(*values)
    except (TypeError, ValueError, IndexError) as eager_error:
        for unknown in (False, True):
            if unknown and isinstance(eager_error, (ValueError, IndexError)):
                continue  # shape errors are only static when shapes are known
            with pytest.raises((TypeError, ValueError, IndexError)):
                trace(fn, values, unknown_dims=unknown)
        return None
    eager_list = list(eager) if isinstance(eager, tuple) else [eager]
    for e in eager_list:
        assert not isinstance(e, np.ndarray) or e.ndim > 0, "0-d eager results must be numpy scalars"
    if reference is not None:
        assert_same(eager, reference(*values))
    for unknown in (False, True):
        graph = trace(fn, values, unknown_dims=unknown)
        graph.verify()
        results = executor.run_graph(graph, [np.asarray(v) for v in values])
        for t, got, want in zip(graph.outputs, results, eager_list):
            assert t.dtype == np.asarray(want).dtype
            assert shapes.is_compatible(t.shape, np.shape(want)), (t.shape, np.shape(want))
            if not unknown:
                assert t.shape == np.shape(want), (t.shape, np.shape(want))
            assert_same(got, want)
    loaded = rt.Graph.from_graph_def(json.loads(json.dumps(graph.as_graph_def())))
    for got, want in zip(executor.run_graph(loaded, [np.asarray(v) for v in values]), eager_list):
        assert_same(got, want)
    return eager


# -- elementwise ---------------------------------------------------------------


@FAST
@given(
    op=st.sampled_from(sorted(rt_math.BINARY)),
    dtypes=st.tuples(st.sampled_from(DTYPES), st.sampled_from(DTYPES)),
    shape_pair=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
    data=st.data(),
)
def test_binary_ops_eager_equals_graph(op, dtypes, shape_pair, data):
    a = data.draw(arrays(dtypes[0], shape_pair.input_shapes[0]))
    b = data.draw(arrays(dtypes[1], shape_pair.input_shapes[1]))
    if op == "Pow" and np.asarray(b).dtype.kind in "iu":
        b = np.abs(b) % 4
    ufunc = rt_math.BINARY[op]
    check(lambda x, y: rt_math.binary(op, x, y), a, b, reference=ufunc)


@FAST
@given(op=st.sampled_from(sorted(rt_math.UNARY)), dtype=st.sampled_from(DTYPES), data=st.data())
def test_unary_ops_eager_equals_graph(op, dtype, data):
    x = data.draw(arrays(dtype, data.draw(small_shapes)))
    check(lambda v: rt_math.unary(op, v), x, reference=rt_math.UNARY[op])


@FAST
@given(
    op=st.sampled_from(["Add", "Sub", "Mul", "RealDiv", "Maximum", "Less", "Equal"]),
    dtype=st.sampled_from(DTYPES),
    scalar=st.sampled_from([0, 1, 3, 2.5, True]),
    reflected=st.booleans(),
    data=st.data(),
)
def test_python_scalars_are_weakly_typed(op, dtype, scalar, reflected, data):
    """``t + 1`` keeps t's dtype (NEP 50), exactly as numpy does for ``array + 1``."""
    x = data.draw(arrays(dtype, data.draw(small_shapes)))
    ufunc = rt_math.BINARY[op]
    if reflected:
        check(lambda v: rt_math.binary(op, scalar, v), x, reference=lambda v: ufunc(scalar, v))
    else:
        check(lambda v: rt_math.binary(op, v, scalar), x, reference=lambda v: ufunc(v, scalar))


def test_weak_typing_examples():
    i32 = np.arange(3, dtype=np.int32)
    f32 = np.ones(3, np.float32)
    assert rt.add(i32, 1).dtype == np.int32
    assert rt.add(i32, 1.5).dtype == np.float64
    assert rt.multiply(f32, 2).dtype == np.float32
    assert rt.divide(i32, 2).dtype == np.float64
    g = trace(lambda x: (x + 1, 2 * x, x / 2, x < 1.5), [i32])
    assert [t.dtype.name for t in g.outputs] == ["int32", "int32", "float64", "bool"]


def test_eager_results_are_numpy_values():
    assert type(rt.add(np.float32(1), 2)) is np.float32
    assert rt.add(np.float32(1), 2) == np.float32(3)
    assert type(rt.reduce_sum(np.ones(3, np.float32))) is np.float32
    assert type(rt.reshape(np.float32(2), [])) is np.float32
    assert isinstance(rt.zeros((2, 2)), np.ndarray) and rt.zeros((2, 2)).dtype == np.float32
    assert type(rt.constant(3.0)) is np.float64


def test_operator_spellings_build_ops():
    def fn(a, b):
        return (a + b, a - b, a * b, a / b, a // b, a % b, a ** 2, -a, abs(a), +a,
                a < b, a <= b, a > b, a >= b, a == b, a != b, 2 - a, 2.0 / a, 1 // a)

    a = np.array([1.0, -2.0, 3.5], np.float32)
    b = np.array([2.0, 3.0, -1.0], np.float32)
    graph = trace(fn, [a, b])
    results = executor.run_graph(graph, [a, b])
    for got, want in zip(results, fn(a, b)):
        assert_same(got, want)
    types = [op.type for op in graph.operations]
    for t in ["Add", "Sub", "Mul", "RealDiv", "FloorDiv", "FloorMod", "Pow", "Neg", "Abs", "Less",
              "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual"]:
        assert t in types


def test_logical_and_bitwise_spellings():
    p = np.array([True, False, True])
    q = np.array([True, True, False])
    i = np.array([5, 3, 12], np.int32)
    graph = trace(lambda p, q, i: (p & q, p | q, p ^ q, ~p, i & 6, i | 1, i ^ 3, ~i, True & p), [p, q, i])
    types = [op.type for op in graph.operations if op.type not in ("Placeholder", "Const")]
    assert types == ["LogicalAnd", "LogicalOr", "LogicalXor", "LogicalNot", "BitwiseAnd", "BitwiseOr",
                     "BitwiseXor", "Invert", "LogicalAnd"]
    results = executor.run_graph(graph, [p, q, i])
    for got, want in zip(results, (p & q, p | q, p ^ q, ~p, i & 6, i | 1, i ^ 3, ~i, True & p)):
        assert_same(got, want)


def test_bitwise_of_bools_and_python_ints_is_numpys():
    # NEP 50: a bool with a Python int is int64, bitwise (np.False_ | 2 is 2, not True)
    p = np.array([True, False])
    fns = (lambda p: p | 2, lambda p: 300 & p, lambda p: p ^ 1, lambda p: 1 | p)
    for fn in fns:
        graph = trace(fn, [p])
        (got,) = executor.run_graph(graph, [p])
        assert_same(got, fn(p))
    with pytest.raises(TypeError, match="bitwise_and is not defined for bool and float64"):
        trace(lambda p: p & 2.5, [p])


def test_comparison_with_non_numbers_is_python_identity():
    graph = trace(lambda x: x, [np.float32(1)])
    t = graph.outputs[0]
    assert (t == None) is False  # noqa: E711 - testing the dunder
    assert (t != "a") is True
    with pytest.raises(TypeError):
        t + "a"


@FAST
@given(
    shapes_=st.sampled_from([((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                             ((5, 2, 3), (3, 4)), ((1, 2, 3), (4, 3, 2)), ((2, 0), (0, 3))]),
    dtypes=st.tuples(st.sampled_from(MAIN_DTYPES), st.sampled_from(MAIN_DTYPES)),
    data=st.data(),
)
def test_matmul(shapes_, dtypes, data):
    a = data.draw(arrays(dtypes[0], shapes_[0]))
    b = data.draw(arrays(dtypes[1], shapes_[1]))
    check(rt.matmul, a, b, reference=np.matmul)
    check(lambda x, y: x @ y, a, b, reference=np.matmul)


def test_matmul_shape_errors_at_trace_time():
    with pytest.raises(ValueError, match=r"MatMul at .*test_rt_ops.py:\d+: matmul: the last dimension"):
        trace(lambda a, b: a @ b, [np.ones((2, 3)), np.ones((4, 2))])
    with pytest.raises(ValueError, match="scalar"):
        trace(lambda a, b: a @ b, [np.ones(()), np.ones((2, 2))])


def test_broadcast_error_names_op_line_and_operands():
    with pytest.raises(ValueError) as info:
        trace(lambda a, b: a + b, [np.ones(3, np.float32), np.ones(4, np.float32)])
    message = str(info.value)
    assert "Add at " in message and "test_rt_ops.py:" in message
    assert "in0:0 float32[3]" in message and "in1:0 float32[4]" in message
    assert "cannot be broadcast" in message


def test_dtype_error_at_trace_time():
    with pytest.raises(TypeError, match=r"Sub at .*: subtract is not defined for bool and bool.*rt.cast"):
        trace(lambda a, b: a - b, [np.ones(2, bool), np.ones(2, bool)])


# -- reductions ----------------------------------------------------------------


@st.composite
def axis_for(draw, rank):
    choice = draw(st.sampled_from(["none", "int", "tuple"]))
    if choice == "none" or rank == 0:
        return None
    if choice == "int":
        return draw(st.integers(-rank, rank - 1))
    axes = draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank, unique=True))
    return tuple(axes)


@FAST
@given(op=st.sampled_from(sorted(rt_reduction.REDUCTIONS)), dtype=st.sampled_from(DTYPES), keepdims=st.booleans(), data=st.data())
def test_reductions(op, dtype, keepdims, data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4))
    x = data.draw(arrays(dtype, shape))
    axis = data.draw(axis_for(len(shape)))
    fn = rt_reduction.REDUCTIONS[op]
    check(lambda v: rt_reduction.reduce(op, v, axis, keepdims), x,
          reference=lambda v: fn(v, axis=axis, keepdims=keepdims))


def test_reduction_names_and_dtypes():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert rt.reduce_sum(x).dtype == np.sum(x).dtype
    assert rt.reduce_mean(x, axis=0).dtype == np.float64
    assert rt.reduce_any(x > 2) == np.True_
    assert rt.reduce_all(x > 2, axis=1).tolist() == [False, True]
    assert rt.reduce_max(x, axis=1, keepdims=True).shape == (2, 1)
    assert rt.reduce_min(x) == 0 and rt.reduce_prod(x + 1) == 720


def test_reduction_axis_errors():
    with pytest.raises(ValueError, match=r"Sum at .*axis 2 is out of range for a tensor of rank 2"):
        trace(lambda v: rt.reduce_sum(v, axis=2), [np.ones((2, 3))])
    graph = trace(lambda v: v, [np.ones(2)])
    with pytest.raises(TypeError, match="axis must be a Python int"):
        with graph.as_default():
            rt.reduce_sum(graph.outputs[0], axis=graph.outputs[0])


@FAST
@given(dtype=st.sampled_from([np.int32, np.float32, np.float64]), data=st.data())
def test_argmax(dtype, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    x = data.draw(arrays(dtype, shape))
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    check(lambda v: rt.argmax(v, axis=axis), x, reference=lambda v: np.argmax(v, axis=axis))
    check(lambda v: rt.argmin(v, axis=axis), x, reference=lambda v: np.argmin(v, axis=axis))


@FAST
@given(dtype=st.sampled_from([np.int16, np.uint8, np.float16, np.float32, np.float64]), data=st.data())
def test_reduce_variance_and_std(dtype, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    x = data.draw(arrays(dtype, shape))
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    ddof, keepdims = data.draw(st.integers(0, 1)), data.draw(st.booleans())
    check(lambda v: rt.reduce_variance(v, axis=axis, keepdims=keepdims, ddof=ddof), x,
          reference=lambda v: np.var(v, axis=axis, keepdims=keepdims, ddof=ddof))
    check(lambda v: rt.reduce_std(v, axis=axis, keepdims=keepdims, ddof=ddof), x,
          reference=lambda v: np.std(v, axis=axis, keepdims=keepdims, ddof=ddof))


# -- array ops -----------------------------------------------------------------


@FAST
@given(dtype=st.sampled_from(MAIN_DTYPES), data=st.data())
def test_reshape(dtype, data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4))
    x = data.draw(arrays(dtype, shape))
    size = x.size
    target = data.draw(st.sampled_from([(size,), (-1,), (1, size), (size, -1), (-1, 1, 1), ()]))
    if target == () and size != 1:
        target = (-1,)
    check(lambda v: rt.reshape(v, target), x, reference=lambda v: np.reshape(v, target))


def test_reshape_with_traced_dimensions():
    x = np.arange(12, dtype=np.float32)

    def fn(v):
        n = rt.shape(v)[0]
        return rt.reshape(v, [n // 4, -1]), rt.reshape(v, rt.stack([3, n // 3]))

    graph = trace(fn, [x])
    assert graph.outputs[0].shape == (None, None)
    assert graph.outputs[1].shape == (3, None)
    a, b = executor.run_graph(graph, [x])
    assert_same(a, x.reshape(3, 4))
    assert_same(b, x.reshape(3, 4))


def test_reshape_size_mismatch_is_a_trace_time_error():
    with pytest.raises(ValueError, match=r"Reshape at .*cannot reshape a tensor of shape \[2,3\] \(6 elements\) to \[4, 2\]"):
        trace(lambda v: rt.reshape(v, (4, 2)), [np.ones((2, 3))])


@FAST
@given(dtype=st.sampled_from(DTYPES), data=st.data())
def test_shape_and_size(dtype, data):
    x = data.draw(arrays(dtype, data.draw(small_shapes)))
    check(rt.shape, x, reference=lambda v: np.array(v.shape, np.int32))
    check(rt.size, x, reference=lambda v: np.int32(v.size))


@FAST
@given(dtypes=st.lists(st.sampled_from(MAIN_DTYPES), min_size=1, max_size=3), axis=st.integers(-2, 1), data=st.data())
def test_stack(dtypes, axis, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, max_side=3))
    values = [data.draw(arrays(d, shape)) for d in dtypes]
    check(lambda *v: rt.stack(list(v), axis=axis), *values, reference=lambda *v: np.stack(v, axis=axis))


@FAST
@given(dtypes=st.lists(st.sampled_from(MAIN_DTYPES), min_size=1, max_size=3), data=st.data())
def test_concat(dtypes, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=3))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    values = []
    for d in dtypes:
        s = list(shape)
        s[axis] = data.draw(st.integers(0, 3))
        values.append(data.draw(arrays(d, tuple(s))))
    check(lambda *v: rt.concat(list(v), axis=axis), *values, reference=lambda *v: np.concatenate(v, axis=axis))


def test_stack_and_concat_errors():
    with pytest.raises(ValueError, match=r"Pack at .*stack needs tensors of one shape"):
        trace(lambda a, b: rt.stack([a, b]), [np.ones(2), np.ones(3)])
    with pytest.raises(ValueError, match=r"ConcatV2 at .*dimension 1 differs"):
        trace(lambda a, b: rt.concat([a, b], axis=0), [np.ones((2, 2)), np.ones((2, 3))])
    with pytest.raises(ValueError, match="use stack"):
        trace(lambda a, b: rt.concat([a, b]), [np.float32(1), np.float32(2)])


def test_stack_mixes_tensors_and_python_scalars():
    graph = trace(lambda n: rt.stack([n, 2, 3]), [np.int32(7)])
    assert graph.outputs[0].dtype == np.int32 and graph.outputs[0].shape == (3,)
    assert_same(executor.run_graph(graph, [np.int32(7)])[0], np.array([7, 2, 3], np.int32))


@FAST
@given(
    dtypes=st.tuples(st.sampled_from(MAIN_DTYPES), st.sampled_from(MAIN_DTYPES)),
    shapes_=hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3),
    data=st.data(),
)
def test_where(dtypes, shapes_, data):
    c = data.draw(arrays(np.bool_, shapes_.input_shapes[0]))
    x = data.draw(arrays(dtypes[0], shapes_.input_shapes[1]))
    y = data.draw(arrays(dtypes[1], shapes_.input_shapes[2]))
    check(rt.where, c, x, y, reference=np.where)
    check(lambda c, x: rt.where(c, x, 0), c, x, reference=lambda c, x: np.where(c, x, 0))


def test_where_needs_x_and_y():
    with pytest.raises(TypeError, match="rt.where needs x and y"):
        rt.where(np.array([True]))


@FAST
@given(
    args=st.sampled_from([(5,), (2, 9), (1, 10, 3), (10, 0, -2), (0,), (3, 1), (0.5, 3.0, 0.5)]),
    dtype=st.sampled_from([None, "int32", "float32"]),
)
def test_range(args, dtype):
    if dtype == "int32" and any(isinstance(a, float) for a in args):
        dtype = None
    eager = rt.range(*args, dtype=dtype)
    expected_dtype = np.dtype(dtype) if dtype else np.arange(*args).dtype
    assert_same(eager, np.arange(*args, dtype=expected_dtype))
    graph = rt.Graph("g")
    with graph.as_default():
        graph.outputs = [rt.range(*args, dtype=dtype)]
    assert graph.outputs[0].shape == eager.shape
    assert_same(executor.run_graph(graph, [])[0], eager)


def test_range_with_tensor_bounds():
    def fn(n):
        return rt.range(n), rt.range(1, n, 2)

    graph = trace(fn, [np.int32(7)])
    assert [t.dtype.name for t in graph.outputs] == ["int32", "int32"]
    assert graph.outputs[0].shape == (None,)
    a, b = executor.run_graph(graph, [np.int32(7)])
    assert_same(a, np.arange(7, dtype=np.int32))
    assert_same(b, np.arange(1, 7, 2, dtype=np.int32))
    with pytest.raises(ValueError, match="delta must not be zero"):
        trace(lambda n: rt.range(0, 5, 0), [np.int32(1)])


@FAST
@given(dtype=st.sampled_from(MAIN_DTYPES), data=st.data())
def test_fill_zeros_ones_like(dtype, data):
    x = data.draw(arrays(dtype, data.draw(small_shapes)))
    check(rt.zeros_like, x, reference=np.zeros_like)
    check(rt.ones_like, x, reference=np.ones_like)
    check(lambda v: rt.zeros_like(v, dtype="float32"), x, reference=lambda v: np.zeros_like(v, np.float32))
    check(lambda v: rt.fill(rt.shape(v), 7), x, reference=lambda v: np.full(v.shape, 7))
    check(lambda v: rt.zeros(rt.shape(v), dtype=dtype), x, reference=lambda v: np.zeros(v.shape, dtype))
    check(lambda v: rt.ones(rt.shape(v)), x, reference=lambda v: np.ones(v.shape, np.float32))


def test_zeros_static_shape():
    graph = trace(lambda n: (rt.zeros((2, 3)), rt.ones([n, 2], "int32")), [np.int32(4)])
    assert graph.outputs[0].shape == (2, 3) and graph.outputs[0].dtype == np.float32
    assert graph.outputs[1].shape == (None, 2) and graph.outputs[1].dtype == np.int32
    a, b = executor.run_graph(graph, [np.int32(4)])
    assert_same(a, np.zeros((2, 3), np.float32))
    assert_same(b, np.ones((4, 2), np.int32))


@FAST
@given(src=st.sampled_from(DTYPES), dst=st.sampled_from(DTYPES), data=st.data())
def test_cast(src, dst, data):
    x = data.draw(arrays(src, data.draw(small_shapes)))
    check(lambda v: rt.cast(v, dst), x, reference=lambda v: v.astype(dst))


def test_cast_rejects_unsupported_dtype():
    with pytest.raises(TypeError, match="unsupported dtype"):
        rt.cast(np.ones(2), "complex64")


@FAST
@given(dtype=st.sampled_from(MAIN_DTYPES), data=st.data())
def test_gather(dtype, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    x = data.draw(arrays(dtype, shape))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    size = shape[axis]
    idx = data.draw(hnp.arrays(np.int32, hnp.array_shapes(min_dims=0, max_dims=2, max_side=3), elements=st.integers(-size, size - 1)))
    check(lambda v, i: rt.gather(v, i, axis=axis), x, idx, reference=lambda v, i: np.take(v, i, axis=axis))


def test_gather_errors():
    with pytest.raises(IndexError, match=r"GatherV2 at .*index 5 is out of bounds for axis 0 with size 3"):
        trace(lambda v: rt.gather(v, [0, 5]), [np.ones(3)])
    with pytest.raises(TypeError, match="indices must be integers"):
        trace(lambda v: rt.gather(v, [0.5]), [np.ones(3)])


def test_constant_and_identity():
    graph = trace(lambda v: (rt.constant([1, 2, 3], dtype="int32"), rt.identity(v), rt.constant(2.5)), [np.float32(1)])
    assert [op.type for op in graph.operations] == ["Placeholder", "Const", "Identity", "Const"]
    a, b, c = executor.run_graph(graph, [np.float32(1)])
    assert_same(a, np.array([1, 2, 3], np.int32))
    assert_same(b, np.float32(1))
    assert_same(c, np.float64(2.5))
    with pytest.raises(TypeError, match="cannot convert .abc. to a tensor"):
        trace(lambda v: rt.constant("abc"), [np.float32(1)])


# -- indexing ------------------------------------------------------------------


@st.composite
def basic_keys(draw, shape):
    """A numpy basic index for ``shape``: ints in range, slices, None, at most one Ellipsis."""
    key = []
    dim = 0
    used_ellipsis = False
    while dim < len(shape) and draw(st.booleans()):
        kind = draw(st.sampled_from(["int", "slice", "slice", "none", "ellipsis"]))
        if kind == "int":
            if shape[dim] == 0:
                continue
            key.append(draw(st.integers(-shape[dim], shape[dim] - 1)))
            dim += 1
        elif kind == "slice":
            parts = [draw(st.one_of(st.none(), st.integers(-5, 5))) for _ in range(3)]
            if parts[2] == 0:
                parts[2] = None
            key.append(slice(*parts))
            dim += 1
        elif kind == "none":
            key.append(None)
        elif not used_ellipsis:
            used_ellipsis = True
            key.append(Ellipsis)
            dim = len(shape)
    return tuple(key) if draw(st.booleans()) or len(key) != 1 else key[0]


@FAST
@given(dtype=st.sampled_from(MAIN_DTYPES), data=st.data())
def test_basic_indexing(dtype, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    x = data.draw(arrays(dtype, shape))
    key = data.draw(basic_keys(shape))
    expected = x[key]
    graph = trace(lambda v: v[key], [x])
    assert graph.outputs[0].shape == np.shape(expected)
    assert_same(executor.run_graph(graph, [x])[0], expected)
    unknown = trace(lambda v: v[key], [x], unknown_dims=True)
    assert shapes.is_compatible(unknown.outputs[0].shape, np.shape(expected))
    assert_same(executor.run_graph(unknown, [x])[0], expected)


def test_indexing_with_tensor_scalars_and_arrays():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)

    def fn(v, i, idx):
        return v[i], v[1:i], v[:, i], v[idx], v[:, idx], v[i, idx], v[[0, 2]], v[..., idx]

    i = np.int32(2)
    idx = np.array([0, 3, 1], np.int32)
    graph = trace(fn, [x, i, idx])
    results = executor.run_graph(graph, [x, i, idx])
    expected = [x[i], x[1:i], x[:, i], x[idx], x[:, idx], x[i, idx], x[[0, 2]], x[..., idx]]
    for t, got, want in zip(graph.outputs, results, expected):
        assert shapes.is_compatible(t.shape, want.shape), (t.shape, want.shape)
        assert_same(got, want)
    assert graph.outputs[0].shape == (6,)
    assert graph.outputs[3].shape == (3, 6)
    assert graph.outputs[4].shape == (4, 3)


def test_indexing_errors():
    x = np.ones((3, 4), np.float32)
    with pytest.raises(IndexError, match=r"StridedSlice at .*index 3 is out of bounds for axis 0 with size 3"):
        trace(lambda v: v[3], [x])
    with pytest.raises(IndexError, match="too many indices"):
        trace(lambda v: v[0, 0, 0], [x])
    with pytest.raises(rt.TracingError, match=r"boolean mask at .*test_rt_ops.py:\d+"):
        trace(lambda v: v[v > 0], [x])
    with pytest.raises(rt.TracingError, match="several index arrays beside slices, integers, '...' or new axes"):
        trace(lambda v: v[[0, 1], [1, 2], None], [x])  # (the arrays alone pick numpy's points)
    with pytest.raises(IndexError, match=r"an index at .*test_rt_ops.py:\d+ is the float32\[\] tensor"):
        trace(lambda v, f: v[f], [x, np.float32(1)])  # numpy's error for a float index
    with pytest.raises(ValueError, match="step cannot be zero"):
        trace(lambda v: v[::0], [x])


def test_runtime_index_error_names_the_op():
    x = np.ones(3, np.float32)
    graph = trace(lambda v, i: v[i], [x, np.int32(0)])
    with pytest.raises(IndexError, match=r"test_rt_ops.py:\d+: index 7 is out of bounds for axis 0 with size 3") as e:
        executor.run_graph(graph, [x, np.int32(7)])  # numpy's error, as Python raises it, naming the user's line
    assert "CheckIndex op 'check_index' created at" in "".join(getattr(e.value, "__notes__", []))


def test_rt_namespace_exports_the_op_library():
    names = ("constant range zeros ones cast reshape shape size stack concat where matmul reduce_sum reduce_mean "
             "reduce_max reduce_min reduce_prod reduce_any reduce_all sqrt exp log sin cos tanh abs square maximum "
             "minimum greater less equal not_equal logical_and logical_or logical_not argmax argmin gather add subtract "
             "multiply divide floordiv mod pow negative identity less_equal greater_equal fill zeros_like ones_like")
    for name in names.split():
        assert callable(getattr(rt, name)), name
    assert rt.float32 == np.float32 and rt.int32 == "int32" and rt.bool == np.bool_
    assert rt.TensorSpec((None, 3), rt.float32).shape == (None, 3)
    assert issubclass(rt.TracingError, rt.AutoGraphError) and issubclass(rt.ExecutionError, rt.AutoGraphError)
    assert rt.range(3).tolist() == [0, 1, 2] and rt.abs(np.int32(-2)) == 2
