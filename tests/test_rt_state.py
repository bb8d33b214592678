"""Stateful ops: Variable, rt.print, rt.random, rt.py_function -- eagerly and in traced functions."""

from __future__ import annotations

import collections
import weakref

import numpy as np
import pytest

from autograph import runtime as rt
from autograph.runtime.core.graph import Graph
from autograph.runtime.errors import GraphDefError
from autograph.runtime.ops import variables


# -- rt.print --------------------------------------------------------------------


def test_print_eager_matches_python_print(capsys):
    values = ("x =", np.float32(1.5), np.arange(3), 7, [1, 2], True)
    rt.print(*values)
    print(*values)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == out[1] == "x = 1.5 [0 1 2] 7 [1, 2] True"


def test_print_runs_at_every_call_python_print_at_trace_time(capsys):
    @rt.function
    def f(x):
        print("tracing")
        rt.print("value:", x, sep=" ", end="!\n")
        return x + 1

    f(np.int32(1))
    f(np.int32(2))
    f(np.int32(3))
    assert capsys.readouterr().out == "tracing\nvalue: 1!\nvalue: 2!\nvalue: 3!\n"


def test_print_to_stderr(capsys):
    @rt.function
    def f(x):
        rt.print("err", x, output_stream="stderr")
        return x

    f(np.int32(4))
    captured = capsys.readouterr()
    assert captured.err == "err 4\n" and captured.out == ""


def test_print_bad_stream_and_tensor_containers():
    with pytest.raises(ValueError, match="output_stream must be 'stdout' or 'stderr'"):
        rt.print(1, output_stream="file.txt")

    @rt.function
    def f(x):
        rt.print([x, [x]])  # printed (tests/test_print_containers.py)
        rt.print(collections.deque([x]))
        return x

    with pytest.raises(TypeError, match=r"cannot print a deque holding tensors.*print\(a, b\)"):
        f(np.int32(1))

    @rt.function
    def g(x):
        loop = [x]
        loop.append(loop)
        rt.print(loop)
        return x

    with pytest.raises(TypeError, match=r"cannot print itself holding tensors"):
        g(np.int32(1))


def test_print_values_are_formatted_like_numpy(capsys):
    @rt.function
    def f(x):
        rt.print(x, x * 2)
        return x

    x = np.array([[1.5, 2.0], [3.0, 4.25]], np.float32)
    f(x)
    print(x, x * 2)
    out = capsys.readouterr().out
    half = len(out) // 2
    assert out[:half] == out[half:]


# -- ordering of side effects -----------------------------------------------------------


MODES = {"interpreter": {}, "unoptimized": {"optimize": False}, "jit": {"jit_compile": True}}


@pytest.mark.parametrize("mode", list(MODES))
def test_side_effects_run_in_program_order(capsys, mode):
    v = rt.Variable(np.int32(0))

    @rt.function(**MODES[mode])
    def f(x):
        rt.print("start", v)
        v.assign(x)
        rt.print("after assign", v)
        v.assign_add(10)
        rt.print("after add", v)
        v.assign_sub(1)
        return rt.constant(0)

    f(np.int32(5))
    assert capsys.readouterr().out == "start 0\nafter assign 5\nafter add 15\n"
    assert v.numpy() == 14
    f(np.int32(1))
    assert capsys.readouterr().out == "start 14\nafter assign 1\nafter add 11\n"
    assert v.numpy() == 10


@pytest.mark.parametrize("mode", list(MODES))
def test_stateful_ops_run_even_when_unused(mode):
    v = rt.Variable(np.float32(1.0))
    calls = []

    @rt.function(**MODES[mode])
    def f(x):
        v.assign_add(x)  # result unused
        rt.py_function(lambda a: calls.append(float(a)), [x], None)
        return x * 2

    assert f(np.float32(3)) == 6
    assert v.numpy() == 4.0 and calls == [3.0]
    f(np.float32(1))
    assert v.numpy() == 5.0 and calls == [3.0, 1.0]


def test_stateful_chain_in_raw_graph_runs_through_executor():
    v = rt.Variable(np.zeros(2, np.float32))
    g = Graph("raw")
    with g.as_default():
        x = g.add_placeholder(np.dtype("float32"), (2,), name="x")
        v.assign_add(x)
        v.assign_add(x)
        g.outputs = [x]
    rt.run_graph(g, [np.ones(2, np.float32)])
    np.testing.assert_array_equal(v.numpy(), [2, 2])
    types = [op.type for op in g.operations]
    assert types.count("AssignAddVariable") == 2
    second = [op for op in g.operations if op.type == "AssignAddVariable"][1]
    assert second.control_inputs and second.control_inputs[0].type == "AssignAddVariable"


# -- Variable ----------------------------------------------------------------------------


def test_variable_eager_api():
    v = rt.Variable([1.0, 2.0], dtype="float32", name="w")
    assert v.dtype == np.float32 and v.shape == (2,) and v.name == "w"
    np.testing.assert_array_equal(v.assign([3.0, 4.0]), [3, 4])
    np.testing.assert_array_equal(v.assign_add(1), [4, 5])
    np.testing.assert_array_equal(v.assign_sub([1, 1]), [3, 4])
    np.testing.assert_array_equal(v.read_value(), [3, 4])
    np.testing.assert_array_equal(v.value(), [3, 4])
    np.testing.assert_array_equal(v + 1, [4, 5])
    np.testing.assert_array_equal(2 * v, [6, 8])
    np.testing.assert_array_equal(np.float32(2) * v, [6, 8])
    np.testing.assert_array_equal(-v, [-3, -4])
    assert v[1] == 4
    np.testing.assert_array_equal(np.asarray(v), [3, 4])
    copy = v.numpy()
    copy[0] = 100
    assert v.numpy()[0] == 3
    assert "w" in repr(v) and "float32[2]" in repr(v)


def test_variable_dtypes_follow_numpy():
    assert rt.Variable(1.0).dtype == np.float64
    assert rt.Variable(3).dtype == np.int64
    assert rt.Variable(True).dtype == np.bool_
    assert rt.Variable(np.float32(1)).dtype == np.float32
    assert rt.Variable([1.0, 2.0], dtype="float32").dtype == np.float32
    assert rt.Variable(1, dtype="float64").dtype == np.float64
    assert type(rt.Variable(np.float32(2.5)).numpy()) is np.float32
    with pytest.raises(TypeError, match="unsupported dtype"):
        rt.Variable("text")


def test_variable_assign_type_errors():
    v = rt.Variable(np.zeros(2, np.int32), name="counts")
    with pytest.raises(TypeError, match=r"Variable.assign of 'counts' \(int32\).*cannot assign a float64"):
        v.assign(np.array([1.5, 2.5]))
    with pytest.raises(ValueError, match="cannot assign a value of shape"):
        v.assign(np.zeros(3, np.int32))


def test_variable_assign_errors_at_trace_time():
    v = rt.Variable(np.zeros(2, np.float32), name="w")

    @rt.function
    def wrong_dtype(x):
        return v.assign(x)

    np.testing.assert_array_equal(wrong_dtype(np.ones(2, np.float64)), [1, 1])  # cast as numpy's += would
    np.testing.assert_array_equal(wrong_dtype(np.full(2, 3, np.int32)), [3, 3])
    assert v.dtype == np.float32 and v.numpy().dtype == np.float32
    counts = rt.Variable(np.zeros(2, np.int32), name="counts")

    @rt.function
    def float_into_int(x):
        return counts.assign_add(x)

    expected = r"variable 'counts' has dtype int32 but the value .* has dtype float32.*rt.cast"
    with pytest.raises(TypeError, match=expected):
        float_into_int(np.zeros(2, np.float32))

    @rt.function
    def wrong_shape(x):
        return v.assign(x)

    with pytest.raises(ValueError, match=r"variable 'w' has shape \[2\]; a value of shape \[3\] cannot be assigned"):
        wrong_shape(np.zeros(3, np.float32))


def test_variable_flexible_shape():
    v = rt.Variable(np.zeros(2, np.float32), shape=(None,))

    @rt.function
    def grow(x):
        return v.assign(x)

    grow(np.ones(5, np.float32))
    assert v.numpy().shape == (5,)


def test_variable_numpy_and_array_inside_trace_are_errors():
    v = rt.Variable(1.0, name="v")

    @rt.function
    def f(x):
        return v.numpy() + x

    with pytest.raises(rt.TracingError, match=r"Variable.numpy\(\) of 'v'.*read_value"):
        f(np.float32(1))

    @rt.function
    def g(x):
        return np.asarray(v) + x

    with pytest.raises(rt.TracingError, match="freeze its current value"):
        g(np.float32(1))


def test_variable_arithmetic_in_a_trace_reads_current_value():
    v = rt.Variable(np.float32(2.0))

    @rt.function
    def f(x):
        return v * x + v

    assert f(np.float32(3)) == 8
    v.assign(10.0)
    assert f(np.float32(3)) == 40
    assert f.tracing_count == 1


def test_variable_as_argument_is_keyed_by_dtype_and_shape():
    @rt.function
    def bump(var, x):
        return var.assign_add(x)

    a, b = rt.Variable(0), rt.Variable(100)
    assert bump(a, np.int32(1)) == 1
    assert bump(a, np.int32(1)) == 2
    assert bump(b, np.int32(1)) == 101
    assert bump.tracing_count == 1  # one graph for both: each call updates the variable passed in
    assert a.numpy() == 2 and b.numpy() == 101


def test_variable_kept_alive_by_function():
    @rt.function
    def f(x):
        return x

    made = []  # a weak reference: only the function keeps the variable alive

    def body(x):
        if not made:  # created on the first call only
            made.append(weakref.ref(rt.Variable(5)))
        return made[0]().read_value() + x

    make = rt.function(body)
    import gc

    assert make(np.int32(1)) == 6
    gc.collect()
    assert make(np.int32(1)) == 6


def test_export_import_variable():
    import json

    v = rt.Variable(np.array([1.0, 2.0]), name="w")
    record = json.loads(json.dumps(variables.export_variable(v.handle)))
    assert record["name"] == "w" and record["value"] == [1.0, 2.0] and record["shape"] == [2]
    owned = {}
    handle = variables.import_variable(record, owned)
    assert handle != v.handle  # a record never names a live variable, even in the process that saved it
    assert variables.import_variable(record, owned) == handle  # recreated once per load
    copy = variables.lookup_variable(handle)
    np.testing.assert_array_equal(copy.numpy(), [1.0, 2.0])
    assert copy.dtype == np.float64 and handle != v.handle
    copy.assign_add(1.0)
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


def test_graph_def_round_trip_with_variables_and_prints(capsys):
    import json

    v = rt.Variable(np.int32(1), name="count")

    @rt.function
    def step(x):
        rt.print("count", v)
        v.assign_add(x)
        return v.read_value() * 10

    graph = step.get_concrete_function(np.int32(0)).graph
    text = json.dumps(graph.as_graph_def())
    loaded = Graph.from_graph_def(json.loads(text))
    assert rt.run_graph(loaded, [np.int32(2)]) == [30]
    assert v.numpy() == 1  # the loaded graph has its own variable, made from the record
    assert capsys.readouterr().out == "count 1\n"
    assert rt.run_graph(loaded, [np.int32(5)]) == [80]  # ... which keeps its state between runs
    other = Graph.from_graph_def(json.loads(text))
    assert rt.run_graph(other, [np.int32(5)]) == [60]  # each load starts from the value saved: 1
    assert v.numpy() == 1


def test_graph_def_with_py_function_refuses_to_load():
    step = rt.function(lambda x: rt.py_function(lambda a: a, [x], "int32"))
    graph = step.get_concrete_function(np.int32(0)).graph
    with pytest.raises(GraphDefError, match="py_function"):
        Graph.from_graph_def(graph.as_graph_def())


# -- random --------------------------------------------------------------------------------


def test_random_fresh_values_each_call():
    @rt.function
    def draw(x):
        return rt.random.uniform((4,)) + x

    a = draw(np.float32(0))
    b = draw(np.float32(0))
    assert a.shape == (4,) and a.dtype == np.float32
    assert not np.array_equal(a, b)
    assert draw.tracing_count == 1
    assert np.all((a >= 0) & (a < 1))


def test_random_op_seed_is_reproducible():
    def run():
        @rt.function
        def draw(x):
            return rt.random.normal((3,), seed=7) * x

        return [draw(np.float32(1)) for _ in range(3)]

    first, second = run(), run()
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], first[1])  # a sequence, not one value


def test_random_global_seed():
    def run():
        rt.random.set_seed(1234)
        eager = rt.random.uniform((2,))
        f = rt.function(lambda x: rt.random.uniform((2,), minval=-1, maxval=1, dtype="float64") + x)
        return eager, f(0.0), f(0.0)

    first, second = run(), run()
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    assert first[1].dtype == np.float64 and np.all(np.abs(first[1]) <= 1)
    rt.random.set_seed(None)


def test_random_ints_and_shapes():
    ints = rt.random.uniform((1000,), minval=3, maxval=6, dtype="int32", seed=1)
    assert ints.dtype == np.int32 and set(np.unique(ints)) == {3, 4, 5}
    with pytest.raises(ValueError, match="an int dtype needs maxval"):
        rt.random.uniform((2,), dtype="int32")
    scalar = rt.random.normal(())
    assert type(scalar) is np.float32
    with pytest.raises(TypeError, match="must be a float dtype"):
        rt.random.normal((2,), dtype="int32")

    @rt.function
    def dynamic(x):
        return rt.random.uniform(rt.shape(x))

    assert dynamic(np.zeros((2, 3), np.float32)).shape == (2, 3)
    graph = dynamic.get_concrete_function(np.zeros((2, 3), np.float32)).graph
    assert "RandomUniform" in [op.type for op in graph.operations]


def test_random_normal_statistics():
    values = rt.random.normal((20000,), mean=3.0, stddev=2.0, seed=5)
    assert abs(values.mean() - 3.0) < 0.1 and abs(values.std() - 2.0) < 0.1


# -- py_function ----------------------------------------------------------------------------


def test_py_function_runs_at_execution_time():
    calls = []

    def host(a):
        calls.append(a.copy())
        return a * 2

    @rt.function
    def f(x):
        return rt.py_function(host, [x + 1], "float32", shape=(2,)) - 1

    np.testing.assert_array_equal(f(np.ones(2, np.float32)), [3, 3])
    np.testing.assert_array_equal(f(np.zeros(2, np.float32)), [1, 1])
    assert len(calls) == 2
    assert f.get_concrete_function(np.ones(2, np.float32)).structured_outputs.shape == (2,)


def test_py_function_multiple_outputs():
    @rt.function
    def f(x):
        lo, hi = rt.py_function(lambda a: (a.min(), a.max()), [x], ["float32", "float32"])
        return hi - lo

    assert f(np.array([1, 5, 2], np.float32)) == 4
    assert rt.py_function(lambda a: (a, a), [1.0], ["float64", "float64"]) == [1.0, 1.0]


def test_py_function_output_checks():
    @rt.function
    def wrong_dtype(x):
        return rt.py_function(lambda a: np.array(["s"]), [x], "float32")

    with pytest.raises(rt.ExecutionError, match=r"output 0 has dtype <U1, but Tout says float32"):
        wrong_dtype(np.float32(1))

    @rt.function
    def wrong_shape(x):
        return rt.py_function(lambda a: np.zeros(3, np.float32), [x], "float32", shape=(2,))

    with pytest.raises(rt.ExecutionError, match=r"output 0 has shape \[3\], but the declared shape is \[2\]"):
        wrong_shape(np.float32(1))

    @rt.function
    def wrong_count(x):
        return rt.py_function(lambda a: a, [x], ["float32", "float32"])

    with pytest.raises(rt.ExecutionError, match="expected 2 value"):
        wrong_count(np.float32(1))


def test_py_function_casts_same_kind_results():
    assert type(rt.py_function(lambda: 1.5, [], "float32")) is np.float32
    with pytest.raises(TypeError, match="must be callable"):
        rt.py_function(3, [], "float32")


# -- state inside functional control flow ------------------------------------------------------


@pytest.mark.parametrize("mode", list(MODES))
def test_side_effects_inside_while_and_cond(capsys, mode):
    v = rt.Variable(0)

    @rt.function(**MODES[mode])
    def f(n):
        def body(i):
            rt.print("iter", i)
            v.assign_add(i)
            return (i + 1,)

        (i,) = rt.while_loop(lambda i: i < n, body, (rt.constant(0),))
        r = rt.cond(n > 2, lambda: v.assign_add(100), lambda: v.read_value())
        return i, r

    assert f(np.int64(3)) == (3, 103)
    assert capsys.readouterr().out == "iter 0\niter 1\niter 2\n"
    assert f(np.int64(1)) == (1, 103)
    assert capsys.readouterr().out == "iter 0\n"
    assert v.numpy() == 103
    graph = f.get_concrete_function(np.int64(1)).graph
    assert {"While", "If"} <= {op.type for op in graph.operations}


def test_random_inside_a_loop_draws_every_iteration():
    @rt.function
    def f(n):
        def body(i, acc):
            return i + 1, rt.concat([acc, rt.reshape(rt.random.uniform(()), (1,))], 0)

        _, acc = rt.while_loop(lambda i, acc: i < n, body, (rt.constant(0), rt.zeros((0,), "float32")),
                               shape_invariants=(None, rt.TensorSpec((None,), "float32")))
        return acc

    values = f(np.int64(4))
    assert values.shape == (4,) and len(set(values.tolist())) == 4


def test_converted_function_with_state_in_tensor_loop(capsys):
    import autograph as ag

    total = rt.Variable(np.float32(0))

    def accumulate(x, n):
        i = 0
        while i < n:
            total.assign_add(x)
            rt.print("step", i)
            i += 1
        return total.read_value()

    f = ag.function(accumulate)
    assert f(np.float32(1.5), np.int32(3)) == 4.5
    assert capsys.readouterr().out == "step 0\nstep 1\nstep 2\n"
    assert f(np.float32(1.0), np.int32(2)) == 6.5
    assert f.tracing_count == 1
