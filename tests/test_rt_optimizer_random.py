"""Random graphs: optimized, compiled and scheduled runs all equal the plain interpreter."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_rt_jit import trace

import autograph.runtime as rt
from autograph.runtime.backends.numpy import codegen as jit
from autograph.runtime.exec import interpreter as executor, memory, parallel
from autograph.runtime.optimizer import optimize

UNARY = [rt.negative, abs, rt.sin, rt.cos, rt.tanh, rt.square]
BINARY = [rt.add, rt.subtract, rt.multiply, rt.maximum, rt.minimum]
IDENTITIES = [
    lambda v: v * 1.0,
    lambda v: v + 0.0,
    lambda v: -(-v),
    lambda v: rt.cast(v, "float32"),
    lambda v: rt.identity(v),
]


def instruction(n_values):
    ref = st.integers(0, n_values - 1)
    return st.one_of(
        st.tuples(st.just("unary"), st.integers(0, len(UNARY) - 1), ref),
        st.tuples(st.just("binary"), st.integers(0, len(BINARY) - 1), ref, ref),
        st.tuples(st.just("const"), st.sampled_from([0.0, 1.0, 2.0, -0.5, 3.0])),
        st.tuples(st.just("identity"), st.integers(0, len(IDENTITIES) - 1), ref),
        st.tuples(st.just("cond"), ref, ref, ref, st.booleans()),
        st.tuples(st.just("loop"), ref, ref, st.booleans()),
    )


@st.composite
def programs(draw):
    prog = []
    for k in range(draw(st.integers(1, 10))):
        prog.append(draw(instruction(3 + k)))
    return prog


def build(prog, size=4):
    def f(x, y, n):
        values = [x, y, rt.constant(1.5, "float32")]
        for ins in prog:
            kind = ins[0]
            if kind == "unary":
                values.append(UNARY[ins[1]](values[ins[2]]))
            elif kind == "binary":
                values.append(BINARY[ins[1]](values[ins[2]], values[ins[3]]))
            elif kind == "const":
                values.append(rt.constant(ins[1], "float32"))
            elif kind == "identity":
                values.append(IDENTITIES[ins[1]](values[ins[2]]))
            elif kind == "cond":
                p, a, b, dup = values[ins[1]], values[ins[2]], values[ins[3]], ins[4]
                pred = rt.reduce_sum(p) > 0.0
                values.append(rt.cond(pred, lambda: a * 2.0 + (a * 2.0 if dup else 0.0), lambda: b - 1.0))
            else:
                inv, start, use_n = values[ins[1]], values[ins[2]], ins[3]
                limit = n if use_n else rt.constant(3)

                def body(i, s):
                    invariant = rt.cond(rt.reduce_sum(inv) > 0.0, lambda: rt.tanh(inv), lambda: inv * 0.5)
                    varying = rt.cond(i % 2 == 0, lambda: s * 0.5, lambda: s - invariant)
                    return i + 1, varying + rt.tanh(inv) * 0.25

                values.append(rt.while_loop(lambda i, s: i < limit, body, (0, start + 0.0 * inv))[1])
        return values[-1], values[len(values) // 2]

    return trace(f, ("float32", (size,)), ("float32", (size,)), ("int32", ()))


def same(expected, got):
    for a, b in zip(expected, got):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(np.broadcast_to(a, b.shape) if a.shape != b.shape else a, b)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.integers(0, 5))
def test_random_graphs(prog, n):
    g = build(prog)
    args = [np.array([0.5, -1.0, 2.0, 0.0], np.float32), np.array([1.0, -2.5, 0.25, 3.0], np.float32), np.int32(n)]
    with np.errstate(all="ignore"):
        expected = executor.run_graph(g, args)
        o = optimize(g, check=True)
        same(expected, executor.run_graph(o, args))
        same(expected, jit.compile_graph(o)[0](args))
        same(expected, jit.compile_graph(g)[0](args))
        same(expected, parallel.dataflow(o).run(args))


LARGE = memory.INPLACE_MIN_ELEMENTS


def without_donation(prog, args):
    """The interpreter's results with buffer donation turned off (a fresh graph, planned so)."""
    old = memory.INPLACE_MIN_ELEMENTS
    memory.INPLACE_MIN_ELEMENTS = float("inf")
    try:
        return executor.run_graph(build(prog, LARGE), args)
    finally:
        memory.INPLACE_MIN_ELEMENTS = old


def every_step_heavy(graph):
    """A ``Dataflow`` of ``graph`` that hands every step it can to the worker threads."""
    old = parallel.HEAVY_COST
    parallel.HEAVY_COST = 1
    try:
        return parallel.Dataflow(executor.plan(graph))
    finally:
        parallel.HEAVY_COST = old


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.integers(0, 3))
def test_random_graphs_on_large_arrays_donate_buffers_safely(prog, n):
    g = build(prog, LARGE)
    x = np.linspace(-2.0, 2.0, LARGE).astype(np.float32)
    args = [x, x[::-1].copy(), np.int32(n)]
    keep = [a.copy() for a in args[:2]]
    with np.errstate(all="ignore"):
        expected = without_donation(prog, args)
        same(expected, executor.run_graph(g, args))
        same(expected, parallel.dataflow(g).run(args))
        same(expected, every_step_heavy(g).run(args))
        o = optimize(g, check=True)
        same(expected, executor.run_graph(o, args))
        same(expected, parallel.dataflow(o).run(args))
        same(expected, jit.compile_graph(o)[0](args))
    for a, b in zip(args, keep):
        np.testing.assert_array_equal(a, b)
