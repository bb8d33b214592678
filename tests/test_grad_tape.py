"""rt.GradientTape inside ag.function: watching, variables, nesting, persistence, bad input."""

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt


def test_watched_tensor_and_variable_read_automatically():
    w = rt.Variable(np.array([1.0, -2.0]), name="w")

    @ag.function
    def step(x):
        with rt.GradientTape() as tape:
            tape.watch(x)
            loss = rt.reduce_sum(rt.square(x * w)) + rt.reduce_sum(w)
        dx, dw = tape.gradient(loss, [x, w])
        return dx, dw

    x = np.array([0.5, 3.0])
    dx, dw = step(x)
    np.testing.assert_allclose(dx, 2 * x * np.array([1.0, -2.0]) ** 2)
    np.testing.assert_allclose(dw, 2 * np.array([1.0, -2.0]) * x ** 2 + 1)


def test_only_recorded_ops_are_differentiated_and_unwatched_sources_give_none():
    @ag.function
    def f(x, y):
        before = x * 2.0  # outside the tape: a constant for it
        with rt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            z = before * x
        return tape.gradient(z, x), tape.gradient(z, y), tape.gradient(z, y, unconnected_gradients="zero")

    dx, dy, dy0 = f(np.float64(3.0), np.float64(1.0))
    assert dx == 6.0 and dy is None and dy0 == 0.0


def test_variables_not_watched_when_asked():
    w = rt.Variable(np.float64(2.0))

    @ag.function
    def f(x):
        with rt.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(x)
            y = x * w
        return tape.gradient(y, [x, w])

    dx, dw = f(np.float64(3.0))
    assert dx == 2.0 and dw is None


def test_nested_tapes_give_second_derivatives_through_if():
    @ag.function
    def f(x):
        with rt.GradientTape() as outer:
            outer.watch(x)
            with rt.GradientTape() as inner:
                inner.watch(x)
                if x > 0.0:
                    y = x * x * x
                else:
                    y = rt.sin(x)
            dy = inner.gradient(y, x)
        return dy, outer.gradient(dy, x)

    assert f(np.float64(2.0)) == pytest.approx((12.0, 12.0))
    dy, d2y = f(np.float64(-1.0))
    assert dy == pytest.approx(np.cos(-1.0)) and d2y == pytest.approx(-np.sin(-1.0))


def test_output_gradients_and_structures():
    @ag.function
    def f(x):
        with rt.GradientTape() as tape:
            tape.watch(x)
            y = {"a": x * 2.0, "b": rt.sin(x)}
        return tape.gradient(y, {"x": x}, output_gradients={"a": np.ones(2), "b": np.array([1.0, 0.0])})

    g = f(np.array([0.0, 1.0]))
    np.testing.assert_allclose(g["x"], [3.0, 2.0])


def test_loop_in_the_tape():
    @ag.function
    def f(x, n):
        with rt.GradientTape() as tape:
            tape.watch(x)
            y = x
            for i in range(n):
                y = rt.sin(y) + x
        return tape.gradient(y, x)

    def unrolled(x):
        y = x
        for i in range(3):
            y = rt.sin(y) + x
        return y

    np.testing.assert_allclose(f(np.float64(0.4), np.int32(3)), ag.grad(unrolled)(0.4))


def test_outside_a_trace_is_an_error_pointing_to_grad():
    with pytest.raises(ag.TracingError, match=r"outside a traced function.*ag.grad\(f\)\(x\)"):
        with rt.GradientTape():
            pass


def test_second_call_on_a_non_persistent_tape():
    @ag.function
    def f(x):
        with rt.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        tape.gradient(y, x)
        return tape.gradient(y, x)

    with pytest.raises(ag.TracingError, match=r"second time on a non-persistent tape.*persistent=True"):
        f(np.float64(1.0))


def test_a_variable_read_inside_a_loop_is_refused():
    w = rt.Variable(np.float64(2.0), name="w_loop")

    @ag.function
    def f(x, n):
        with rt.GradientTape() as tape:
            y = x
            for i in range(n):
                y = y * w
        return tape.gradient(y, w)

    with pytest.raises(ag.TracingError, match=r"rt.Variable 'w_loop' is read inside a tensor if or loop.*read_value"):
        f(np.float64(1.0), np.int32(2))


def test_bad_arguments():
    @ag.function
    def f(x):
        with rt.GradientTape() as tape:
            tape.watch(np.float64(1.0))
        return x

    with pytest.raises(TypeError, match="is not a tensor of the traced function"):
        f(np.float64(1.0))

    @ag.function
    def g(x):
        with rt.GradientTape() as tape:
            tape.watch(x)
            y = x * 2.0
        return tape.gradient(y, x, unconnected_gradients="zeros")

    with pytest.raises(ValueError, match="unconnected_gradients must be 'none' or 'zero'"):
        g(np.float64(1.0))
