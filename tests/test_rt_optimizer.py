"""The graph optimizer: each pass on small graphs, verified, with results unchanged."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import autograph.runtime as rt
from autograph.runtime.core import opdef
from autograph.runtime.exec import interpreter as executor
from autograph.runtime.ops import apply
from autograph.runtime.core.graph import Graph
from autograph.runtime.optimizer import (
    PASSES,
    constant_folding,
    cse,
    graph_util,
    licm,
    optimize,
    prune,
    simplify,
)


def trace(fn, *specs, name="f"):
    """A graph of ``fn`` over placeholders of ``specs`` ((dtype, shape) pairs)."""
    g = Graph(name)
    with g.as_default():
        args = [g.add_placeholder(np.dtype(d), s, name=f"x{i}") for i, (d, s) in enumerate(specs)]
        out = fn(*args)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        g.outputs = [t if isinstance(t, rt.Tensor) else rt.constant(t) for t in outs]
    return g


def types(graph) -> list[str]:
    """Op types of ``graph`` (placeholders and constants left out)."""
    return [op.type for op in graph.operations if op.type not in ("Placeholder", "Const")]


def all_types(graph) -> list[str]:
    return [op.type for g in graph_util.graphs_postorder(graph) for op in g.operations
            if op.type not in ("Placeholder", "Const")]


def guarded_types(graph) -> list[str]:
    """Op types hoisted under a loop's guard (``licm_guard`` branches) in ``graph``'s library."""
    return [t for name, sub in sorted(graph.library.items()) if name.startswith("licm_guard") for t in types(sub)]


def run_pass(graph, run):
    """``graph`` copied, with one pass applied to every sub-graph, then verified."""
    g = graph_util.clone(graph)
    for sub in graph_util.graphs_postorder(g):
        run(sub)
    graph_util.collect_library(g)
    g.verify()
    return g


def same_results(a, b, args):
    for x, y in zip(executor.run_graph(a, args), executor.run_graph(b, args)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
        assert np.asarray(x).dtype == np.asarray(y).dtype


F3 = ("float32", (3,))
I0 = ("int32", ())
X3 = np.array([0.5, -1.5, 2.0], np.float32)


# -- the driver ---------------------------------------------------------------


def test_optimize_returns_a_copy_and_leaves_the_input_alone():
    g = trace(lambda x: x * 1.0 - 0.0, F3)
    before = g.to_text()
    o = optimize(g, check=True)
    assert o is not g
    assert g.to_text() == before
    assert types(o) == []
    same_results(g, o, [X3])


def test_report_lists_every_pass_with_counts():
    g = trace(lambda x: (x * 1.0, rt.sin(x) + rt.sin(x)), F3)
    o, report = optimize(g, report=True, check=True)
    names = [r.name for r in report.records]
    assert names[: len(PASSES)] == [name for name, _ in PASSES]
    assert report.records[0].before == 5  # Const, Mul, Sin, Sin, Add
    assert report.records[-1].after == graph_util.count_ops(o)
    text = report.to_text()
    assert "simplify" in text and "prune" in text and "total:" in text
    totals = report.totals()
    assert totals["cse"][0] >= totals["cse"][1]


def test_fixed_point_is_reached_and_stable():
    g = trace(lambda x: rt.negative(rt.negative(x * (2.0 * 3.0))) + 0.0, F3)
    o = optimize(g, check=True)
    again = optimize(o, check=True)
    assert again.to_text() == o.to_text()


# -- simplify -----------------------------------------------------------------


@pytest.mark.parametrize(
    "fn, expected",
    [
        (lambda x: x * 1.0, []),
        (lambda x: 1.0 * x, []),
        (lambda x: x + (-0.0), []),
        (lambda x: -0.0 + x, []),
        (lambda x: x - 0.0, []),
        (lambda x: x + 0.0, ["Add"]),  # -0.0 + 0.0 is 0.0: only -0.0 is the sum's identity
        (lambda x: 0.0 + x, ["Add"]),
        (lambda x: x - (-0.0), ["Sub"]),  # -0.0 - (-0.0) is 0.0
        (lambda x: x / 1.0, []),
        (lambda x: x ** 1.0, []),
        (lambda x: -(-x), []),
        (lambda x: rt.cast(x, "float32"), []),
        (lambda x: rt.reshape(x, (3,)), []),
        (lambda x: rt.identity(x), []),
        (lambda x: abs(abs(x)), ["Abs"]),
        (lambda x: x * 2.0, ["Mul"]),
        (lambda x: 0.0 - x, ["Sub"]),
        (lambda x: x - x, ["Sub"]),  # not for floats: inf - inf is nan
        (lambda x: rt.cast(x, "float64"), ["Cast"]),
        (lambda x: rt.reshape(x, (1, 3)), ["Reshape"]),
    ],
)
def test_simplify_rules(fn, expected):
    g = trace(fn, F3)
    s = run_pass(g, simplify.run)
    prune.run(s)
    assert types(s) == expected
    same_results(g, s, [X3])
    signed_zeros = np.array([-0.0, 0.0, -1.5], np.float32)
    for want, got in zip(executor.run_graph(g, [signed_zeros]), executor.run_graph(s, [signed_zeros])):
        assert np.array_equal(np.signbit(want), np.signbit(got)), (want, got)


def test_simplify_integer_zero():
    g = trace(lambda n: (n + 0, 0 + n, n - 0), ("int32", (2,)))
    s = run_pass(g, simplify.run)
    prune.run(s)
    assert types(s) == []


def test_simplify_keeps_broadcasting_and_promotion():
    g = trace(lambda x: (x + rt.zeros((2, 3), "float32"), x * np.float64(1.0)), F3)
    s = run_pass(g, simplify.run)
    assert "Add" in types(s)
    assert "Mul" in types(s)  # float32 * float64 is float64: not x itself
    same_results(g, s, [X3])


def test_simplify_integer_self_subtraction_and_logic():
    g = trace(lambda n, b: (n - n, rt.logical_not(rt.logical_not(b)), rt.logical_and(b, True)),
              ("int32", (2,)), ("bool", ()))
    s = run_pass(g, simplify.run)
    prune.run(s)
    assert types(s) == []
    same_results(g, s, [np.array([3, 4], np.int32), np.bool_(True)])


def test_simplify_select_with_constant_condition():
    g = trace(lambda x, y: rt.where(np.array([True, True, True]), x, y), F3, F3)
    s = run_pass(g, simplify.run)
    prune.run(s)
    assert types(s) == []
    same_results(g, s, [X3, X3 * 2])


# -- constant folding -----------------------------------------------------------


def test_fold_constant_subexpression():
    g = trace(lambda x: x + rt.sqrt(rt.constant(4.0, "float32")) * 3.0, F3)
    s = run_pass(g, constant_folding.run)
    prune.run(s)
    assert types(s) == ["Add"]
    assert "6.0" in s.to_text()
    same_results(g, s, [X3])


def test_fold_static_shape():
    g = trace(lambda x: rt.shape(x) * 2, ("float32", (2, 5)))
    o = optimize(g, check=True)
    assert types(o) == []
    same_results(g, o, [np.zeros((2, 5), np.float32)])


def test_fold_does_not_fold_failing_or_warning_ops():
    g = trace(lambda x: (rt.sqrt(rt.constant(-1.0)), rt.constant(1.0) / 0.0), F3)
    s = run_pass(g, constant_folding.run)
    assert "Sqrt" in types(s) and "RealDiv" in types(s)


def test_fold_leaves_large_results_alone():
    g = trace(lambda x: rt.zeros((300, 300), "float32") + 1.0, F3)
    s = run_pass(g, constant_folding.run)
    assert "Add" in types(s)


def test_fold_if_with_constant_predicate_inlines_the_taken_branch():
    def f(x):
        return rt.cond(rt.constant(False), lambda: rt.sin(x), lambda: rt.cos(x) * 2.0)

    g = trace(f, F3)
    o = optimize(g, check=True)
    assert "If" not in o.to_text() and "Sin" not in o.to_text()
    assert types(o) == ["Cos", "Mul"]
    assert o.library == {}
    same_results(g, o, [X3])


def test_fold_if_nested_in_while_is_inlined_inside_the_body():
    def f(x, n):
        def body(i, s):
            return i + 1, rt.cond(rt.constant(True), lambda: s + x, lambda: s - x)

        return rt.while_loop(lambda i, s: i < n, body, (0, x))

    g = trace(f, F3, I0)
    o = optimize(g, check=True)
    assert all_types(o).count("If") == 0
    same_results(g, o, [X3, np.int32(3)])


def test_constant_arguments_are_pushed_into_branches_and_folded():
    def f(x, p):
        c = rt.constant(3.0, "float32")
        return rt.cond(p, lambda: x * (c * c), lambda: x - c * 2.0)

    g = trace(f, F3, ("bool", ()))
    o = optimize(g, check=True)
    text = o.to_text()
    assert "9.0" in text and "6.0" in text
    assert all_types(o).count("Mul") == 1
    for p in (True, False):
        same_results(g, o, [X3, np.bool_(p)])


def test_while_with_constant_false_condition_disappears():
    def f(x):
        return rt.while_loop(lambda i, s: i > 10, lambda i, s: (i + 1, s * 2.0), (rt.constant(0), x))

    g = trace(f, F3)
    o = optimize(g, check=True)
    assert "While" not in o.to_text()
    assert o.library == {}
    same_results(g, o, [X3])


def test_while_with_constant_initial_values_but_true_condition_stays():
    g = trace(lambda x: rt.while_loop(lambda i: i < 4, lambda i: (i + 1,), (rt.constant(0),))[0] + x[0], F3)
    o = optimize(g, check=True)
    assert "While" in o.to_text()
    same_results(g, o, [X3])


# -- CSE ----------------------------------------------------------------------


def test_cse_merges_duplicates_and_equal_constants():
    g = trace(lambda x, y: (x * y + x * y, rt.sin(x * y) + 2.0, x + 2.0), F3, F3)
    s = run_pass(g, cse.run)
    prune.run(s)
    assert types(s).count("Mul") == 1
    assert sum(1 for op in s.operations if op.type == "Const") == 1
    same_results(g, s, [X3, X3 + 1])


def test_cse_distinguishes_attributes_and_dtypes():
    g = trace(lambda x: (rt.reduce_sum(x, axis=0), rt.reduce_sum(x), rt.cast(x, "int32"), rt.cast(x, "int64")),
              ("float32", (2, 3)))
    s = run_pass(g, cse.run)
    assert types(s).count("Sum") == 2 and types(s).count("Cast") == 2


def test_cse_never_merges_stateful_ops():
    def f(x):
        a = rt.random.uniform((3,), seed=1)
        b = rt.random.uniform((3,), seed=1)
        rt.print(x)
        rt.print(x)
        return a, b

    g = trace(f, F3)
    o = optimize(g, check=True)
    assert types(o).count("RandomUniform") == 2
    assert types(o).count("Print") == 2


# -- pruning ------------------------------------------------------------------


def test_prune_drops_unused_ops_only():
    def f(x):
        rt.exp(x) * 2.0  # dead on purpose
        return rt.sin(x)

    g = trace(f, F3)
    s = run_pass(g, prune.run)
    assert types(s) == ["Sin"]
    same_results(g, s, [X3])


def test_prune_keeps_stateful_ops_and_what_they_depend_on():
    def f(x):
        rt.print(rt.exp(x) + 1.0)
        return x * 2.0

    g = trace(f, F3)
    o = optimize(g, check=True)
    assert types(o) == ["Exp", "Add", "Print", "Mul"]


def test_prune_drops_unused_branch_and_loop_arguments():
    def f(x, y, n):
        a = rt.cond(n > 0, lambda: x + y, lambda: x - 1.0)
        b = rt.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + x), (0, y))[1]
        return a, b

    g = trace(f, F3, F3, I0)
    o = optimize(g, check=True, lower_ifs=False)  # (lowered, the If would be gone: test_v1_lowering.py)
    (if_op,) = [op for op in o.operations if op.type == "If"]
    (while_op,) = [op for op in o.operations if op.type == "While"]
    assert len(if_op.inputs) == 3  # pred, x, y
    assert len(while_op.inputs) == 4  # i, s, n, x
    same_results(g, o, [X3, X3 * 3, np.int32(2)])


def test_stateless_if_is_pruned_when_unused_and_stateful_if_is_kept():
    def f(x, p):
        rt.cond(p, lambda: rt.sin(x), lambda: rt.cos(x))
        rt.cond(p, lambda: rt.print(x), lambda: None)
        return x + 1.0

    g = trace(f, F3, ("bool", ()))
    o = optimize(g, check=True)
    assert types(o).count("If") == 1
    assert "Print" in all_types(o)


# -- loop-invariant code motion ----------------------------------------------------


def test_licm_hoists_invariant_computation_out_of_the_body():
    def f(x, n):
        def body(i, s):
            return i + 1, s + rt.exp(x * 2.0) * rt.sin(x)

        return rt.while_loop(lambda i, s: i < n, body, (0, x))

    g = trace(f, F3, I0)
    o = optimize(g, check=True)
    body = next(sub for name, sub in o.library.items() if "body" in name)
    assert types(body) == ["Add", "Add"]
    # exp may overflow (a warning): it runs before the loop only if the loop runs
    assert types(o) == ["Less", "If", "While"] and {"Exp", "Sin", "Mul"} <= set(guarded_types(o))
    for n in (0, 1, 4):
        same_results(g, o, [X3, np.int32(n)])


def test_licm_pass_alone_moves_ops_and_adds_captures():
    def f(x, n):
        return rt.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + rt.exp(x)), (0, x))

    g = trace(f, F3, I0)
    s = run_pass(g, licm.run)
    (while_op,) = [op for op in s.operations if op.type == "While"]
    assert types(s) == ["Less", "If", "While"] and guarded_types(s) == ["Exp"]
    assert while_op.inputs[-1].op.type == "If"
    body = s.library[while_op.attrs["body"]]
    assert body.captures[-1][0] is while_op.inputs[-1]
    same_results(g, s, [X3, np.int32(2)])


def test_licm_hoists_from_nested_loops_to_the_outermost_level():
    def f(x, n):
        def inner(j, t):
            return j + 1, t + rt.tanh(x)

        def outer(i, s):
            return i + 1, rt.while_loop(lambda j, t: j < n, inner, (0, s))[1]

        return rt.while_loop(lambda i, s: i < n, outer, (0, x))

    g = trace(f, F3, I0)
    o = optimize(g, check=True)
    assert "Tanh" in types(o)
    for n in (0, 2, 3):
        same_results(g, o, [X3, np.int32(n)])


def test_licm_keeps_ops_that_may_fail_and_stateful_ops():
    def f(x, k, n):
        def body(i, s):
            rt.print(i)
            return i + 1, s + rt.gather(x, k)

        return rt.while_loop(lambda i, s: i < n, body, (0, rt.constant(0.0, "float32")))

    g = trace(f, F3, I0, I0)
    o = optimize(g, check=True)
    body = next(sub for name, sub in o.library.items() if "body" in name)
    assert "GatherV2" in types(body) and "Print" in types(body)
    # the loop does not run: the out-of-range gather must not be evaluated
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        same_results(g, o, [X3, np.int32(99), np.int32(0)])


def test_licm_keeps_an_invariant_list_append_that_may_fail():
    from autograph.runtime.ops.array import list_append

    def f(x, n):
        rows = rt.reshape(x, (1, 3))

        def body(i, s):
            grown = list_append(rows, rt.reduce_sum(x))  # invariant, and of another rank: fails when run
            return i + 1, s + rt.reduce_sum(grown)

        return rt.while_loop(lambda i, s: i < n, body, (0, rt.constant(0.0, "float32")))

    g = trace(f, F3, I0)
    o = optimize(g, check=True)
    body = next(sub for name, sub in o.library.items() if "body" in name)
    assert "ListAppend" in types(body)
    same_results(g, o, [X3, np.int32(0)])  # the loop does not run: nothing may fail


def test_licm_loop_variable_passed_through_is_invariant():
    def f(x, n):
        return rt.while_loop(lambda i, w, s: i < n, lambda i, w, s: (i + 1, w, s + rt.exp(w)), (0, x, x))

    g = trace(f, F3, I0)
    o = optimize(g, check=True, lower_ifs=False)  # (the guard's If would be lowered)
    assert guarded_types(o) == ["Exp"]
    same_results(g, o, [X3, np.int32(3)])


# -- side effects keep their order ------------------------------------------------


def _printed(graph, args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        values = executor.run_graph(graph, args)
    return buf.getvalue(), values


def test_stateful_order_is_pinned():
    v = rt.Variable(np.float32(1.0))

    def f(x, n):
        rt.print("start", x)
        v.assign(v.read_value() * 2.0 + 0.0)
        rt.cond(n > 1, lambda: rt.print("then", n), lambda: rt.print("else", n))

        def body(i, s):
            rt.print("iteration", i)
            v.assign_add(np.float32(1.0))
            return i + 1, s + v.read_value()

        i, s = rt.while_loop(lambda i, s: i < n, body, (0, x * 1.0))
        rt.print("end", s, v.read_value())
        return s

    g = trace(f, ("float32", ()), I0)
    o = optimize(g, check=True)
    v.assign(np.float32(1.0))
    text_a, values_a = _printed(g, [np.float32(0.5), np.int32(3)])
    state_a = v.numpy()
    v.assign(np.float32(1.0))
    text_b, values_b = _printed(o, [np.float32(0.5), np.int32(3)])
    assert text_a == text_b
    assert text_a.index("start") < text_a.index("then") < text_a.index("iteration") < text_a.index("end")
    assert v.numpy() == state_a
    np.testing.assert_array_equal(values_a[0], values_b[0])


def test_inlined_branch_keeps_its_side_effects_in_order():
    def f(x):
        rt.print("before")
        rt.cond(rt.constant(True), lambda: rt.print("inside", x), lambda: None)
        rt.print("after")
        return x

    g = trace(f, F3)
    o = optimize(g, check=True)
    assert "If" not in o.to_text()
    assert _printed(o, [X3])[0] == _printed(g, [X3])[0]
    assert _printed(o, [X3])[0].splitlines()[0] == "before"


# -- the acceptance graph ------------------------------------------------------------


def test_acceptance_graph():
    """Duplicated subexpression, constant subexpression, dead branch and a
    loop-invariant computation: all gone from the optimized text."""

    def f(x, n):
        dup = rt.exp(x) * 2.0 + rt.exp(x) * 2.0  # duplicated subexpression
        k = rt.sqrt(rt.constant(16.0, "float32")) * 10.0  # constant subexpression: 40
        dead = rt.cond(rt.constant(False), lambda: rt.tanh(x), lambda: x)  # dead branch

        def body(i, s):
            return i + 1, s + rt.sin(x) * k  # sin(x) * k is loop-invariant

        _, total = rt.while_loop(lambda i, s: i < n, body, (0, dup))
        return total + dead

    g = trace(f, F3, I0)
    o = optimize(g, check=True)
    text = o.to_text()
    assert text.count("Exp(") == 1
    assert "Sqrt" not in text and "40.0" in text
    assert "Tanh" not in text and text.count("If(") == 1 and guarded_types(o) == ["Sin", "Mul"]  # the loop's guard
    body = next(sub for name, sub in o.library.items() if "body" in name)
    assert "Sin" not in types(body) and "Mul" not in types(body)
    for n in (0, 1, 5):
        same_results(g, o, [X3, np.int32(n)])


def test_graphs_loaded_from_a_graph_def_optimize_too():
    def f(x, n):
        k = rt.constant(2.0, "float32") * 3.0
        return rt.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + rt.sin(x) * k), (0, x))[1]

    g = trace(f, F3, I0)
    loaded = Graph.from_graph_def(g.as_graph_def())
    o = optimize(loaded, check=True)
    assert "6.0" in o.to_text()
    for n in (0, 3):
        same_results(g, o, [X3, np.int32(n)])


def _acceptance_program(x, n):
    dup = rt.exp(x) * 2.0 + rt.exp(x) * 2.0
    k = rt.sqrt(rt.constant(16.0, "float32")) * 10.0
    if rt.constant(False):
        dead = rt.tanh(x)
    else:
        dead = x
    i = 0
    total = dup
    while i < n:
        total = total + rt.sin(x) * k
        i += 1
    return total + dead


def test_acceptance_through_ag_function():
    import autograph as ag

    x = np.array([0.5, -1.0, 2.0], np.float32)
    optimized = ag.function(_acceptance_program)
    plain = ag.function(_acceptance_program, optimize=False)
    cf = optimized.get_concrete_function(x, np.int32(3))
    text = cf.execution_graph.to_text()
    assert text.count("Exp(") == 1 and "Sqrt" not in text and "Tanh" not in text
    assert text.count("If(") == 1 and guarded_types(cf.execution_graph) == ["Sin", "Mul"]  # the loop's guard
    body = next(sub for name, sub in cf.execution_graph.library.items() if "body" in name)
    assert "Sin" not in types(body)
    assert "Tanh" in cf.graph.to_text()  # the traced graph is kept as it was
    for n in (0, 1, 4):
        np.testing.assert_array_equal(optimized(x, np.int32(n)), plain(x, np.int32(n)))


def test_licm_hoists_a_stateless_invariant_if():
    def f(x, p, n):
        def body(i, s):
            c = rt.cond(p, lambda: rt.exp(x) * 2.0, lambda: rt.cos(x))
            return i + 1, s + c

        return rt.while_loop(lambda i, s: i < n, body, (0, x))[1]

    g = trace(f, F3, ("bool", ()), I0)
    o = optimize(g, check=True)
    body = next(sub for name, sub in o.library.items() if "body" in name)
    assert types(body) == ["Add", "Add"]
    assert "If" in types(o)
    for p in (True, False):
        for n in (0, 3):
            same_results(g, o, [X3, np.bool_(p), np.int32(n)])


def test_licm_keeps_an_if_with_a_loop_or_side_effect_inside():
    def f(x, p, n):
        def body(i, s):
            c = rt.cond(p, lambda: rt.while_loop(lambda j, t: j < n, lambda j, t: (j + 1, t * 2.0), (0, x))[1],
                        lambda: x)
            rt.cond(p, lambda: rt.print("iteration"), lambda: None)
            return i + 1, s + c

        return rt.while_loop(lambda i, s: i < n, body, (0, x))[1]

    g = trace(f, F3, ("bool", ()), I0)
    o = optimize(g, check=True)
    body = next(sub for name, sub in o.library.items() if name.startswith("while_body") and
                any(op.type == "If" for op in sub.operations))
    assert types(body).count("If") == 2
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        same_results(g, o, [X3, np.bool_(True), np.int32(2)])


def test_while_whose_condition_has_side_effects_is_kept():
    def f(x):
        def cond(i):
            rt.print("checking")
            return i > 10

        return rt.while_loop(cond, lambda i: (i + 1,), (rt.constant(0),))[0] + 1

    g = trace(f, F3)
    o = optimize(g, check=True)
    assert "While" in o.to_text()
    assert _printed(o, [X3])[0] == "checking\n"


def test_optimized_graphs_keep_weak_typing():
    # (2.0 * 3.0) folds to a weak constant; `+ y` with a weak float64 y stays weak.
    def f(y):
        return apply.convert_to_tensor(2.0) * 3.0 + y

    g = Graph("f")
    with g.as_default():
        y = g.add_placeholder(np.dtype("float64"), ())
        y.weak = True
        g.outputs = [f(y)]
    assert g.outputs[0].weak
    optimized = optimize(g, check=True)
    assert optimized.outputs[0].weak
    assert "weak float64[] = Const() {value=6.0}" in optimized.to_text()
    same_results(g, optimized, [np.float64(1.5)])


def test_a_round_that_only_drops_dead_root_ops_is_the_last():
    def f(x):
        rt.exp(x)  # dead: nothing uses it
        return rt.sin(x)

    g = trace(f, F3)
    o, report = optimize(g, report=True, check=True)
    assert {r.round for r in report.records} == {1}
    assert types(o) == ["Sin"]
    same_results(g, o, [X3])


def test_a_round_with_other_changes_is_followed_by_another():
    g = trace(lambda x: rt.sin(x * 1.0), F3)  # simplify rewrites x * 1.0
    o, report = optimize(g, report=True, check=True)
    assert max(r.round for r in report.records) == 2
    assert types(o) == ["Sin"]
