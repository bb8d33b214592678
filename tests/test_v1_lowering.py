"""Control flow v1 lowering (``runtime/optimizer/lower_if.py``): small ``If``s become ops and ``Choose``.

A lowered ``If`` computes its untaken branch too, so every case here checks
that it surfaces nothing (no error, no warning: warnings are errors in these
tests) and returns what Python returns; what must not be lowered stays an
``If``.
"""

from __future__ import annotations

import os
import random
import sys
import warnings

import numpy as np
import pytest

import autograph as ag
import autograph.runtime as rt
from autograph.runtime.backends.numpy import codegen
from autograph.runtime.core import opdef
from autograph.runtime.core.graph import Graph
from autograph.runtime.errors import VerificationError
from autograph.runtime.exec import interpreter
from autograph.runtime.optimizer import graph_util, hazards, lower_if, optimize

sys.path.insert(0, os.path.dirname(__file__))
from fuzz_programs import ProgramWriter, may_raise, program_dtype  # noqa: E402
from test_fuzz_traced import load, run_program, signature  # noqa: E402

F0, B0 = ("float32", ()), ("bool", ())


def trace(fn, *specs):
    """A graph of ``fn`` over placeholders of ``specs`` ((dtype, shape) pairs)."""
    g = Graph("f")
    with g.as_default():
        args = [g.add_placeholder(np.dtype(d), s, name=f"x{i}") for i, (d, s) in enumerate(specs)]
        out = fn(*args)
        g.outputs = list(out) if isinstance(out, (tuple, list)) else [out]
    return g


def ifs(graph) -> int:
    """``If`` ops in ``graph`` and every sub-graph it calls."""
    return sum(op.type == "If" for g in graph_util.graphs_postorder(graph) for op in g.operations)


def run_quietly(graph, args):
    """The graph's outputs on ``args``, in the interpreter and compiled, every warning an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        interpreted = interpreter.run_graph(graph, list(args))
        compiled = codegen.compile_graph(graph)[0](list(args))
    for a, b in zip(interpreted, compiled):
        assert np.asarray(a).dtype == np.asarray(b).dtype and np.array_equal(a, b, equal_nan=True)
    return interpreted


def test_lowered_form_is_pinned():
    g = trace(lambda x, p: rt.cond(p, lambda: -x, lambda: x * 3.0), F0, B0)
    lowered = optimize(g, check=True)
    assert lowered.to_text(locations=False) == (
        "graph f(%x0:0 float32[], %x1:0 bool[]) {\n"
        "  %neg:0 float32[] = Neg(%x0:0)\n"  # Neg of floats never fails: it reads %x0 itself
        "  %const:0 float32[] = Const() {value=1.0}\n"  # Mul by 3 may overflow: untaken, it reads 1.0
        "  %choose:0 float32[] = Choose(%x1:0, %const:0, %x0:0)\n"
        "  %const_1:0 float32[] = Const() {value=3.0}\n"
        "  %mul:0 float32[] = Mul(%choose:0, %const_1:0)\n"
        "  %choose_1:0 float32[] = Choose(%x1:0, %neg:0, %mul:0)\n"
        "  return (%choose_1:0)\n"
        "}\n"
    )
    assert ifs(optimize(g, lower_ifs=False)) == 1
    big = np.float32(3e38)  # the else branch overflows: not taken, it stays quiet
    assert run_quietly(lowered, [big, np.True_]) == [-big]
    assert run_quietly(lowered, [np.float32(2.0), np.False_]) == [np.float32(6.0)]


def test_arithmetic_by_constants_that_cannot_overflow_needs_no_stand_in():
    g = trace(lambda x, p: rt.cond(p, lambda: x * 0.5 - 1.0, lambda: x / 4.0 + 2.0), F0, B0)
    lowered = optimize(g, check=True)
    assert ifs(lowered) == 0
    assert [op.type for op in lowered.operations if op.type not in ("Placeholder", "Const")] == [
        "Mul", "Sub", "RealDiv", "Add", "Choose"]
    big = np.float32(3.4e38)
    assert run_quietly(lowered, [big, np.True_]) == [big * np.float32(0.5) - np.float32(1.0)]
    assert run_quietly(lowered, [np.float32(np.inf), np.False_]) == [np.float32(np.inf)]


@pytest.mark.parametrize("op, constant, total", [
    ("Mul", 0.5, True), ("Mul", -1.0, True), ("Mul", 1.5, False), ("Mul", 0.0, False),  # inf * 0 is invalid
    ("Add", 1e30, True), ("Add", 1.1e31, False), ("Sub", -3.0, True),
    ("RealDiv", 2.0, True), ("RealDiv", 0.5, False), ("Add", np.inf, False),
])
def test_hazards_of_float_arithmetic_by_a_constant(op, constant, total):
    def f(x):
        c = rt.constant(np.float32(constant))
        return {"Mul": rt.multiply, "Add": rt.add, "Sub": rt.subtract, "RealDiv": rt.divide}[op](x, c)

    (found,) = [o for o in trace(f, ("float32", (3,))).operations if o.type == op]
    assert hazards.never_fails(found) is total
    if total:  # and indeed: on the extremes no warning
        with np.errstate(all="raise"):
            for x in (np.finfo(np.float32).max, -np.finfo(np.float32).max, np.inf, -np.inf, np.nan, 0.0):
                interpreter.run_graph(trace(f, ("float32", (3,))), [np.full(3, x, np.float32)])


# -- soundness: what the untaken branch would do surfaces nowhere ------------------------


def divide_unless_zero(x, d):
    if d != 0.0:
        y = x / d
    else:
        y = x
    return y


def read_if_in_range(v, i):
    if i < 3:
        y = v[i]
    else:
        y = v[0] * 2.0
    return y


def inverse_if_positive(k):
    if k > 0:
        y = k ** -1
    else:
        y = k
    return y


def sqrt_if_non_negative(x):
    if x >= 0.0:
        y = rt.sqrt(x)
    else:
        y = -x
    return y


def log_above_one(x):
    if x > 1.0:
        y = rt.log(x - 1.0)  # log(0) and log(-1) both warn: no stand-in works
    else:
        y = x
    return y


CASES = [
    (divide_unless_zero, [(np.float32(3.0), np.float32(0.0)), (np.float32(3.0), np.float32(2.0))], 0),
    (read_if_in_range, [(np.arange(3, dtype=np.float32), np.int32(5)), (np.arange(3, dtype=np.float32), np.int32(1))],
     1),  # an index out of range raises: never lowered
    (inverse_if_positive, [(np.int32(0),), (np.int32(-3),)], 1),  # an int ** -1 raises: never lowered
    (sqrt_if_non_negative, [(np.float32(-4.0),), (np.float32(9.0),)], 0),
    (log_above_one, [(np.float32(0.5),), (np.float32(3.0),)], 1),
]


@pytest.mark.parametrize("fn, calls, kept", CASES, ids=[c[0].__name__ for c in CASES])
def test_untaken_branches_surface_nothing_and_results_are_python_s(fn, calls, kept):
    traced = ag.function(fn)
    for args in calls:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            want = fn(*args)
            got = traced(*args)
        assert type(got) is type(want) and got == want, (args, got, want)
    graph = traced.get_concrete_function(*calls[0]).execution_graph
    assert ifs(graph) == kept


def test_the_taken_branch_warns_as_the_program_does():
    def scale(x):
        if x > 0.0:
            y = x * 1e30
        else:
            y = x
        return y

    traced = ag.function(scale)
    x = np.float32(1e10)
    with pytest.warns(RuntimeWarning, match="overflow"):
        want = scale(x)
    with pytest.warns(RuntimeWarning, match="overflow"):
        got = traced(x)
    assert got == want and ifs(traced.get_concrete_function(x).execution_graph) == 0


# -- what is never lowered ---------------------------------------------------------------


def test_stateful_array_predicate_loop_and_large_branches_stay_ifs():
    def stateful(x, p):
        return rt.cond(p, lambda: rt.py_function(lambda v: v, [x], "float32", shape=()), lambda: -x)

    def nested_loop(x, p):
        return rt.cond(p, lambda: rt.while_loop(lambda s: s < 10.0, lambda s: (s + 1.0,), (x,))[0], lambda: -x)

    def large(x, p):
        return rt.cond(p, lambda: -x, lambda: x * 3.0)

    def costly(x, p):
        return rt.cond(p, lambda: rt.exp(rt.sin(rt.cos(x))) * 3.0, lambda: -x)

    assert ifs(optimize(trace(stateful, F0, B0), check=True)) == 1
    assert ifs(optimize(trace(large, F0, ("bool", (1,))), check=True)) == 1  # an array predicate
    assert ifs(optimize(trace(nested_loop, F0, B0), check=True)) == 1
    assert ifs(optimize(trace(large, ("float32", (lower_if.MAX_ELEMENTS + 1,)), B0), check=True)) == 1
    assert ifs(optimize(trace(costly, ("float32", (4,)), B0), check=True)) == 1
    assert ifs(optimize(trace(costly, F0, B0), check=True)) == 0  # on scalars the same ops pay


def test_ifs_of_while_bodies_and_of_jit_compiled_functions_stay():
    def count_up(n, x):
        i = 0
        while i < n:
            if x > 1.0:
                x = x * 0.5
            else:
                x = x + 1.0
            i += 1
        return x

    def one_if(x):
        if x > 1.0:
            x = x * 0.5
        else:
            x = x + 1.0
        return x

    args = (np.int32(3), np.float32(5.0))
    assert ifs(ag.function(count_up).get_concrete_function(*args).execution_graph) == 1
    assert ag.function(count_up)(*args) == count_up(*args)
    assert ifs(ag.function(one_if).get_concrete_function(np.float32(5.0)).execution_graph) == 0
    jitted = ag.function(one_if, jit_compile=True)
    assert ifs(jitted.get_concrete_function(np.float32(5.0)).execution_graph) == 1
    assert jitted(np.float32(5.0)) == one_if(np.float32(5.0))


def test_graphs_the_parallel_runner_may_thread_keep_their_ifs():
    def f(a, b, x, p):
        return rt.exp(a), rt.exp(b), rt.cond(p, lambda: x * 0.5, lambda: -x)

    big, small = ("float32", (1 << 20,)), ("float32", (4,))
    assert ifs(optimize(trace(f, big, big, F0, B0), check=True)) == 1
    assert ifs(optimize(trace(f, small, small, F0, B0), check=True)) == 0


def test_results_keep_the_if_s_dtypes_shapes_and_weak_flags():
    def f(x, y, z, p):
        a = rt.cond(p, lambda: x, lambda: y * 0.5)  # float32[3] / float32[2]: merged to [None]
        b = rt.cond(p, lambda: 1.0, lambda: 2.0)  # weakly typed in both branches
        c = rt.cond(p, lambda: rt.cast(z, "int32"), lambda: rt.cast(-z, "int32"))  # a cast of NaN warns
        return a, b, c

    g = trace(f, ("float32", (3,)), ("float32", (2,)), F0, B0)
    lowered = optimize(g, check=True)
    assert ifs(g) == 3 and ifs(lowered) == 0
    assert [(t.dtype, t.shape, t.weak) for t in lowered.outputs] == [(t.dtype, t.shape, t.weak) for t in g.outputs]
    assert [(t.dtype, t.shape, t.weak) for t in g.outputs] == [
        (np.dtype("float32"), (None,), False), (np.dtype("float64"), (), True), (np.dtype("int32"), (), False)]
    for p in (True, False):
        args = [np.arange(3, dtype=np.float32), np.ones(2, np.float32), np.float32(-2.5), np.bool_(p)]
        want = interpreter.run_graph(g, args)
        got = run_quietly(lowered, args)
        for w, o in zip(want, got):
            assert np.asarray(w).dtype == np.asarray(o).dtype and np.array_equal(w, o)
    with pytest.warns(RuntimeWarning, match="invalid value"):  # the taken cast of NaN warns, as it did
        interpreter.run_graph(lowered, [np.arange(3, dtype=np.float32), np.ones(2, np.float32), np.float32("nan"),
                                        np.bool_(True)])


def test_nested_ifs_are_lowered_inside_out():
    def f(x, p, q):
        return rt.cond(p, lambda: rt.cond(q, lambda: x * 0.5, lambda: -x), lambda: x + 1.0)

    g = trace(f, F0, B0, B0)
    lowered = optimize(g, check=True)
    assert ifs(g) == 2 and ifs(lowered) == 0
    for p in (True, False):
        for q in (True, False):
            args = [np.float32(3.0), np.bool_(p), np.bool_(q)]
            assert run_quietly(lowered, args) == interpreter.run_graph(g, args)


def test_choose_definition_refuses_bad_inputs():
    g = Graph("g")
    with g.as_default():
        x = g.add_placeholder(np.dtype("float32"), (), name="x")
        n = g.add_placeholder(np.dtype("int32"), (), name="n")
        p = g.add_placeholder(np.dtype("bool"), (2,), name="p")
        q = g.add_placeholder(np.dtype("bool"), (), name="q")
    infer = opdef.REGISTRY["Choose"].infer
    with pytest.raises(ValueError, match=r"Choose: the predicate p:0 must be a bool scalar, not bool\[2\]"):
        infer([p, x, x], {})
    with pytest.raises(ValueError, match=r"Choose: the predicate n:0 must be a bool scalar, not int32\[\]"):
        infer([n, x, x], {})
    with pytest.raises(ValueError, match="Choose: x:0 and n:0 have dtypes float32 and int32"):
        infer([q, x, n], {})
    assert infer([q, x, x], {}) == [(np.dtype("float32"), ())]


# -- random programs: the same results as unoptimized, the verifier after the pass --------


def test_random_programs_equal_unoptimized_and_verify():
    modes = {"interpreter": {}, "unoptimized": {"optimize": False}}
    lowered_programs, invalid_traces = 0, []
    for seed in range(60):
        source = ProgramWriter(random.Random(1000 + seed).randint).program()
        result = run_program(source, modes=modes)
        assert result.outcome in ("ok", "refused"), f"{result.outcome}: {result.detail}\n{source}"
        if result.outcome == "refused":
            continue
        _, fn = load(source)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                graph = ag.function(fn, input_signature=signature(program_dtype(source))).get_concrete_function().graph
        except Exception as e:  # noqa: BLE001 - only the program's own exception, raised while tracing
            assert type(e).__name__ in may_raise(source), e
            continue
        try:  # the verifier after every pass needs a valid graph to start from
            graph.verify()
        except VerificationError as e:  # tracing's problem, not the optimizer's: listed below
            invalid_traces.append(str(e).splitlines()[0])
            continue
        lowered = optimize(graph, check=True)
        lowered_programs += ifs(lowered) < ifs(optimize(graph, lower_ifs=False))
    assert lowered_programs >= 10, (lowered_programs, invalid_traces)
    assert len(invalid_traces) <= 20, invalid_traces
    print(f"{lowered_programs} of 60 programs had Ifs lowered; traced graphs the verifier refused: {invalid_traces}")
