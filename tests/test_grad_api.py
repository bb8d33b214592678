"""ag.grad / ag.value_and_grad: structures, caching, bad input, and what gradient graphs support."""

import collections
import functools
import json

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt

from test_grad_rules import numeric_grad

Point = collections.namedtuple("Point", "x y")


def loss(params, data):
    return rt.reduce_sum(rt.square(params["w"] * data + params["b"]))


def test_gradient_has_the_structure_of_the_argument():
    params = {"w": np.array([1.0, 2.0]), "b": np.float64(0.5)}
    data = np.array([3.0, -1.0])
    g = ag.grad(loss)(params, data)
    r = params["w"] * data + params["b"]
    assert set(g) == {"w", "b"}
    np.testing.assert_allclose(g["w"], 2 * r * data)
    np.testing.assert_allclose(g["b"], np.sum(2 * r))


def test_tuples_lists_namedtuples_and_integers():
    def f(pair, items, point):
        return rt.reduce_sum(pair[0] * pair[1]) + items[0] * 3.0 + rt.reduce_sum(point.x) * rt.cast(point.y, "float64")

    pair = (np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    grads = ag.grad(f, argnums=(0, 1, 2))(pair, [np.float64(1.0), np.int32(7)], Point(np.ones(2), np.int32(2)))
    g_pair, g_items, g_point = grads
    assert isinstance(g_pair, tuple) and isinstance(g_items, list) and isinstance(g_point, Point)
    np.testing.assert_allclose(g_pair[0], [3.0, 4.0])
    np.testing.assert_allclose(g_pair[1], [1.0, 2.0])
    assert g_items[0] == 3.0 and g_items[1] is None
    np.testing.assert_allclose(g_point.x, [2.0, 2.0])
    assert g_point.y is None


def test_value_and_grad_with_aux_and_python_floats():
    def f(x, scale):
        y = rt.sin(x) * scale
        return rt.reduce_sum(y), y

    (value, aux), g = ag.value_and_grad(f, argnums=1, has_aux=True)(np.array([0.5, 1.0]), 2.0)
    np.testing.assert_allclose(value, 2.0 * np.sin([0.5, 1.0]).sum())
    np.testing.assert_allclose(aux, 2.0 * np.sin([0.5, 1.0]))
    np.testing.assert_allclose(g, np.sin([0.5, 1.0]).sum())
    g2, aux2 = ag.grad(f, has_aux=True)(np.array([0.5, 1.0]), 2.0)
    np.testing.assert_allclose(g2, 2.0 * np.cos([0.5, 1.0]))


def test_differentiated_arguments_passed_by_keyword():
    g = ag.grad(lambda x, y: x * y * y, argnums=1)(2.0, y=3.0)
    assert g == 12.0


def test_float32_gradients_stay_float32():
    g = ag.grad(lambda x: rt.reduce_sum(rt.sin(x) * 2.0 + x / 3.0))(np.ones(3, np.float32))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 2 * np.cos(1.0) + 1 / 3.0, rtol=1e-6)


def test_unconnected_float_source_gets_zeros():
    g = ag.grad(lambda x, y: rt.reduce_sum(x * 2.0), argnums=(0, 1))(np.ones(2), np.ones((2, 2)))
    np.testing.assert_array_equal(g[1], np.zeros((2, 2)))


def test_traced_once_per_signature():
    g = ag.grad(loss)
    params = {"w": np.array([1.0, 2.0]), "b": np.float64(0.5)}
    g(params, np.array([1.0, 2.0]))
    g(params, np.array([3.0, 2.0]))
    assert g.tracing_count == 1


def test_usable_inside_a_function():
    inner = ag.grad(lambda x: rt.reduce_sum(rt.sin(x)))

    @ag.function
    def step(x):
        return x - 0.1 * inner(x)

    x = np.array([0.2, 0.4])
    np.testing.assert_allclose(step(x), x - 0.1 * np.cos(x))


def not_scalar(x):
    return x * 2.0


def integer_result(x):
    return rt.cast(rt.reduce_sum(x), "int32")


def test_a_result_that_is_not_a_scalar_is_an_error_naming_its_shape():
    with pytest.raises(TypeError, match=r"must return a scalar, but it returned a float64\[3\] tensor.*reduce_sum"):
        ag.grad(not_scalar)(np.ones(3))


def test_an_integer_result_is_an_error():
    with pytest.raises(TypeError, match=r"returned a int32 scalar .*gradients need a float result"):
        ag.grad(integer_result)(np.ones(3))


def through_py_function(x):
    y = rt.py_function(lambda v: v * 2.0, [x], "float64", shape=(3,))
    return rt.reduce_sum(y)


def test_a_py_function_on_the_path_is_an_error_naming_it():
    with pytest.raises(ag.TracingError, match=r"rt.py_function '<lambda>' at .*test_grad_api.py:\d+: it has no gradient "
                                              r"function.*grad=g"):
        ag.grad(through_py_function)(np.ones(3))


def cube_in_python(x, w):
    y = rt.py_function(lambda a, b: a ** 3 * b, [x, w], "float64", shape=(3,),
                       grad=lambda a, b, g: (3 * a ** 2 * b * g, np.sum(a ** 3 * g)))
    return rt.reduce_sum(rt.sin(y))


def test_a_py_function_with_a_gradient_function():
    x, w = np.array([0.5, 1.0, -0.3]), np.float64(0.7)
    gx, gw = ag.grad(cube_in_python, argnums=(0, 1))(x, w)
    c = np.cos(x ** 3 * w)
    np.testing.assert_allclose(gx, c * 3 * x ** 2 * w)
    np.testing.assert_allclose(gw, np.sum(c * x ** 3))


def through_a_dataset(x):
    total = x * 0.0
    for e in rt.data.Dataset.range(3):
        total += rt.cast(e, "float64") * x
    return total


def test_an_op_without_a_rule_is_an_error_naming_its_type_line_and_reason():
    with pytest.raises(ag.TracingError, match=r"DatasetReduce op .* created at .*test_grad_api.py:\d+: op type "
                                              r"DatasetReduce has no gradient rule.*a loop over a dataset"):
        ag.grad(through_a_dataset)(np.float64(0.5))


def through_set_item(x, v):
    y = x * 2.0
    y[1:] = v * v
    y[0] += v[0]
    y[-1] -= x[0]
    return rt.reduce_sum(rt.sin(y))


def test_item_assignment_gradients():
    from test_grad_rules import check

    check(through_set_item, np.array([0.3, -0.2, 0.9]), np.array([0.5, 1.5]))


def through_masked_set_item(x):
    y = x * 1.0
    y[x > 0.0] = 0.0
    return rt.reduce_sum(y)


def test_item_assignment_with_an_index_array_is_refused():
    with pytest.raises(ag.TracingError, match=r"cannot differentiate .*test_grad_api.py:\d+.*index array is not "
                                              r"supported; build the new tensor with rt.where"):
        ag.grad(through_masked_set_item)(np.ones(3))


def test_fill_differentiates_its_value():
    g = ag.grad(lambda x: rt.reduce_sum(rt.fill((4,), x) * np.arange(4.0)))(np.float64(2.0))
    assert g == 6.0


def test_bad_argnums():
    with pytest.raises(TypeError, match="argnums must be a non-negative int"):
        ag.grad(loss, argnums=-1)


def model(w, x):
    h = rt.tanh(rt.matmul(x, w))
    return rt.reduce_mean(rt.square(h - 0.5))


def test_gradient_graphs_print_verify_serialize_and_run_alike():
    w, x = np.random.default_rng(1).normal(size=(3, 2)), np.random.default_rng(2).normal(size=(4, 3))
    results = [ag.grad(model, **mode)(w, x) for mode in ({}, {"optimize": False}, {"jit_compile": True},
                                                           {"parallel": False})]
    for r in results[1:]:
        np.testing.assert_allclose(r, results[0], rtol=1e-12)
    cf = ag.grad(model).get_concrete_function(w, x)
    graph = cf.graph
    graph.verify()
    assert "MatMul" in graph.to_text() and "Transpose" in graph.to_text()
    loaded = rt.Graph.from_graph_def(json.loads(json.dumps(graph.as_graph_def())))
    loaded.verify()
    (again,) = rt.run_graph(loaded, [w, x])
    np.testing.assert_allclose(again, results[0], rtol=1e-12)
    cf.execution_graph.verify()


def test_a_py_function_gradient_must_be_callable():
    with pytest.raises(TypeError, match="rt.py_function: grad must be callable or None, got 3"):
        rt.py_function(lambda a: a, [np.ones(2)], "float64", grad=3)


def dynamic_shapes(w, x, n):
    h = rt.tanh(rt.matmul(x, w) + rt.reduce_mean(x[:, :2], axis=0))
    for i in range(n):
        h = rt.sin(h) * rt.reduce_max(h, axis=1, keepdims=True)
    return rt.reduce_sum(rt.softmax(h) * x[:, :2]) + rt.reduce_sum(rt.gather(h, np.array([0, 0]), axis=0))


def test_unknown_dimensions_give_the_static_gradient():
    signature = [rt.TensorSpec((None, 2)), rt.TensorSpec((None, None)), rt.TensorSpec((), "int32")]
    general = ag.grad(dynamic_shapes, argnums=(0, 1), input_signature=signature)
    rng = np.random.default_rng(0)
    for rows in (5, 2):
        w, x = rng.normal(size=(3, 2)).astype(np.float32), rng.normal(size=(rows, 3)).astype(np.float32)
        for a, b in zip(general(w, x, np.int32(3)), ag.grad(dynamic_shapes, argnums=(0, 1))(w, x, np.int32(3))):
            np.testing.assert_allclose(a, b, rtol=1e-6)
    assert general.tracing_count == 1


def test_second_derivatives_through_broadcasting_gather_and_unknown_shapes():
    def f(x, y):
        return rt.reduce_sum(rt.sin(x * y) * rt.gather(x, np.array([1, 1])))

    signature = [rt.TensorSpec((None,), "float64"), rt.TensorSpec((None, 1), "float64")]
    first = ag.grad(f, input_signature=signature)
    second = ag.grad(lambda x, y: rt.reduce_sum(first(x, y)), argnums=(0, 1), input_signature=signature)
    from test_grad_rules import numeric_grad

    x, y = np.array([0.3, -0.8]), np.array([[0.5], [1.2], [-0.4]])
    for i, got in enumerate(second(x, y)):
        want = numeric_grad(lambda a, b: np.sum(first(a, b)), [x, y], i)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _inner_python(y):
    return rt.sin(y) * 2.0


inner_called_first_in_a_loop = None  # a fresh ag.function per test: its first call is inside the loop


def calls_a_function_in_a_loop(x, n):
    y = x
    for i in range(n):
        y = inner_called_first_in_a_loop(y) + 0.1
    return rt.reduce_sum(y)


def _numpy_loop(step, x, n):
    y = x
    for _ in range(n):
        y = step(y) + 0.1
    return np.sum(y)


INNER = {"inner_function": (ag.function, lambda y: np.sin(y) * 2.0),
         "inner_grad": (lambda f: ag.grad(lambda y: rt.reduce_sum(f(y))), lambda y: np.cos(y) * 2.0)}


@pytest.mark.parametrize("make", [ag.function, ag.grad, functools.partial(ag.value_and_grad, jit_compile=True)],
                         ids=["function", "grad", "value_and_grad_jit"])
@pytest.mark.parametrize("inner", sorted(INNER))
def test_an_ag_function_called_first_inside_a_tensor_loop(make, inner):
    """Its first call sets up its trace (state of autograph's own, not the user's): it used to be refused
    as a change of 'inner._traced_callable' made in the loop body."""
    global inner_called_first_in_a_loop
    wrap, step = INNER[inner]
    inner_called_first_in_a_loop = wrap(_inner_python)
    x, n = np.array([0.3, 0.6]), np.int32(3)
    result = make(calls_a_function_in_a_loop)(x, n)
    if make is ag.function:
        np.testing.assert_allclose(result, _numpy_loop(step, x, 3), rtol=1e-12)
    else:
        gradient = result[1] if isinstance(result, tuple) else result
        np.testing.assert_allclose(gradient, numeric_grad(lambda v, n: _numpy_loop(step, v, 3), [x, n], 0),
                                   rtol=1e-5, atol=1e-6)


def test_an_ag_function_already_called_can_be_differentiated_through():
    # its traces hold their graphs' tensors: autograph's own objects are not user state to write back
    @ag.function
    def loss(w, labels):
        return -(w[np.arange(labels.shape[0]), labels]).mean()

    labels = np.array([0, 2, 1])
    w = np.ones((3, 3), np.float32)
    assert loss(w, labels) == -1.0
    grad = ag.grad(lambda v: loss(v, labels))(w)
    np.testing.assert_allclose(grad, -np.eye(3, dtype=np.float32)[labels] / 3)
