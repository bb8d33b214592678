"""Gradients through If and While: finite differences, unrolled loops, every execution mode."""

import json

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.ops import nn

from test_grad_rules import MODES, check, numeric_grad


def branchy(x, y):
    if rt.reduce_sum(x) > 0.0:
        z = rt.sin(x) * y
    else:
        z = rt.exp(x * y)
    return rt.reduce_sum(z * z)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_if_both_branches(sign):
    check(branchy, sign * np.array([0.3, 0.5]), np.float64(1.5))


def one_sided(x, y):
    z = y
    if y > 0.0:
        z = y * rt.reduce_sum(x * x)
    return z


def test_a_branch_that_does_not_depend_on_a_source_gives_zeros():
    g = ag.grad(one_sided)(np.array([1.0, 2.0]), np.float64(-1.0))
    np.testing.assert_array_equal(g, [0.0, 0.0])
    check(one_sided, np.array([1.0, 2.0]), np.float64(0.5))


def nested_ifs(x):
    s = rt.reduce_sum(x)
    if s > 0.0:
        if s > 1.0:
            y = rt.tanh(x) * s
        else:
            y = x * x
    else:
        y = -x
    return rt.reduce_sum(y * rt.cos(x))


@pytest.mark.parametrize("x", [[0.7, 0.8], [0.2, 0.3], [-0.5, 0.1]])
def test_nested_ifs(x):
    check(nested_ifs, np.array(x))


def loop_with_branch(x, n):
    y = x
    for i in range(n):
        if rt.reduce_sum(y) > 1.0:
            y = y * 0.5
        else:
            y = rt.sin(y) * x + 0.3
    return rt.reduce_sum(y * y)


def loop_with_branch_unrolled(x):
    y = x
    for i in range(5):  # a Python bound: no While
        if rt.reduce_sum(y) > 1.0:
            y = y * 0.5
        else:
            y = rt.sin(y) * x + 0.3
    return rt.reduce_sum(y * y)


def test_while_matches_finite_differences_and_the_unrolled_loop():
    x = np.array([0.7, 0.9])
    check(loop_with_branch, x, np.int32(5), argnums=(0,))
    unrolled = ag.grad(loop_with_branch_unrolled)
    assert "While" not in unrolled.get_concrete_function(x).graph.to_text()
    np.testing.assert_allclose(ag.grad(loop_with_branch)(x, np.int32(5)), unrolled(x), rtol=1e-12)


def test_zero_iterations():
    g = ag.grad(loop_with_branch)(np.array([0.7, 0.9]), np.int32(0))
    np.testing.assert_allclose(g, 2 * np.array([0.7, 0.9]))


def while_with_break(x, limit):
    total = x * 0.0
    i = 0
    while i < 10:
        total = total + rt.sin(x * rt.cast(i, "float64"))
        if rt.reduce_sum(total) > limit:
            break
        i += 1
    return rt.reduce_sum(total * x)


def test_while_with_break():
    x = np.array([0.4, 0.6])
    for limit in (np.float64(0.5), np.float64(100.0)):
        check(while_with_break, x, limit, argnums=(0,))


def early_return(x, n):
    acc = x
    for i in range(n):
        acc = acc * rt.cos(acc)
        if rt.reduce_max(acc) < 0.2:
            return rt.reduce_sum(acc) * 10.0
    return rt.reduce_sum(acc)


@pytest.mark.parametrize("x", [[0.9, 1.1], [0.3, 1.2]])
def test_early_return_in_a_loop(x):
    check(early_return, np.array(x), np.int32(6), argnums=(0,))


def over_rows(w, xs):
    h = rt.zeros((3,), "float64")
    for x in xs:
        h = rt.tanh(rt.matmul(w, h) + x)
    return rt.reduce_sum(h)


def test_loop_over_tensor_rows_rnn():
    rng = np.random.default_rng(0)
    check(over_rows, rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(4, 3)))
    graph = ag.grad(over_rows, argnums=(0, 1)).get_concrete_function(np.ones((3, 3)), np.ones((4, 3))).graph
    pushed = [op.inputs[2] for g in graph.library.values() for op in g.operations if op.type == "StackPush"]
    # h per iteration, nothing else: tanh(...) is the next iteration's h (carried by the gradient loop),
    # the row xs[i] is recomputed from the row index, which is the iteration count itself
    assert sorted((t.dtype.kind, t.shape) for t in pushed) == [("f", (3,))]


def nested_loops(x, n, m):
    y = x
    for i in range(n):
        for j in range(m):
            y = rt.sin(y) + x * 0.1
    return rt.reduce_sum(y)


def test_nested_loops():
    check(nested_loops, np.array([0.5, -0.3]), np.int32(3), np.int32(2), argnums=(0,))


def triangular_loops(x, n):
    y = x
    for i in range(n):
        for j in range(i):  # the inner loop runs 0, 1, 2, ... times: its accumulators differ in length
            y = rt.sin(y) * x
    return rt.reduce_sum(y)


def test_inner_loops_of_varying_length():
    check(triangular_loops, np.array([0.5, 0.9]), np.int32(4), argnums=(0,))


def loop_in_branch(x, n):
    if rt.reduce_sum(x) > 0.0:
        y = x
        for i in range(n):
            y = rt.sin(y) * x + 0.1
    else:
        y = x * x
    return rt.reduce_sum(y)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_loop_inside_a_branch(sign):
    check(loop_in_branch, sign * np.array([0.5, 0.9]), np.int32(3), argnums=(0,))


def test_forward_values_nobody_reads_are_pruned():
    def f(x, n):
        y = x
        for i in range(n):
            y = rt.sin(y)
        return rt.reduce_sum(rt.exp(y))  # the gradient reads exp(y), never the sum

    cf = ag.grad(f).get_concrete_function(np.array([0.5, 0.2]), np.int32(3))
    assert "= Sum(" in cf.graph.to_text()
    assert "= Sum(" not in cf.execution_graph.to_text()
    np.testing.assert_allclose(ag.grad(f)(np.array([0.5, 0.2]), np.int32(3)),
                               numeric_grad(ag.function(f), [np.array([0.5, 0.2]), np.int32(3)], 0), rtol=1e-6)


def rnn(w, u, xs):
    h = rt.zeros((2, 3), "float64")
    for t in range(rt.shape(xs)[0]):
        h = rt.tanh(rt.matmul(h, w) + rt.matmul(xs[t], u))
    return rt.reduce_sum(h * h)


def nested_rnn(w, xs, n):
    h = xs[0]
    for t in range(n):
        for s in range(rt.shape(xs)[0]):
            h = rt.sin(rt.matmul(h, w) * 0.5 + xs[s])
    return rt.reduce_sum(h * h)


@pytest.mark.parametrize("steps", [0, 1, 20])
def test_the_gradient_loop_transposes_a_captured_weight_once(steps):
    rng = np.random.default_rng(2)
    w, u, xs = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(4, 3)) * 0.5, rng.normal(size=(steps, 2, 4))
    cf = ag.grad(rnn, argnums=(0, 1)).get_concrete_function(w, u, xs)
    bodies = [g for name, g in cf.execution_graph.library.items() if name.startswith("while_body_grad")]
    assert len(bodies) == (steps > 0)  # (no steps: the loop is known to run zero times)
    for body in bodies:
        transposed = [op.inputs[0].op.type for op in body.operations if op.type == "Transpose"]
        assert "Placeholder" not in transposed, body.to_text()  # w^T, u^T: not once per iteration
        assert "Transpose" in [op.type for op in cf.execution_graph.operations]  # but once, before the loop
    for mode in MODES:
        got = ag.grad(rnn, argnums=(0, 1, 2), **mode)(w, u, xs)
        for i in (0, 1, 2):
            np.testing.assert_allclose(got[i], numeric_grad(ag.function(rnn), [w, u, xs], i), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_weight_gradients_of_nested_loops(n):
    rng = np.random.default_rng(3)
    w, xs = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(4, 2, 3))
    for mode in MODES:
        got = ag.grad(nested_rnn, argnums=(0, 1), **mode)(w, xs, np.int32(n))
        for i in (0, 1):
            expected = numeric_grad(ag.function(nested_rnn), [w, xs, np.int32(n)], i)
            np.testing.assert_allclose(got[i], expected, rtol=1e-6, atol=1e-9)


def staged_list(x, n):
    ys = []
    y = x
    for i in range(n):
        y = rt.sin(y) * 1.5  # y's final value is never used: its cotangent still flows through the loop
        ys.append(y)
    return rt.reduce_sum(rt.stack(ys) * np.arange(1.0, 3.0))


def staged_list_unrolled(x):
    ys = []
    y = x
    for i in range(4):
        y = rt.sin(y) * 1.5
        ys.append(y)
    return rt.reduce_sum(rt.stack(ys) * np.arange(1.0, 3.0))


def test_a_staged_list_appended_in_a_loop():
    x = np.array([0.3, 0.6])
    check(staged_list, x, np.int32(4), argnums=(0,))
    np.testing.assert_allclose(ag.grad(staged_list)(x, np.int32(4)), ag.grad(staged_list_unrolled)(x), rtol=1e-12)
    text = ag.grad(staged_list).get_concrete_function(x, np.int32(4)).graph.to_text()
    assert text.count("StackPush") == 1  # y only: the list itself is never accumulated


def bounded(x):
    return rt.reduce_sum(rt.while_loop(lambda v: rt.reduce_sum(v) < 100.0, lambda v: (v * 1.5,), (x,),
                                       maximum_iterations=4)[0])


def test_maximum_iterations():
    check(bounded, np.array([0.5, 1.0]))
    np.testing.assert_allclose(ag.grad(bounded)(np.array([0.5, 1.0])), [1.5 ** 4] * 2)


def test_only_needed_values_are_accumulated_and_invariants_are_not():
    def f(x, w, n):
        y = x
        for i in range(n):
            y = y * w + 1.0  # the cotangent of y needs w (an invariant), that of w needs y
        return y

    g = ag.grad(f, argnums=(0, 1))
    graph = g.get_concrete_function(np.float64(1.0), np.float64(0.5), np.int32(3)).graph
    text = graph.to_text()
    assert text.count("StackPush") == 1  # y only: w is captured, the constant 1.0 copied
    gx, gw = g(np.float64(1.0), np.float64(0.5), np.int32(3))
    assert gx == pytest.approx(0.125) and gw == pytest.approx(1.75 + 0.5 * (1.5 + 0.5 * 1.0))  # y2 + w (y1 + w y0)


def test_control_flow_gradient_graphs_verify_serialize_and_run_alike():
    x, n = np.array([0.7, 0.9]), np.int32(5)
    cf = ag.grad(loop_with_branch).get_concrete_function(x, n)
    cf.graph.verify()
    cf.execution_graph.verify()
    loaded = rt.Graph.from_graph_def(json.loads(json.dumps(cf.graph.as_graph_def())))
    loaded.verify()
    (again,) = rt.run_graph(loaded, [x, n])
    expected = ag.grad(loop_with_branch)(x, n)
    np.testing.assert_allclose(again, expected, rtol=1e-12)
    for mode in MODES + [{"parallel": False}]:
        np.testing.assert_allclose(ag.grad(loop_with_branch, **mode)(x, n), expected, rtol=1e-12)


def test_second_derivative_of_elementwise_matmul_and_if():
    def f(x):
        return rt.reduce_sum(rt.sin(x) * x)

    def g(w):
        return rt.reduce_sum(rt.matmul(w, w) ** 2)

    def h(x):
        if rt.reduce_sum(x) > 0.0:
            y = x * x * x
        else:
            y = -x * x
        return rt.reduce_sum(y)

    for fn, x in ((f, np.array([0.3, 1.2])), (g, np.array([[0.5, -1.0], [0.3, 0.8]])), (h, np.array([0.5, 0.7])),
                  (h, np.array([-0.5, -0.7]))):
        first = ag.grad(fn)
        second = ag.grad(lambda v: rt.reduce_sum(first(v)))
        numeric = numeric_grad(lambda v: np.sum(first(v)), [x], 0)
        np.testing.assert_allclose(second(x), numeric, rtol=1e-5, atol=1e-6)


def test_accumulator_buffers_reused_across_runs_and_threads_give_the_same_results():
    import concurrent.futures

    g = ag.grad(over_rows, argnums=(0, 1))
    rng = np.random.default_rng(5)
    cases = [(rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(n, 3))) for n in (4, 9, 4, 17, 2)]
    expected = [ag.grad(over_rows, argnums=(0, 1), optimize=False)(w, xs) for w, xs in cases]
    for _ in range(3):
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda case: g(*case), cases))
        for got, want in zip(results, expected):
            for a, b in zip(got, want):
                np.testing.assert_allclose(a, b, rtol=1e-12)


def second_order_loop(x, n):
    y = x
    for i in range(n):
        if rt.reduce_sum(y) > 1.0:
            y = y * 0.5 + rt.sin(x)
        else:
            y = rt.sin(y) * x + 0.3
    return rt.reduce_sum(y * y)


@pytest.mark.parametrize("mode", [{}, {"jit_compile": True}], ids=str)
def test_second_derivatives_through_a_loop_with_a_branch(mode):
    first = ag.grad(second_order_loop, **mode)
    second = ag.grad(lambda x, n: rt.reduce_sum(first(x, n) * np.array([1.0, -2.0])), **mode)
    for x in (np.array([0.7, 0.2]), np.array([0.9, 0.8])):
        numeric = numeric_grad(lambda v, n: np.sum(first(v, n) * np.array([1.0, -2.0])), [x, np.int32(4)], 0)
        np.testing.assert_allclose(second(x, np.int32(4)), numeric, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", [{}, {"jit_compile": True}], ids=str)
@pytest.mark.parametrize("fn, args", [(triangular_loops, (np.array([0.5, 0.9]), np.int32(4))),
                                      (nested_loops, (np.array([0.5, -0.3]), np.int32(3), np.int32(2)))],
                         ids=["inner_lengths_vary", "nested"])
def test_second_derivatives_through_nested_loops(mode, fn, args):
    """The inner loop's accumulators are pushed padded onto the outer loop's: the gradient of that push
    gives each its own part of the entry back."""
    first = ag.grad(fn, **mode)
    weights = np.array([1.0, -2.0])
    second = ag.grad(lambda x, *rest: rt.reduce_sum(first(x, *rest) * weights), **mode)
    numeric = numeric_grad(lambda v, *rest: np.sum(first(v, *rest) * weights), list(args), 0)
    np.testing.assert_allclose(second(*args), numeric, rtol=1e-5, atol=1e-6)


def sin_times_x(x, n):
    y = x
    for i in range(n):
        y = rt.sin(y) * x
    return rt.reduce_sum(y)


def test_accumulators_of_unknown_shape_compiled_and_interpreted_alike():
    """jit writes the push inline (the entry shape checked where static shapes do not state it) and
    grows the buffer through the kernel: the same results as the interpreter, across runs of other
    lengths and shapes."""
    spec = [rt.TensorSpec((None,), "float64"), rt.TensorSpec((), "int32")]
    compiled, interpreted = (ag.grad(sin_times_x, input_signature=spec, **mode) for mode in ({"jit_compile": True}, {}))
    assert "shape[1:] ==" in compiled.get_concrete_function(*spec).compiled_source()
    for x, n in ((np.linspace(0.1, 0.9, 3), 40), (np.array([0.5, -0.2]), 3), (np.linspace(-1, 1, 5), 70)):
        np.testing.assert_allclose(compiled(x, np.int32(n)), interpreted(x, np.int32(n)), rtol=1e-13)
    check(sin_times_x, np.array([0.5, -0.2]), np.int32(7), argnums=(0,))


def prefix_sums(xs, n):
    total = xs[0] * 0.0
    for i in range(n):
        total = total + rt.reduce_sum(rt.sin(rt.sin(xs[:i + 1])))  # a value whose length grows
    return total


def test_a_value_changing_shape_across_iterations_is_accumulated_ragged():
    check(prefix_sums, np.arange(5.0) * 0.3, np.int32(3), argnums=(0,))
    check(prefix_sums, np.arange(5.0) * 0.3, np.int32(0), argnums=(0,))


def two_pushes(a, b, ragged):
    stack = nn.stack_push(np.zeros((0, 2)), np.int32(0), a, "the test stack", ragged=ragged)
    return nn.stack_push(stack, np.int32(1), b, "the test stack", ragged=ragged)


@pytest.mark.parametrize("mode", MODES, ids=str)
def test_a_stack_pads_entries_of_another_shape_only_when_ragged(mode):
    padded = ag.function(two_pushes, **mode)(np.ones(2), np.full(3, 2.0), True)
    np.testing.assert_array_equal(padded[:2], [[1.0, 1.0, 0.0], [2.0, 2.0, 2.0]])  # (and room to grow)
    with pytest.raises(ag.ExecutionError, match=r"the test stack: the value has shape \[3\] at iteration 1 and "
                                                r"\[2\] before; the gradient of a loop needs its values to keep one shape"):
        ag.function(two_pushes, **mode)(np.ones(2), np.full(3, 2.0), False)


def branch_on_a_growing_list(x, n):
    acc = [x]
    total = x * 0.0
    for i in range(n):
        acc.append(rt.sin(x) * 0.5)
        if i % 2 == 0:  # the other branch leaves this branch's value of unknown length empty
            total = total + rt.reduce_sum(rt.sin(rt.stack(acc)))
        else:
            total = total * 0.5 + x
    return total


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_a_branch_value_of_unknown_shape_in_a_loop_whose_other_branch_runs_too(n):
    check(branch_on_a_growing_list, np.float64(0.7), np.int32(n), argnums=(0,))


def test_a_loop_counting_its_iterations_is_its_own_counter():
    def f(x, n):
        y = x
        i = 0
        while i < n:
            if y > 1.0:
                y = y * 0.999 - 0.01 * x
            else:
                y = rt.sin(y) + 0.1 * x
            i += 1
        return y

    graph = ag.grad(f).get_concrete_function(np.float64(0.5), np.int32(9)).graph
    (loop,) = [op for op in graph.operations if op.type == "While" and op.attrs["body"].startswith("while_body")
               and not op.attrs["body"].startswith("while_body_grad")]
    body = graph.library[loop.attrs["body"]]
    # i and y, and one accumulator (y's: the branch's predicate is recomputed from it): no second counter
    assert len(body.outputs) == 3 and [op.type for op in body.operations].count("StackPush") == 1
    check(f, np.float64(0.5), np.int32(9), argnums=(0,))
    check(f, np.float64(1.5), np.int32(30), argnums=(0,))
