"""Execution plans: buffer donation, parallel branches, tiered loops."""

from __future__ import annotations

import contextlib
import inspect
import io

import numpy as np
import pytest
from test_rt_jit import GRAPHS, X3, trace

import autograph.runtime as rt
from autograph.runtime.exec import interpreter as executor, parallel, tiering
from autograph.runtime.errors import ExecutionError

BIG = 1 << 16


def assert_same(expected, got):
    assert len(expected) == len(got)
    for a, b in zip(expected, got):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name, fn, specs, args", GRAPHS, ids=[g[0] for g in GRAPHS])
def test_schedule_matches_the_executor(name, fn, specs, args):
    g = trace(fn, *specs)
    expected = executor.run_graph(g, list(args))
    assert_same(expected, executor.plan(g).run(list(args)))
    assert_same(expected, parallel.dataflow(g).run(list(args)))


def chain(x):
    return rt.exp(x) * 2.0 + rt.sqrt(abs(x)) - x * x


def test_donation_reuses_temporaries_but_never_inputs():
    x = np.linspace(-3, 3, BIG).astype(np.float32)
    keep = x.copy()
    g = trace(chain, ("float32", x.shape))
    plan = executor.plan(g)
    donors = [s for s in plan.steps if s.donor is not None]
    assert len(donors) >= 3
    assert_same(executor.run_graph(g, [x]), plan.run([x]))
    np.testing.assert_array_equal(x, keep)


def test_no_donation_when_the_temporary_is_read_again_or_viewed():
    def f(x):
        a = rt.exp(x)
        b = a * 2.0  # a is read again below: no donation into a here
        return b + a, rt.reshape(b, (-1,)) * 1.5

    x = np.linspace(-3, 3, BIG).astype(np.float32)
    g = trace(f, ("float32", x.shape))
    plan = executor.plan(g)
    expected = executor.run_graph(g, [x])
    assert_same(expected, plan.run([x]))
    mul = next(s for s in plan.steps if s.op.type == "Mul" and s.op.inputs[0].op.type == "Exp")
    assert mul.donor is None


def test_no_donation_for_small_or_broadcast_results():
    g = trace(lambda x, m: (rt.exp(x) * 2.0, rt.exp(x[:1]) + m), ("float32", (3,)), ("float32", (BIG, 1)))
    assert all(s.donor is None for s in executor.plan(g).steps)


def two_chains(a, b):
    for _ in range(3):
        a = rt.sin(rt.exp(a))
        b = rt.sin(rt.exp(b))
    return a + b


def test_independent_heavy_chains_run_in_parallel():
    a = np.linspace(-1, 1, 1 << 18).astype(np.float32)
    g = trace(two_chains, ("float32", a.shape), ("float32", a.shape))
    assert parallel.dataflow(g).worthwhile
    assert parallel.runner(g) == parallel.dataflow(g).adaptive.run
    expected = executor.run_graph(g, [a, a[::-1].copy()])
    for _ in range(3):
        assert_same(expected, parallel.run_graph(g, [a, a[::-1].copy()]))


def test_chains_are_handed_out_as_whole_segments():
    a = ("float32", (1 << 18,))
    g = trace(two_chains, a, a)
    flow = parallel.dataflow(g)
    types = [s.op.type for s in flow.plan.steps]
    heads = [i for i, segment in enumerate(flow.segments) if len(segment) > 1]
    assert len(heads) == 2
    for i in heads:  # each chain of 3 x sin(exp(.)) is one task; the join (Add) is not part of it
        assert [types[j] for j in flow.segments[i]] == ["Exp", "Sin"] * 3
    add = types.index("Add")
    assert flow.segments[add] == (add,)
    inside = {j for i in heads for j in flow.segments[i][1:]}
    assert all(flow.segments[j] == () for j in inside)
    assert sorted(j for segment in flow.segments for j in segment) == list(range(len(types)))


def test_small_or_sequential_graphs_stay_sequential():
    small = trace(two_chains, ("float32", (16,)), ("float32", (16,)))
    assert not parallel.dataflow(small).worthwhile
    assert parallel.runner(small) == executor.plan(small).run
    a = ("float32", (1 << 18,))
    one_chain = trace(lambda x: rt.sin(rt.exp(rt.sin(x))), a)
    assert not parallel.dataflow(one_chain).worthwhile
    assert parallel.runner(one_chain) == executor.plan(one_chain).run


def test_parallel_run_keeps_side_effects_in_order():
    def f(a, b):
        rt.print("first")
        x = rt.exp(a)
        rt.print("second")
        y = rt.exp(b)
        rt.print("third")
        return rt.sin(x) + rt.sin(y)

    big = np.zeros(1 << 18, np.float32)
    g = trace(f, ("float32", big.shape), ("float32", big.shape))
    assert parallel.dataflow(g).worthwhile
    for _ in range(3):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            parallel.dataflow(g).run([big, big])
        assert buf.getvalue().split() == ["first", "second", "third"]


def test_parallel_errors_name_the_op():
    def f(a, b, idx):
        x = rt.sin(rt.exp(a))
        y = rt.gather(rt.exp(b), idx)  # out of range at run time, on a worker thread
        return x + rt.sin(y)

    big = np.zeros(1 << 18, np.float32)
    g = trace(f, ("float32", big.shape), ("float32", big.shape), ("int32", big.shape))
    flow = parallel.dataflow(g)
    assert flow.worthwhile
    bad = np.full(big.shape, 1 << 20, np.int32)
    with pytest.raises(ExecutionError, match="GatherV2.*out of bounds"):
        flow.run([big, big, bad])
    with pytest.raises(ExecutionError, match="GatherV2"):
        flow.plan.run([big, big, bad])
    assert_same(executor.run_graph(g, [big, big, bad * 0]), flow.run([big, big, bad * 0]))


def test_stateful_heavy_ops_stay_on_the_calling_thread():
    import threading

    seen = []

    def record(v):
        seen.append(threading.current_thread() is threading.main_thread())
        return v

    def f(a, b):
        x = rt.py_function(record, [rt.exp(a)], "float32", shape=a.shape)
        return rt.sin(x) + rt.sin(rt.exp(b))

    big = np.zeros(1 << 18, np.float32)
    g = trace(f, ("float32", big.shape), ("float32", big.shape))
    parallel.dataflow(g).run([big, big])
    assert seen == [True]


def test_wrong_number_of_arguments_is_the_executors_error():
    g = trace(lambda x: x + 1.0, ("float32", (3,)))
    with pytest.raises(TypeError, match="takes 1 input"):
        executor.plan(g).run([X3, X3])
    with pytest.raises(TypeError, match="takes 1 input"):
        parallel.dataflow(g).run([X3, X3])


# -- tiered loops ------------------------------------------------------------------


def loop_graph(limit=None, body_extra=lambda i, s: s):
    def f(n, x):
        def body(i, s):
            s = rt.cond(rt.equal(i % 3, 0), lambda: s + x, lambda: s - 0.5)
            return i + 1, body_extra(i, s)

        return rt.while_loop(lambda i, s: i < n, body, (0, rt.constant(0.0, "float32")), maximum_iterations=limit)

    g = trace(f, ("int32", ()), ("float32", ()))
    (op,) = [o for o in g.operations if o.type == "While"]
    return g, op


def run_while_op(g, op, n, x):
    cond, body = g.library[op.attrs["cond"]], g.library[op.attrs["body"]]
    values = {id(g.inputs[0]): np.int32(n), id(g.inputs[1]): np.float32(x)}
    args = [values.get(id(t)) if id(t) in values else t.op.attrs["value"] for t in op.inputs]
    return tiering.run_loop(cond, body, args, op.attrs.get("maximum_iterations"))


@pytest.mark.parametrize("n", [0, 5, tiering.HOT_ITERATIONS, tiering.HOT_ITERATIONS + 1, 500])
@pytest.mark.parametrize("limit", [None, 3, tiering.HOT_ITERATIONS + 4])
def test_run_loop_matches_the_while_kernel(n, limit):
    g, op = loop_graph(limit)
    expected = executor.run_graph(g, [np.int32(n), np.float32(1.25)])
    assert_same(expected, run_while_op(g, op, n, 1.25))


def test_run_loop_compiles_hot_loops_once(monkeypatch):
    monkeypatch.setattr(tiering, "HOT_SECONDS", 0.0)  # hot after HOT_ITERATIONS iterations
    g, op = loop_graph()
    body = g.library[op.attrs["body"]]
    run_while_op(g, op, 5, 1.0)
    assert "_compiled_loops" not in body.__dict__  # cold: interpreted only
    run_while_op(g, op, 100, 1.0)
    compiled = body.__dict__["_compiled_loops"][False][1]
    assert compiled is not None
    run_while_op(g, op, 100, 1.0)
    assert body.__dict__["_compiled_loops"][False][1] is compiled


@pytest.mark.parametrize("n", [0, 1, 5])
def test_run_loop_once_compiled_runs_compiled_from_the_first_iteration(monkeypatch, n):
    monkeypatch.setattr(tiering, "HOT_SECONDS", 0.0)
    fresh, _ = loop_graph()
    expected = executor.run_graph(fresh, [np.int32(n), np.float32(1.0)])  # interpreted: n < HOT_ITERATIONS
    g, op = loop_graph()
    body = g.library[op.attrs["body"]]
    run_while_op(g, op, 100, 1.0)
    key, compiled = body.__dict__["_compiled_loops"][False]
    calls = []
    body.__dict__["_compiled_loops"][False] = (key, lambda *a: calls.append(a) or compiled(*a))
    assert_same(expected, run_while_op(g, op, n, 1.0))
    assert len(calls) == 1 and calls[0][1] is None  # no interpreted iterations first, no bound


def test_run_loop_compiles_only_after_interpreting_about_as_long_as_compiling(monkeypatch):
    monkeypatch.setattr(tiering, "HOT_SECONDS", 1e9)
    g, op = loop_graph()
    body = g.library[op.attrs["body"]]
    expected = executor.run_graph(g, [np.int32(100), np.float32(1.0)])
    assert_same(expected, run_while_op(g, op, 100, 1.0))
    assert "_compiled_loops" not in body.__dict__  # 100 iterations, but not yet worth a compilation
    spent = body._interpreted_seconds
    assert spent > 0
    monkeypatch.setattr(tiering, "HOT_SECONDS", spent)  # the time is kept across executions
    assert_same(expected, run_while_op(g, op, 100, 1.0))
    assert body.__dict__["_compiled_loops"][False][1] is not None


def test_run_loop_falls_back_when_the_body_cannot_compile(monkeypatch):
    monkeypatch.setattr(tiering, "HOT_SECONDS", 0.0)
    g, op = loop_graph(body_extra=lambda i, s: rt.py_function(lambda v: v, [s], "float32"))
    expected = executor.run_graph(g, [np.int32(50), np.float32(2.0)])
    assert_same(expected, run_while_op(g, op, 50, 2.0))
    assert g.library[op.attrs["body"]].__dict__["_compiled_loops"][False][1] is None


def test_run_loop_errors_in_compiled_iterations_name_the_op(monkeypatch):
    monkeypatch.setattr(tiering, "HOT_SECONDS", 0.0)
    def check(i, s):
        return rt.py_function(_fail_at_40, [i, s], "float32", shape=())

    g, op = loop_graph(body_extra=check)
    with pytest.raises(RuntimeError, match="iteration 40") as info:  # the user's own exception
        run_while_op(g, op, 100, 1.0)
    assert "PyFunc" in info.value.__notes__[0]


def _fail_at_40(i, s):
    if i == 40:
        raise RuntimeError("iteration 40")
    return s


def test_sequential_runner_matches_the_executor_on_loops():
    g, _ = loop_graph()
    assert inspect.unwrap(parallel.runner(g, parallel=False)) == executor.plan(g).run
    assert_same(executor.run_graph(g, [np.int32(300), np.float32(0.5)]),
                parallel.runner(g, parallel=False)([np.int32(300), np.float32(0.5)]))


def test_rt_function_runs_hot_loops_compiled_with_identical_results():
    def f(n):
        return rt.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, rt.cond(i % 3 == 0, lambda: s + 1.0,
                                                                                  lambda: s - 0.25)),
                             (0, rt.constant(0.0, "float64")))[1]

    fast, slow = rt.function(f), rt.function(f, optimize=False, parallel=False)
    for n in (0, 10, 1000):
        assert fast(np.int32(n)) == slow(np.int32(n))


class _StubRunners:
    """Stands for the two run modes: records which one the adaptive policy picked."""

    def __init__(self):
        self.calls = []

    def run(self, args):
        self.calls.append("sequential")
        return args

    def run_parallel(self, args):
        self.calls.append("parallel")
        return args


def test_adaptive_runner_tries_both_modes_then_keeps_the_faster():
    stub = _StubRunners()
    runner = parallel.Adaptive(stub.run, stub.run_parallel)
    trials = parallel.Adaptive.TRIALS
    for _ in range(2 * trials):
        runner.run([1])
    assert stub.calls.count("parallel") == stub.calls.count("sequential") == trials
    runner.times = ([2.0] * trials, [1.0] * trials)  # parallel measured faster
    assert runner.choice() is True
    runner.times = ([1.0] * trials, [2.0] * trials)  # sequential measured faster
    assert runner.choice() is False
    runner.calls = parallel.Adaptive.RECHECK  # time to re-measure the other mode
    assert runner.choice() is True


def test_runner_uses_the_adaptive_policy_only_for_heavy_parallel_graphs():
    a = ("float32", (1 << 18,))
    g = trace(two_chains, a, a)
    assert parallel.runner(g) == parallel.dataflow(g).adaptive.run
    assert inspect.unwrap(parallel.runner(g, parallel=False)) == executor.plan(g).run
    x = np.linspace(-1, 1, 1 << 18).astype(np.float32)
    expected = executor.run_graph(g, [x, x])
    for _ in range(2 * parallel.Adaptive.TRIALS + 1):
        assert_same(expected, parallel.run_graph(g, [x, x]))
