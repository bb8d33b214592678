"""The optimizer never makes a program fail, or warn, that would not (issue 16.6).

Each program runs four ways -- plain Python, ``ag.function`` (optimized, interpreted),
``optimize=False`` and ``jit_compile=True`` -- on values where an op in a loop body or a
branch would raise or warn if it ran, and on values where it runs.  The outcomes must
agree: the same values, the same failure (the graph modes: the same error type; Python:
a failure too), the same "did it warn".  Loop-invariant code motion must leave such ops
in the loop or hoist them under the loop's guard (``optimizer/loop_guard.py``), and
constant folding must leave alone what raises or warns when evaluated
(``optimizer/constant_folding.py``), without touching the warnings filters.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autograph as ag
from autograph import runtime as rt
from autograph.runtime import optimizer
from autograph.runtime.optimizer import graph_util


def outcome(fn, args):
    """``(value or the error type, warned?)`` of ``fn(*args)`` (NaN as the string "nan", so it compares)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(*args)
            value = np.asarray(result).tolist()
            value = "nan" if isinstance(value, float) and np.isnan(value) else value
        except Exception as e:  # noqa: BLE001 - compared across modes below
            value = type(e)
    return value, any(issubclass(w.category, RuntimeWarning) for w in caught)


def agree(f, args):
    """Runs ``f`` four ways; asserts the outcomes agree and returns the optimized graph mode's."""
    python_value, python_warned = outcome(f, args)
    graph = [outcome(ag.function(f, **options), args) for options in ({}, {"optimize": False}, {"jit_compile": True})]
    assert graph[0] == graph[1] == graph[2], (f.__name__, args, graph)
    value, warned = graph[0]
    assert warned == python_warned, (f.__name__, args, python_warned, graph)
    if isinstance(python_value, type):
        assert isinstance(value, type), (f.__name__, args, python_value, value)
    else:
        assert value == python_value, (f.__name__, args, python_value, value)
    return value


# -- the programs -----------------------------------------------------------------


def pow_in_loop(n, x, y):
    s = 0
    for i in range(n):
        s += x ** y
    return s


def floordiv_in_loop(n, x, d):
    s = 0
    for i in range(n):
        s += x // d + x % d
    return s


def exp_in_loop(n, x):
    s = 0.0
    for i in range(n):
        s += rt.exp(x)
    return s


def sqrt_log_in_loop(n, x):
    s = 0.0
    for i in range(n):
        s += rt.sqrt(x) + rt.log(x)
    return s


def gather_in_loop(n, v, k):
    s = 0.0
    for i in range(n):
        s += rt.gather(v, k)
    return s


def cast_in_loop(n, x):
    s = 0
    for i in range(n):
        s += rt.cast(x, "int32")
    return s


def nested_loops(n, m, x, y):
    s = 0
    for i in range(n):
        for j in range(m):
            s += x ** y
    return s


def in_a_branch(p, x, y):
    if p:
        s = x ** y
    else:
        s = x
    return s


def raising_op_first(n, v, i, x, y):
    s = 0.0
    while i < n:
        s += rt.gather(v, i)  # raises first (i out of range) ...
        s += rt.cast(x ** y, "float32")  # ... before the invariant power would
        i += 1
    return s


I32, F32 = np.int32, np.float32
V3 = np.array([1.0, 2.0, 3.0], np.float32)

CASES = [
    (pow_in_loop, [I32(0), I32(2), I32(-1)]),  # the issue's example: 0, as in Python
    (pow_in_loop, [I32(3), I32(2), I32(-1)]),  # the loop runs: Python's ValueError
    (pow_in_loop, [I32(3), I32(2), I32(3)]),
    (floordiv_in_loop, [I32(0), I32(7), I32(0)]),  # no warning: the loop does not run
    (floordiv_in_loop, [I32(2), I32(7), I32(0)]),  # divide by zero warns
    (floordiv_in_loop, [I32(2), I32(7), I32(2)]),
    (exp_in_loop, [I32(0), F32(1000)]),
    (exp_in_loop, [I32(2), F32(1000)]),  # overflow warns
    (exp_in_loop, [I32(2), F32(1)]),
    (sqrt_log_in_loop, [I32(0), F32(-1)]),
    (sqrt_log_in_loop, [I32(1), F32(-1)]),
    (sqrt_log_in_loop, [I32(1), F32(4)]),
    (gather_in_loop, [I32(0), V3, I32(99)]),
    (gather_in_loop, [I32(2), V3, I32(99)]),
    (gather_in_loop, [I32(2), V3, I32(1)]),
    (cast_in_loop, [I32(0), F32("nan")]),
    (cast_in_loop, [I32(2), F32("nan")]),
    (cast_in_loop, [I32(2), F32(2.5)]),
    (nested_loops, [I32(2), I32(0), I32(2), I32(-1)]),
    (nested_loops, [I32(0), I32(2), I32(2), I32(-1)]),
    (nested_loops, [I32(2), I32(2), I32(2), I32(2)]),
    (in_a_branch, [np.bool_(False), I32(2), I32(-1)]),
    (in_a_branch, [np.bool_(True), I32(2), I32(2)]),
]


@pytest.mark.parametrize("f, args", CASES, ids=lambda c: getattr(c, "__name__", None))
def test_the_optimizer_makes_no_program_fail_or_warn(f, args):
    agree(f, args)


def test_the_issue_example_is_zero_and_the_power_is_hoisted_under_the_guard():
    assert agree(pow_in_loop, [I32(0), I32(2), I32(-1)]) == 0
    cf = ag.function(pow_in_loop).get_concrete_function(I32(0), I32(2), I32(-1))
    graph = cf.execution_graph
    guards = [g for name, g in graph.library.items() if name.startswith("licm_guard")]
    assert [op.type for g in guards for op in g.operations if op.type == "Pow"] == ["Pow"]
    body = next(g for name, g in graph.library.items() if "body" in name)
    assert "Pow" not in [op.type for op in body.operations]


def test_an_op_that_raises_first_keeps_its_error():
    args = [I32(6), V3, I32(5), I32(2), I32(-1)]
    errors = [outcome(ag.function(raising_op_first, **o), args)[0] for o in ({}, {"optimize": False},
                                                                              {"jit_compile": True})]
    # the gather's IndexError (an ExecutionError of its kind), not Pow's ValueError
    assert errors[0] is errors[1] is errors[2] and issubclass(errors[0], ag.ExecutionError)
    assert issubclass(errors[0], IndexError) and not issubclass(errors[0], ValueError)
    assert outcome(raising_op_first, args)[0] is IndexError  # (Python: the gather's IndexError)
    assert agree(raising_op_first, [I32(2), V3, I32(0), I32(2), I32(2)]) == 3.0 + 8.0


def test_a_loop_capped_at_zero_iterations_hoists_nothing_that_may_fail():
    def f(x, y):
        return rt.while_loop(lambda i, s: i < 10, lambda i, s: (i + 1, s + x ** y), (0, 0), maximum_iterations=0)[1]

    for options in ({}, {"jit_compile": True}):
        assert rt.function(f, **options)(I32(2), I32(-1)) == 0


def test_a_guarded_division_folded_at_optimize_time_does_not_warn():
    def f(x):
        d = rt.constant(0.0, "float32")
        return x + rt.where(d != 0.0, rt.constant(1.0, "float32") / d, 0.0)

    for options in ({}, {"optimize": False}, {"jit_compile": True}):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # tracing and optimizing warn nothing
            cf = ag.function(f, **options).get_concrete_function(F32(1))
        value, warned = outcome(cf, [F32(1)])
        assert value == 1.0
        assert warned == (options == {"optimize": False})  # its x / d runs; optimized, the folded select drops it


def test_folding_never_touches_the_warnings_filters(monkeypatch):
    """``warnings.catch_warnings`` changes every thread's filters: folding must not use it."""

    def refuse(*args, **kwargs):
        raise AssertionError("the optimizer changed the process-wide warnings filters")

    def f(x):
        k = rt.constant(1.0, "float32") / rt.constant(0.0, "float32")  # folding it would warn
        big = rt.exp(rt.constant(1000.0, "float32"))
        return x + k + big + rt.cast(rt.constant(np.float64(1e300)), "float32")  # overflows

    graph = rt.function(f).get_concrete_function(F32(1)).graph
    monkeypatch.setattr(warnings, "catch_warnings", refuse)
    monkeypatch.setattr(warnings, "simplefilter", refuse)
    monkeypatch.setattr(warnings, "filterwarnings", refuse)
    optimized = optimizer.optimize(graph, check=True)
    assert [op.type for op in optimized.operations if op.type in ("RealDiv", "Exp", "Cast")] == [
        "RealDiv", "Exp", "Cast"]  # left for run time


def test_a_large_constant_is_not_built_at_optimize_time():
    def f(n):
        i = rt.constant(0)
        if n > 10:  # never taken in the test: its Fill must not run while optimizing
            i = rt.reduce_sum(rt.fill(rt.constant([1 << 14, 1 << 14]), rt.constant(1, "int8")))
        return i

    graph = ag.function(f).get_concrete_function(I32(0)).graph
    optimized = optimizer.optimize(graph, check=True)
    fills = [op for g in graph_util.graphs_postorder(optimized) for op in g.operations if op.type == "Fill"]
    assert len(fills) == 1


# -- hypothesis: random loop bodies, optimized against not ----------------------------

BINARY = {"pow": lambda a, b: a ** b, "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b,
          "div": lambda a, b: a / b, "mul": lambda a, b: a * b, "sub": lambda a, b: a - b}
UNARY = {"exp": rt.exp, "sqrt": rt.sqrt, "log": rt.log, "sin": rt.sin, "neg": lambda a: -a,
         "cast": lambda a: rt.cast(a, "int8"), "square": rt.square}
VALUES = {"int32": [0, 1, -1, 2, 2 ** 31 - 1], "float32": [0.0, -1.0, 2.5, 1e30, float("nan"), float("inf")]}


@st.composite
def loop_programs(draw):
    dtype = draw(st.sampled_from(sorted(VALUES)))
    binary = draw(st.sampled_from(sorted(BINARY)))
    unary = draw(st.sampled_from(sorted(UNARY)))
    x, y = (np.dtype(dtype).type(draw(st.sampled_from(VALUES[dtype]))) for _ in range(2))
    return dtype, binary, unary, x, y, np.int32(draw(st.integers(0, 2)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loop_programs())
def test_random_invariant_loop_bodies_optimized_or_not_agree(program):
    dtype, binary, unary, x, y, n = program

    def f(x, y, n):
        def body(i, s):
            t = UNARY[unary](BINARY[binary](x, y))
            return i + 1, s + rt.cast(t, "float64")

        return rt.while_loop(lambda i, s: i < n, body, (0, rt.constant(0.0, "float64")))[1]

    results = [outcome(rt.function(f, **o), (x, y, n)) for o in ({}, {"optimize": False}, {"jit_compile": True})]
    (first, warned), *others = results
    for value, other_warned in others:
        assert other_warned == warned, (program, results)
        assert value == first, (program, results)
    if n == 0:
        assert results[0] == (0.0, False)
