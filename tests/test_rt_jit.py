"""jit_compile: compiled graphs give exactly the interpreter's results."""

from __future__ import annotations

import contextlib
import inspect
import io
import linecache
import re
import warnings

import numpy as np
import pytest

import autograph.runtime as rt
from autograph.runtime.backends.numpy import codegen as jit
from autograph.runtime.exec import interpreter as executor
from autograph.runtime.errors import AutoGraphWarning, ExecutionError
from autograph.runtime.core.graph import Graph
from autograph.runtime.optimizer import graph_util, optimize


def trace(fn, *specs, name="f"):
    g = Graph(name)
    with g.as_default():
        args = [g.add_placeholder(np.dtype(d), s, name=f"x{i}") for i, (d, s) in enumerate(specs)]
        out = fn(*args)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        g.outputs = [t if isinstance(t, rt.Tensor) else rt.constant(t) for t in outs]
    return g


def check_same(graph, args):
    """Compiled == interpreted, for the graph and its optimized form; returns the source."""
    sources = []
    for g in (graph, optimize(graph)):
        fn, source = jit.compile_graph(g)
        expected = executor.run_graph(g, list(args))
        got = fn(list(args))
        assert len(got) == len(expected)
        for a, b in zip(expected, got):
            a, b = np.asarray(a), np.asarray(b)
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a, b)
        sources.append(source)
    return sources[0]


F3 = ("float32", (3,))
I0 = ("int32", ())
X3 = np.array([0.5, -1.5, 2.0], np.float32)


def collatz(n):
    def body(i, steps):
        nxt = rt.cond(rt.equal(i % 2, 0), lambda: i // 2, lambda: 3 * i + 1)
        return nxt, steps + 1

    return rt.while_loop(lambda i, steps: i > 1, body, (n, 0))


GRAPHS = [
    ("arith", lambda x, y: (x + y * 2.0 - x / (y + 10.0), x ** 2.0, -x, abs(y)), [F3, F3], [X3, X3 * 3]),
    ("compare", lambda x, y: (x < y, x >= y, rt.logical_and(x < y, x > 0.0), rt.logical_not(x == y)), [F3, F3],
     [X3, X3[::-1].copy()]),
    ("ints", lambda a, b: (a // b, a % b, a * b - a, rt.maximum(a, b), rt.minimum(a, b)),
     [("int32", (4,)), ("int32", (4,))], [np.array([7, -7, 9, 0], np.int32), np.array([2, 3, -4, 5], np.int32)]),
    ("reduce", lambda x: (rt.reduce_sum(x), rt.reduce_mean(x, axis=1), rt.reduce_max(x, axis=0, keepdims=True),
                          rt.argmax(x, axis=1)), [("float32", (2, 3))], [np.arange(6, dtype=np.float32).reshape(2, 3)]),
    ("array", lambda x: (rt.reshape(x, (3, 2)), rt.concat([x, x], axis=0), rt.stack([x, x]), x[1], x[:, 1:],
                         rt.gather(x, np.array([1, 0]))), [("float32", (2, 3))],
     [np.arange(6, dtype=np.float32).reshape(2, 3)]),
    ("math", lambda x: (rt.exp(x), rt.log(abs(x) + 1.0), rt.sin(x), rt.cos(x), rt.tanh(x), rt.sqrt(abs(x)),
                        rt.square(x), rt.cast(x, "int32")), [F3], [X3]),
    ("matmul", lambda a, b: a @ b, [("float32", (2, 3)), ("float32", (3, 2))],
     [np.ones((2, 3), np.float32), np.arange(6, dtype=np.float32).reshape(3, 2)]),
    ("cond", lambda x, p: rt.cond(p, lambda: x * 2.0, lambda: x - 1.0), [F3, ("bool", ())], [X3, np.bool_(False)]),
    ("cond_no_outputs_used", lambda x, p: (rt.cond(p, lambda: (x, x + 1.0), lambda: (x * 3.0, x))[1]),
     [F3, ("bool", ())], [X3, np.bool_(True)]),
    ("collatz", collatz, [I0], [np.int32(27)]),
    ("while_max_iter", lambda x: rt.while_loop(lambda s: rt.reduce_all(s < 1e9), lambda s: (s * 2.0,), (x,), maximum_iterations=5),
     [F3], [X3 + 2.0]),
    ("while_in_if_in_while", lambda n: rt.while_loop(
        lambda i, t: i < n,
        lambda i, t: (i + 1, rt.cond(i % 2 == 0,
                                     lambda: rt.while_loop(lambda j, u: j < i, lambda j, u: (j + 1, u + j), (0, t))[1],
                                     lambda: t - 1)),
        (0, 0)), [I0], [np.int32(7)]),
    ("swap", lambda a, b, n: rt.while_loop(lambda i, a, b: i < n, lambda i, a, b: (i + 1, b, a + b), (0, a, b)),
     [F3, F3, I0], [X3, X3 * 2, np.int32(5)]),
    ("loop_zero_times", lambda x, n: rt.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + x), (0, x)),
     [F3, I0], [X3, np.int32(0)]),
]


@pytest.mark.parametrize("name, fn, specs, args", GRAPHS, ids=[g[0] for g in GRAPHS])
def test_jit_matches_interpreter(name, fn, specs, args):
    check_same(trace(fn, *specs), args)


def test_if_becomes_if_and_while_becomes_while():
    source = check_same(trace(collatz, I0), [np.int32(6)])
    assert "\n        while " in source  # While -> while (its condition inlined: `while i < n:`)
    assert "\n            if " in source and "else:" in source
    assert "_k_If" not in source and "_k_While" not in source


def test_operators_are_spelled_as_python():
    source = check_same(trace(lambda x, y: (x + y, x < y, -x), F3, F3), [X3, X3])
    assert "x0 + x1" in source and "x0 < x1" in source and "-x0" in source


def test_elementwise_chain_on_large_arrays_reuses_buffers():
    def f(x):
        return rt.exp(x) * 2.0 + rt.sqrt(abs(x)) - x * x

    x = np.linspace(-3, 3, 1 << 16).astype(np.float32)
    source = check_same(trace(f, ("float32", x.shape)), [x])
    assert source.count("out=") >= 3
    # never into the input or a constant
    assert "out=x0" not in source and "out=const" not in source


def test_no_buffer_reuse_for_values_still_needed():
    def f(x):
        a = rt.exp(x)
        b = a * 2.0
        return b + a, rt.reshape(b, (-1,))

    x = np.linspace(-3, 3, 1 << 16).astype(np.float32)
    check_same(trace(f, ("float32", x.shape)), [x])


def test_no_buffer_reuse_for_small_arrays():
    source = check_same(trace(lambda x: rt.exp(x) * 2.0, F3), [X3])
    assert "out=" not in source


def test_source_is_in_linecache_and_inspect():
    fn, source = jit.compile_graph(trace(lambda x: x * 2.0, F3))
    assert inspect.getsource(fn) == source
    filename = fn.__code__.co_filename
    assert filename.startswith("<autograph-jit")
    assert "".join(linecache.getlines(filename)) == source


def test_errors_name_the_op_and_the_user_line():
    def boom(v):
        raise RuntimeError("boom")

    g = trace(lambda x: rt.py_function(boom, [x], "float32", shape=(3,)) + 1.0, F3)
    fn, _ = jit.compile_graph(g)
    with pytest.raises(RuntimeError, match="boom") as info:  # the user's exception keeps its type
        fn([X3])
    (note,) = info.value.__notes__
    assert "PyFunc" in note and "test_rt_jit.py:" in note
    with pytest.raises(RuntimeError, match="boom") as interpreted:
        executor.run_graph(g, [X3])
    assert interpreted.value.__notes__ == [note]


def test_errors_inside_loops_are_wrapped_too():
    def f(x, n):
        return rt.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + rt.gather(x, i)), (0, 0.0))[1]

    fn, _ = jit.compile_graph(trace(f, F3, I0))
    assert fn([X3, np.int32(3)])[0] == pytest.approx(1.0)
    with pytest.raises(ExecutionError, match="GatherV2"):
        fn([X3, np.int32(5)])


def test_stateful_ops_run_in_order_in_compiled_code():
    def f(x, n):
        rt.print("start")
        rt.while_loop(lambda i: i < n, lambda i: (rt.print("step", i) or i + 1,), (0,))
        rt.cond(n > 2, lambda: rt.print("big"), lambda: rt.print("small"))
        return x

    g = trace(f, F3, I0)
    fn, _ = jit.compile_graph(g)
    for graph_run in (lambda a: executor.run_graph(g, a), fn):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            graph_run([X3, np.int32(3)])
        assert buf.getvalue().split() == ["start", "step", "0", "step", "1", "step", "2", "big"]


def test_unused_stateful_results_still_run():
    v = rt.Variable(np.float32(0.0))
    g = trace(lambda x: (v.assign_add(np.float32(2.0)), x)[1], F3)
    fn, _ = jit.compile_graph(g)
    fn([X3])
    fn([X3])
    assert v.numpy() == 4.0


def test_pyfunc_with_unknown_shape_is_unsupported():
    g = trace(lambda x: rt.py_function(lambda v: v[v > 0], [x], "float32"), F3)
    assert any(t.shape is None or None in t.shape for t in g.outputs)
    with pytest.raises(jit.JitUnsupported, match="PyFunc"):
        jit.compile_graph(g)


def test_unknown_op_type_is_unsupported():
    g = trace(lambda x: x + 1.0, F3)
    op = graph_util.new_op(g, "NoSuchOp", [g.inputs[0]], {}, [(np.dtype("float32"), (3,))])
    g.operations.append(op)
    g.outputs = [op.outputs[0]]
    with pytest.raises(jit.JitUnsupported, match="NoSuchOp"):
        jit.compile_graph(g)


def test_function_falls_back_to_the_interpreter_with_one_warning():
    f = rt.function(lambda x: rt.py_function(lambda v: v[v > 0], [x], "float32"), jit_compile=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = f(X3)
        f(X3)
    relevant = [w for w in caught if issubclass(w.category, AutoGraphWarning)]
    assert len(relevant) == 1 and "PyFunc" in str(relevant[0].message)
    np.testing.assert_array_equal(result, X3[X3 > 0])


def test_rt_function_jit_compile_matches_interpreter():
    def f(x, n):
        return rt.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, rt.cond(s > 3.0, lambda: s, lambda: s * 2.0)),
                             (0, x))[1]

    compiled = rt.function(f, jit_compile=True)
    plain = rt.function(f)
    for n in (0, 1, 4):
        np.testing.assert_array_equal(compiled(np.float32(0.75), np.int32(n)), plain(np.float32(0.75), np.int32(n)))
    cf = compiled.get_concrete_function(rt.TensorSpec((), "float32"), rt.TensorSpec((), "int32"))
    assert "\n        while " in cf.compiled_source()


def test_generated_source_is_deterministic():
    sources = {jit.compile_graph(trace(collatz, I0))[1] for _ in range(3)}
    assert len(sources) == 1


def test_compile_loop_runs_a_while_with_a_runtime_iteration_budget():
    g = trace(collatz, I0)
    (op,) = [o for o in g.operations if o.type == "While"]
    cond, body = g.library[op.attrs["cond"]], g.library[op.attrs["body"]]
    fn, source = jit.compile_loop(cond, body)
    assert source.startswith(f"def {body.name}_jit(args, limit):")
    start = [np.int32(27), np.int32(0)]
    assert [int(v) for v in fn(start, 1000)] == [1, 111]
    assert [int(v) for v in fn(start, 3)] == [124, 3]  # 27 -> 82 -> 41 -> 124
    assert [int(v) for v in fn(start, 0)] == [27, 0]
    unbounded, source = jit.compile_loop(cond, body, bounded=False)
    assert "iterations" not in source
    assert [int(v) for v in unbounded(start, None)] == [1, 111]


def test_scalar_operators_used_once_are_inlined():
    source = check_same(trace(collatz, I0), [np.int32(27)])
    assert "greater =" not in source and "equal =" not in source  # inlined where used
    assert re.search(r"\n {8}while \w+ > \w+:\n", source)
    assert "break" not in source


def twice(x):
    a = x * 2.0
    return a + a * 3.0


def test_values_used_twice_or_arrays_are_not_inlined():
    source = check_same(trace(twice, ("float32", ())), [np.float32(1.5)])
    assert "\n        mul = x0 * const\n" in source
    source = check_same(trace(lambda x: rt.exp(x) * 2.0 + 1.0, F3), [X3])
    assert "mul = exp * const" in source


def test_errors_in_inlined_operators_still_name_an_op_and_the_line():
    g = trace(lambda x, n: (x * n) * 2 + 1, I0, I0)
    fn, source = jit.compile_graph(g)
    assert "x0 * x1 * const" in source or "(x0 * x1) * const" in source
    with np.errstate(over="raise"), pytest.raises(ExecutionError, match=r"op '\w+' created at .*test_rt_jit.py:\d+") as info:
        fn([np.int32(2 ** 30), np.int32(4)])
    assert "overflow" in str(info.value)


def test_a_power_is_not_inlined_so_its_error_is_the_interpreters():
    g = trace(lambda x, n: (x ** n) * 2 + 1, I0, I0)
    fn, source = jit.compile_graph(g)
    assert re.search(r"\n {8}pow_ = x0 \*\* x1\n", source)  # (pow: a builtin)
    errors = []
    for run in (fn, lambda args: executor.run_graph(g, args)):
        with pytest.raises(ValueError, match="negative integer powers") as info:  # the user's error, as in numpy
            run([np.int32(2), np.int32(-1)])
        errors.append(info.value.__notes__)
    assert errors[0] == errors[1] and "Pow op 'pow'" in errors[0][0]


def test_bounded_loops_keep_their_counter():
    g = trace(collatz, I0)
    (op,) = [o for o in g.operations if o.type == "While"]
    fn, source = jit.compile_loop(g.library[op.attrs["cond"]], g.library[op.attrs["body"]], bounded=True)
    assert "iterations" in source and "while True:" in source
    assert [int(v) for v in fn([np.int32(27), np.int32(0)], 3)] == [124, 3]
