"""Weak typing (NEP 50): tensors that stand for Python numbers take their strongly typed partner's dtype.

A Python number converted to a tensor is a weakly typed ``Const``; ops that
Python spells on numbers keep weakness; ``If``/``While`` outputs are weak
where every path keeps the value a Python number.  Every test pins the
dtypes, either through the printed graph (``weak float64[]``) or through the
values the graph computes, against what plain Python/numpy gives.
"""

import json
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograph import runtime as rt
from autograph.runtime import operators as cf
from autograph.runtime.operators import tensor_builtins
from autograph.runtime.tracing import functional_api as cfo
from autograph.runtime import operators, ops
from autograph.runtime.core import opdef
from autograph.runtime.exec import interpreter as executor
from autograph.runtime.ops import apply
from autograph.runtime.errors import VerificationError
from autograph.runtime.core.graph import Graph
from rt_control_util import traced

F32, I32, I64 = "float32", "int32", "int64"


def _lines(graph) -> list[str]:
    return graph.to_text(locations=False).splitlines()


def _build(fn, *specs):
    """A graph of ``fn`` on placeholders of ``specs``, outputs = the tensors ``fn`` returns."""
    graph = Graph("main")
    with graph.as_default():
        inputs = [graph.add_placeholder(np.dtype(d), s, name=f"arg{i}") for i, (d, s) in enumerate(specs)]
        result = fn(*inputs)
        graph.outputs = list(result) if isinstance(result, tuple) else [result]
    return graph


def _weak(value):
    """A weakly typed scalar tensor holding the Python number ``value`` (as an ``If`` would merge it)."""
    return apply.convert_to_tensor(value)


# -- conversion and the op rules ---------------------------------------------------


def test_python_numbers_become_weak_consts_and_numpy_values_strong():
    graph = _build(lambda: (_weak(1.5), _weak(2), _weak(True), apply.convert_to_tensor(np.float64(1.5)),
                            apply.convert_to_tensor(1.5, np.dtype("float32")), ops.constant(1.5)))
    assert [t.weak for t in graph.outputs] == [True, True, True, False, False, False]
    assert _lines(graph)[1:4] == [
        "  %const:0 weak float64[] = Const() {value=1.5}",
        "  %const_1:0 weak int64[] = Const() {value=2}",
        "  %const_2:0 weak bool[] = Const() {value=True}",
    ]


def test_weak_tensor_next_to_strong_one_is_cast_to_its_dtype():
    graph = _build(lambda x: _weak(2.0) * x, (F32, ()))
    assert _lines(graph) == [
        "graph main(%arg0:0 float32[]) {",
        "  %const:0 weak float64[] = Const() {value=2.0}",
        "  %cast:0 float32[] = Cast(%const:0) {dtype=float32}",
        "  %mul:0 float32[] = Mul(%cast:0, %arg0:0)",
        "  return (%mul:0)",
        "}",
    ]
    assert executor.run_graph(graph, [np.float32(3)])[0].dtype == np.float32


def test_weak_int_next_to_strong_int32_and_weak_float_next_to_int32_follow_nep50():
    graph = _build(lambda n: (_weak(3) + n, _weak(0.5) * n, n / _weak(2)), (I32, ()))
    assert [t.dtype for t in graph.outputs] == [np.int32, np.float64, np.float64]
    assert not any(t.weak for t in graph.outputs)
    values = executor.run_graph(graph, [np.int32(5)])
    expected = [3 + np.int32(5), 0.5 * np.int32(5), np.int32(5) / 2]
    assert [v.dtype for v in values] == [e.dtype for e in expected]
    assert values == expected


def test_weak_with_weak_stays_weak_and_numbers_take_the_weak_tensors_dtype():
    def fn(n):
        counter = ops.cast(n, "int32", weak=True)  # a weak int32, as int(n) of an int32 n gives
        return counter + 1, _weak(1.5) * _weak(2), -_weak(2.5), abs(_weak(-3)), _weak(1) < _weak(2.0)

    graph = _build(fn, (I32, ()))
    assert [(t.weak, t.dtype.name) for t in graph.outputs] == [
        (True, "int32"), (True, "float64"), (True, "float64"), (True, "int64"), (True, "bool"),
    ]
    assert "  %const:0 weak int32[] = Const() {value=1}" in _lines(graph)


def test_rt_functions_that_python_does_not_spell_give_strong_results():
    # eagerly rt.sqrt(2.0) is np.float64 (strong): the graph agrees, so rt.sqrt(w) * x is float64
    graph = _build(lambda x: (ops.sqrt(_weak(2.0)), ops.maximum(_weak(1), _weak(2)), ops.sqrt(_weak(2.0)) * x),
                   (F32, ()))
    assert [(t.weak, t.dtype.name) for t in graph.outputs] == [(False, "float64"), (False, "int64"),
                                                                (False, "float64")]
    eager = rt.sqrt(2.0) * np.float32(3)
    assert executor.run_graph(graph, [np.float32(3)])[2].dtype == eager.dtype == np.float64


def test_cast_is_strong_unless_asked_weak():
    graph = _build(lambda x: (ops.cast(_weak(2), "float32"), ops.cast(x, "float64", weak=True)), (F32, ()))
    assert _lines(graph)[2:5] == [
        "  %cast:0 float32[] = Cast(%const:0) {dtype=float32}",
        "  %cast_1:0 weak float64[] = Cast(%arg0:0) {dtype=float64}",
        "  return (%cast:0, %cast_1:0)",
    ]


def test_eager_ops_are_unchanged_numpy_values():
    assert rt.multiply(2.0, np.float32(3)).dtype == np.float32
    assert rt.add(1, np.int32(2)).dtype == np.int32
    assert rt.add(1.5, 2) == 3.5 and isinstance(rt.add(1.5, 2), np.float64)
    assert rt.cast(np.float32(2), "float64", weak=True).dtype == np.float64


NEP50_OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "truediv": lambda a, b: a / b,
    "floordiv": lambda a, b: a // b,
    "mod": lambda a, b: a % b,
    "pow": lambda a, b: a ** b,
    "less": lambda a, b: a < b,
    "equal": lambda a, b: a == b,
}


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    op=st.sampled_from(sorted(NEP50_OPS)),
    dtype=st.sampled_from(["int8", "uint8", "int32", "int64", "float16", "float32", "float64"]),
    weak_kind=st.sampled_from(["int", "float"]),
    weak_first=st.booleans(),
    a=st.integers(1, 3),
    b=st.integers(1, 3),
    x=st.integers(1, 4),
)
def test_if_merged_python_number_combines_with_a_tensor_like_the_number(op, dtype, weak_kind, weak_first, a, b, x):
    """``y = a if p else b`` then ``y <op> x``: the graph's dtype and value are numpy's for the Python number."""
    kind = int if weak_kind == "int" else (lambda v: v / 2)
    first, second = kind(a), kind(b)
    fn = NEP50_OPS[op]

    def traced_fn(p, x_t):
        y = cfo.cond(p, lambda: first, lambda: second)
        return fn(y, x_t) if weak_first else fn(x_t, y)

    graph = _build(traced_fn, ("bool", ()), (dtype, ()))
    graph.verify()
    x_value = np.asarray(x, dtype)[()]
    for p, y in ((True, first), (False, second)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = fn(y, x_value) if weak_first else fn(x_value, y)
            (got,) = executor.run_graph(graph, [np.bool_(p), x_value])
        assert np.asarray(got).dtype == np.asarray(expected).dtype
        np.testing.assert_array_equal(got, expected)


# -- If ---------------------------------------------------------------------------


def test_if_of_python_floats_is_weak_so_it_keeps_a_float32_partner():
    def fn(x):
        y = cfo.cond(x > 0, lambda: 1.0, lambda: 2.0)
        return y, y * x

    f = traced(fn, (F32, ()))
    text = _lines(f.graph)
    assert "  %if:0 weak float64[] = If(%greater:0) {else_branch=if_false, then_branch=if_true}" in text
    assert "      %const:0 weak float64[] = Const() {value=1.0}" in text
    y, product = f(np.float32(-3))
    assert y.dtype == np.float64 and product.dtype == np.float32 and product == -6.0


def test_if_merging_weak_and_strong_gives_the_strong_dtype():
    def fn(x):
        weak = cfo.cond(x > 0, lambda: 1, lambda: 2)
        return cfo.cond(x > 1, lambda: x, lambda: weak), cfo.cond(x > 2, lambda: weak, lambda: weak + 0.5)

    f = traced(fn, (F32, ()))
    (strong, both_weak) = f.graph.outputs
    assert (strong.dtype.name, strong.weak) == ("float32", False)
    assert (both_weak.dtype.name, both_weak.weak) == ("float64", True)
    assert f(np.float32(0)) == (np.float32(2), 2.5)


def test_if_stmt_output_weak_only_when_weak_in_both_branches():
    def fn(x):
        state = {"y": 0.0, "z": 0.0}

        def body():
            state.update(y=1.0, z=x)

        def orelse():
            state.update(y=2.0, z=3.0)

        cf.if_stmt(x > 0, body, orelse, lambda: (state["y"], state["z"]),
                   lambda v: state.update(zip(("y", "z"), v)), ("y", "z"), 2)
        return state["y"], state["z"]

    f = traced(fn, (F32, ()))
    assert [(t.weak, t.dtype.name) for t in f.graph.outputs] == [(True, "float64"), (False, "float32")]


# -- While and for -----------------------------------------------------------------


def test_while_weak_variable_the_body_makes_float32_becomes_float32():
    def fn(x):
        return cfo.while_loop(lambda t: t < 5, lambda t: t + x, [0.0])

    f = traced(fn, (F32, ()))
    (out,) = f.graph.outputs
    assert (out.dtype.name, out.weak) == ("float32", False)
    assert "  %const:0 float32[] = Const() {value=0.0}" in _lines(f.graph)
    assert f(np.float32(2)) == [6.0] and f(np.float32(2))[0].dtype == np.float32


def test_while_python_counter_stays_weak_so_division_keeps_float32():
    def fn(x):
        count, total = cfo.while_loop(lambda n, s: s < 10, lambda n, s: (n + 1, s + x), (0, 0.0))
        return count, total / count

    f = traced(fn, (F32, ()))
    count, mean = f.graph.outputs
    assert (count.dtype.name, count.weak) == ("int64", True)
    assert (mean.dtype.name, mean.weak) == ("float32", False)
    assert f(np.float32(4)) == (3, np.float32(4))


def test_while_body_placeholders_and_nested_captures_carry_weakness():
    def fn(x, n):
        def body(i, s):
            s = cfo.cond(i > 1, lambda: s + i * x, lambda: s)
            return i + 1, s

        return cfo.while_loop(lambda i, s: i < n, body, (0, ops.zeros((), "float32")))

    f = traced(fn, (F32, ()), (I32, ()))
    text = _lines(f.graph)
    header = next(line for line in text if line.strip().startswith("body while_body("))
    assert "%loop_var:0 weak int32[]" in header and "%loop_var_1:0 float32[]" in header
    then_header = next(line for line in text if line.strip().startswith("then_branch if_true("))
    assert "weak int32[] <- %loop_var:0" in then_header
    assert [t.dtype.name for t in f.graph.outputs] == ["int32", "float32"]
    assert f(np.float32(1.5), np.int32(4)) == (4, np.float32(7.5))


def test_while_counter_bounded_by_an_int32_tensor_is_int32_after_one_body_trace():
    bodies = []

    def fn(n):
        def body(i):
            bodies.append(i.dtype.name)  # a Python side effect: runs once per trace of the body
            return (i + 1,)

        return cfo.while_loop(lambda i: i < n, body, (0,))

    f = traced(fn, (I32, ()))
    (out,) = f.graph.outputs
    assert (out.dtype.name, out.weak) == ("int32", True)
    assert bodies == ["int32"]  # the condition alone settled it: the body was traced once, as int32
    assert f(np.int32(5)) == (5,)


def test_while_counter_the_body_combines_with_another_dtype_is_traced_again():
    bodies = []

    def fn(n, big):
        def body(i, s):
            bodies.append(i.dtype.name)
            return i + 1, s + i * big  # i meets int64 in the body as well as int32 in the condition

        return cfo.while_loop(lambda i, s: i < n, body, (0, ops.zeros((), "int64")))

    f = traced(fn, (I32, ()), (I64, ()))
    count, total = f.graph.outputs
    # two strongly typed partners (int32 and int64): numpy's default int64, whatever dtype it was
    # first traced with
    assert (count.dtype.name, count.weak) == ("int64", True)
    assert bodies == ["int32", "int64"]
    assert f(np.int32(4), np.int64(10)) == (4, 60)


def _for(iterable, body_fn, state, names):
    def get_state():
        return tuple(state[n] for n in names)

    def set_state(values):
        state.update(zip(names, values))

    cf.for_stmt(iterable, None, lambda item: body_fn(state, item), get_state, set_state, tuple(names), {})
    return state


def test_for_range_items_are_python_ints_and_counters_stay_weak():
    def fn(x, n):
        state = _for(cf.range(n), lambda s, i: s.update(total=s["total"] + i * x, count=s["count"] + 1),
                     {"total": 0.0, "count": 0}, ["total", "count"])
        return state["total"], state["count"], state["total"] / state["count"]

    f = traced(fn, (F32, ()), (I32, ()))
    # count: a Python int counter takes the dtype the loop condition computes with (range(n), int32 n)
    assert [(t.dtype.name, t.weak) for t in f.graph.outputs] == [("float32", False), ("int32", True),
                                                                  ("float32", False)]
    total, count, mean = f(np.float32(0.5), np.int32(4))
    assert (total, count, mean) == (3.0, 4, 0.75) and mean.dtype == np.float32


def test_for_over_rt_range_gives_numpy_ints():
    def fn(x, n):
        state = _for(ops.range(n), lambda s, i: s.update(total=s["total"] + i * x), {"total": 0.0}, ["total"])
        return state["total"]

    f = traced(fn, (F32, ()), (I32, ()))
    # iterating np.arange(n) gives numpy int32 values: int32 * float32 is float64
    python = 0.0
    for i in np.arange(np.int32(3)):
        python = python + i * np.float32(0.5)
    assert f.graph.outputs[0].dtype == np.asarray(python).dtype == np.float64


def test_builtins_int_float_len_give_python_numbers():
    def fn(x, v):
        return tensor_builtins.float_(x) * x, tensor_builtins.int_(x) * x, cf.len(v) * x, tensor_builtins.float_(x)

    f = traced(fn, (F32, ()), (F32, (None,)))
    assert [(t.dtype.name, t.weak) for t in f.graph.outputs] == [
        ("float32", False), ("float32", False), ("float32", False), ("float64", True),
    ]
    x = np.float32(2.5)
    expected = (float(x) * x, int(x) * x, len(np.ones(3, np.float32)) * x)
    assert f(x, np.ones(3, np.float32))[:3] == expected
    assert all(np.asarray(e).dtype == np.float32 for e in expected)


def test_staged_list_of_weak_numbers_and_float32_elements_is_float32():
    def fn(x, n):
        state = _for(cf.range(n), lambda s, i: s.update(items=operators.list_append(s["items"], x * i)),
                     {"items": [1.0]}, ["items"])
        return state["items"]

    f = traced(fn, (F32, ()), (I32, ()))
    assert f.graph.outputs[0].dtype == np.float32
    np.testing.assert_array_equal(f(np.float32(2), np.int32(3)), np.array([1, 0, 2, 4], np.float32))


# -- printing, serialization, verification ------------------------------------------


def _weak_loop_graph():
    def fn(x):
        count, total = cfo.while_loop(lambda n, s: s < 10, lambda n, s: (n + 1, s + x), (0, 0.0))
        return cfo.cond(x > 1, lambda: count, lambda: 7), total

    return traced(fn, (F32, ())).graph


def test_graph_def_round_trips_weakness():
    graph = _weak_loop_graph()
    graph_def = json.loads(json.dumps(graph.as_graph_def()))
    (while_node,) = [n for n in graph_def["graph"]["nodes"] if n["type"] == "While"]
    assert while_node["outputs"] == [
        {"dtype": "int64", "shape": {"tuple": []}, "weak": True},
        {"dtype": "float32", "shape": {"tuple": []}},
    ]
    loaded = Graph.from_graph_def(graph_def)
    assert loaded.to_text() == graph.to_text()
    loaded.verify()
    assert executor.run_graph(loaded, [np.float32(4)]) == executor.run_graph(graph, [np.float32(4)])


def test_verify_checks_the_weakness_of_if_and_while_outputs():
    graph = _weak_loop_graph()
    graph.verify()
    if_op = next(op for op in graph.operations if op.type == "If")
    if_op.outputs[0].weak = False
    with pytest.raises(VerificationError, match=r"output if:0 should be weakly typed"):
        graph.verify()
    if_op.outputs[0].weak = True
    while_op = next(op for op in graph.operations if op.type == "While")
    while_op.outputs[1].weak = True
    with pytest.raises(VerificationError, match=r"output while:1 should be strongly typed"):
        graph.verify()


def test_repr_and_printed_type_mark_weak_tensors():
    graph = _build(lambda: _weak(2.5))
    assert re.fullmatch(r"<Tensor const:0 weak float64\[\]>", repr(graph.outputs[0]))
    assert "weak float64[]" in graph.to_dot()


# -- variables as op inputs ------------------------------------------------------------


def test_variable_is_an_op_input_while_tracing_as_eagerly():
    v = rt.Variable(np.float32(0.5), name="v")
    graph = _build(lambda x: ops.sin(v) + x, (F32, ()))
    assert [op.type for op in graph.operations] == ["Placeholder", "ReadVariable", "Sin", "Add"]
    assert executor.run_graph(graph, [np.float32(1)]) == [np.sin(np.float32(0.5)) + np.float32(1)]
    assert rt.sin(v) == np.sin(np.float32(0.5))
    with pytest.raises(TypeError, match="expected a float64 tensor"):
        _build(lambda: apply.convert_to_tensor(v, np.dtype("float64")))


def test_variable_takes_part_in_promotion_without_being_frozen():
    v = rt.Variable(np.float32(2.0), name="v")
    graph = _build(lambda x: (ops.multiply(v, 3.0), ops.stack([v, x]), ops.where(x > 0, v, 0.5)), (F32, ()))
    assert [t.dtype for t in graph.outputs] == [np.float32] * 3
    assert sum(op.type == "ReadVariable" for op in graph.operations) == 3
    v.assign(5.0)
    product, stacked, selected = executor.run_graph(graph, [np.float32(1)])
    assert product == 15.0 and list(stacked) == [5.0, 1.0] and selected == 5.0
    assert rt.multiply(v, 3.0).dtype == np.float32


# -- end to end through rt.function ------------------------------------------------------


def test_rt_function_returns_numpy_values_of_weak_results():
    f = rt.function(lambda x: (cfo.cond(x > 0, lambda: 1.0, lambda: 2.0), cfo.cond(x > 0, lambda: 1, lambda: 2) * x))
    y, scaled = f(np.float32(3))
    assert isinstance(y, np.float64) and y == 1.0
    assert isinstance(scaled, np.float32) and scaled == 3.0
