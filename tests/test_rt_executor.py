"""The interpreter: one plan per graph (schedule, last uses, donation), rules per op kind."""

from __future__ import annotations

import numpy as np
import pytest
from test_rt_jit import trace

import autograph.runtime as rt
from autograph.runtime.core import backend, opdef
from autograph.runtime.exec import interpreter as executor, parallel
from autograph.runtime.ops import apply
from autograph.runtime.errors import ExecutionError

BIG = 1 << 16


def assert_same(expected, got):
    assert len(expected) == len(got)
    for a, b in zip(expected, got):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


def test_plan_lists_one_step_per_needed_op_in_graph_order():
    g = trace(lambda x, y: (rt.sin(x) * y, rt.log(x))[0], ("float32", (3,)), ("float32", (3,)))
    plan = executor.plan(g)
    # Placeholders and Consts take no step, the unused Log none either
    assert [s.op.type for s in plan.steps] == ["Sin", "Mul"]
    assert plan.nargs == 2 and plan.steps[0].ins == (0,)
    assert plan.steps[1].ins == (plan.steps[0].single, 1)
    assert plan.output_slots == [plan.steps[1].single]


def test_constants_live_in_the_template():
    g = trace(lambda x: x + rt.constant(np.float32(2.5)), ("float32", ()))
    plan = executor.plan(g)
    assert [s.op.type for s in plan.steps] == ["Add"]
    const_slot = plan.steps[0].ins[1]
    assert plan.template[const_slot] == np.float32(2.5)
    assert executor.run_graph(g, [np.float32(1)]) == [np.float32(3.5)]


def test_every_op_kind_has_a_rule_and_others_call_their_kernel():
    assert set(executor.RULES) == {"Placeholder", "Const", "If", "While"}
    g = trace(lambda x: rt.reshape(x, (3, 1)), ("float32", (3,)))
    (step,) = executor.plan(g).steps
    kernel = backend.get().kernel("Reshape")
    assert step.call is kernel or (step.call.func is kernel and step.call.keywords == dict(step.op.attrs))
    np.testing.assert_array_equal(executor.run_graph(g, [np.arange(3, dtype=np.float32)])[0], [[0], [1], [2]])


def test_functional_ops_get_the_library():
    g = trace(lambda p, x: rt.cond(p, lambda: x + 1.0, lambda: x - 1.0), ("bool", ()), ("float32", ()))
    (step,) = [s for s in executor.plan(g).steps if s.op.type == "If"]
    assert step.call.keywords["library"] is g.library
    assert executor.run_graph(g, [np.bool_(True), np.float32(2)]) == [np.float32(3)]
    assert executor.run_graph(g, [np.bool_(False), np.float32(2)]) == [np.float32(1)]


def chain(x):
    return rt.exp(x) * 2.0 + rt.sqrt(abs(x)) - x * x


def test_the_interpreter_donates_dead_temporaries():
    x = np.linspace(-3, 3, BIG).astype(np.float32)
    keep = x.copy()
    g = trace(chain, ("float32", x.shape))
    plan = executor.plan(g)
    allocating = [s.op.type for s in plan.steps if s.donor is None]
    assert allocating == ["Exp", "Abs"]  # 2 arrays instead of 7
    sqrt = next(s for s in plan.steps if s.op.type == "Sqrt")
    square = plan.steps[-2]  # x * x: into the buffer of sqrt(...), dead since the Add read it
    assert square.op.type == "Mul" and square.ins == (0, 0) and square.donor == sqrt.single
    (got,) = plan.run([x])
    np.testing.assert_allclose(got, np.exp(keep) * np.float32(2) + np.sqrt(np.abs(keep)) - keep * keep, rtol=1e-6)
    np.testing.assert_array_equal(x, keep)  # inputs are never written into


def test_donation_writes_into_the_operands_buffer_unless_another_kernel_reads_it():
    x = np.zeros(BIG, np.float32)
    g = trace(lambda x: rt.exp(x) * 2.0, ("float32", x.shape))
    exp_step, mul_step = executor.plan(g).steps
    assert mul_step.donor == exp_step.single

    def f(x):
        e = rt.exp(x)
        seen = rt.py_function(lambda v: v + 0, [e], "float32", shape=x.shape)  # not a ufunc reader
        return e * 2.0, seen

    g2 = trace(f, ("float32", x.shape))
    assert all(s.donor is None for s in executor.plan(g2).steps)
    a, b = executor.run_graph(g2, [x])
    np.testing.assert_array_equal(a, np.full(BIG, 2, np.float32))
    np.testing.assert_array_equal(b, np.ones(BIG, np.float32))


def test_large_values_are_freed_after_their_last_use_small_ones_are_not():
    g = trace(lambda x: rt.exp(rt.sin(rt.cos(x))), ("float32", (None,)))
    assert [len(s.frees) for s in executor.plan(g).steps] == [1, 1, 1]
    small = trace(lambda x: rt.exp(rt.sin(rt.cos(x))), ("float32", (3,)))
    assert [len(s.frees) for s in executor.plan(small).steps] == [0, 0, 0]


def test_outputs_are_never_freed():
    g = trace(lambda x: (rt.sin(x), rt.exp(rt.sin(x)) + 1.0), ("float32", (None,)))
    plan = executor.plan(g)
    freed = {s for step in plan.steps for s in step.frees}
    assert not freed & set(plan.output_slots)
    a, b = executor.run_graph(g, [np.ones(4, np.float32)])
    np.testing.assert_allclose(a, np.sin(np.ones(4, np.float32)))


def test_the_parallel_runner_shares_the_executors_plan():
    g = trace(chain, ("float32", (BIG,)))
    assert parallel.dataflow(g).plan is executor.plan(g)
    assert parallel.runner(g, parallel=False) == executor.plan(g).run


def test_a_step_writing_into_a_buffer_waits_for_its_other_readers():
    def f(x):
        t = rt.exp(x)
        return rt.sin(t), t * 2.0  # the Mul writes into t: only after the Sin has read it

    x = np.linspace(-1, 1, 1 << 18).astype(np.float32)
    g = trace(f, ("float32", x.shape))
    plan, flow = executor.plan(g), parallel.dataflow(g)
    types = [s.op.type for s in plan.steps]
    sin, mul = types.index("Sin"), types.index("Mul")
    assert plan.steps[mul].donor is not None
    assert mul in flow.succs[sin]
    expected = [np.sin(np.exp(x)), np.exp(x) * np.float32(2)]
    for _ in range(3):
        assert_same(expected, flow.run([x]))
        assert_same(expected, plan.run([x]))


def test_failures_name_the_op_its_printed_form_and_the_users_line():
    g = trace(lambda x, i: rt.gather(x, i), ("float32", (3,)), ("int32", ()))
    with pytest.raises(ExecutionError) as info:
        executor.run_graph(g, [np.zeros(3, np.float32), np.int32(7)])
    message = str(info.value)
    assert "GatherV2 op" in message and "test_rt_executor.py:" in message
    assert "= GatherV2(" in message or "GatherV2(" in message.splitlines()[1]


def test_wrong_argument_count_is_a_clear_type_error():
    g = trace(lambda x: x + 1.0, ("float32", ()))
    with pytest.raises(TypeError, match="takes 1 input value"):
        executor.run_graph(g, [])


def test_unused_stateful_ops_still_run(capsys):
    def f(x):
        rt.print("side effect")
        return x + 1.0

    g = trace(f, ("float32", ()))
    assert executor.run_graph(g, [np.float32(1)]) == [np.float32(2)]
    assert "side effect" in capsys.readouterr().out
