"""rt.cond, the If op, and the graph paths of if_stmt / if_exp / and_ / or_ / not_."""

import collections
import re

import numpy as np
import pytest

from autograph.runtime import operators as cf
from autograph.runtime.tracing import functional_api as cfo
from autograph.runtime import ops
from autograph.runtime.errors import ExecutionError, TracingError
from autograph.runtime import operators
from autograph.runtime.operators import Undefined
from autograph.runtime import optimizer
from rt_control_util import Traced, traced

F32, I32, BOOL = "float32", "int32", "bool"
HERE = re.escape(__file__.rsplit("/", 1)[-1])

Pair = collections.namedtuple("Pair", "a b")


# -- rt.cond ----------------------------------------------------------------


def test_cond_eager_runs_only_the_taken_branch():
    calls = []
    assert cfo.cond(True, lambda: calls.append("t") or 1, lambda: calls.append("f") or 2) == 1
    assert cfo.cond(np.bool_(False), lambda: calls.append("t") or 1, lambda: calls.append("f") or 2) == 2
    assert calls == ["t", "f"]


def test_cond_graph_emits_if_and_runs_both_ways():
    f = traced(lambda x: cfo.cond(x > 0, lambda: x * 2.0, lambda: -x), (F32, ()))
    assert f.count("If") == 1
    assert f(np.float32(3)) == np.float32(6)
    assert f(np.float32(-4)) == np.float32(4)
    assert f.graph.outputs[0].dtype == np.float32


def test_cond_nested_structures_and_python_passthrough():
    def fn(x, y):
        return cfo.cond(
            x > y,
            lambda: {"big": x, "pair": Pair(y, 1), "tag": "same"},
            lambda: {"big": y, "pair": Pair(x, 2), "tag": "same"},
        )

    f = traced(fn, (F32, ()), (F32, ()))
    out = f(np.float32(5), np.float32(2))
    assert out["tag"] == "same"  # equal Python values pass through, no tensor
    assert isinstance(out["pair"], Pair)
    assert out["big"] == 5 and out["pair"].a == 2 and out["pair"].b == 1
    out = f(np.float32(1), np.float32(2))
    assert out["big"] == 2 and out["pair"].a == 1 and out["pair"].b == 2
    # the differing Python ints became an int64 output (numpy's default for Python ints)
    assert out["pair"].b.dtype == np.int64


def test_cond_python_number_takes_the_tensor_dtype():
    f = traced(lambda x: cfo.cond(x > 0, lambda: x, lambda: 0), (I32, ()))
    assert f.graph.outputs[0].dtype == np.int32
    assert f(np.int32(-3)) == 0 and f(np.int32(3)) == 3


def test_cond_shapes_merge_to_most_specific_covering_shape():
    def fn(p, x):
        return cfo.cond(p, lambda: x[:2], lambda: x[:3])

    f = traced(fn, (BOOL, ()), (F32, (5,)))
    assert f.graph.outputs[0].shape == (None,)
    np.testing.assert_array_equal(f(True, np.arange(5, dtype=np.float32)), [0, 1])
    np.testing.assert_array_equal(f(False, np.arange(5, dtype=np.float32)), [0, 1, 2])


def test_cond_captures_outer_tensors_once_in_the_same_order():
    def fn(a, b, c):
        return cfo.cond(a > 0, lambda: b + c, lambda: c - a)

    f = traced(fn, (F32, ()), (F32, ()), (F32, ()))
    if_op = next(op for op in f.graph.operations if op.type == "If")
    assert [t.op.name for t in if_op.inputs[1:]] == ["arg1", "arg2", "arg0"]
    then_g = f.graph.library[if_op.attrs["then_branch"]]
    else_g = f.graph.library[if_op.attrs["else_branch"]]
    assert [o.op.name for o, _ in then_g.captures] == [o.op.name for o, _ in else_g.captures]
    assert f(1.0, 2.0, 3.0) == 5.0 and f(-1.0, 2.0, 3.0) == 4.0


def test_cond_predicate_of_numbers_uses_python_truth():
    f = traced(lambda x: cfo.cond(x, lambda: 1.0, lambda: 2.0), (I32, ()))
    assert f(np.int32(0)) == 2.0 and f(np.int32(7)) == 1.0


def test_cond_non_scalar_predicate_is_an_error():
    with pytest.raises(TracingError, match=r"condition of rt.cond at .*shape \[3\].*reduce_any"):
        traced(lambda x: cfo.cond(x > 0, lambda: x, lambda: x), (F32, (3,)))


def test_cond_dtype_mismatch_names_the_output_and_fix():
    with pytest.raises(TracingError) as info:
        traced(lambda x, y: cfo.cond(x > 0, lambda: x, lambda: y), (F32, ()), (I32, ()))
    message = str(info.value)
    assert "'result' is float32 in the true branch but int32 in the false branch of rt.cond at" in message
    assert re.search(HERE + r":\d+", message)
    assert "rt.cast" in message


def test_cond_structure_mismatch_is_an_error():
    with pytest.raises(TracingError, match=r"different structure in the two branches.*tuple of 2 vs a tuple of 3"):
        traced(lambda x: cfo.cond(x > 0, lambda: (x, x), lambda: (x, x, x)), (F32, ()))


def test_cond_different_python_objects_is_an_error():
    with pytest.raises(TracingError, match=r"'result' is the Python str 'a' in the true branch but the Python str 'b'"):
        traced(lambda x: cfo.cond(x > 0, lambda: "a", lambda: "b"), (F32, ()))


def test_cond_escaped_tensor_from_another_trace_is_an_error():
    leaked = []
    traced(lambda x: leaked.append(x * 2) or x, (F32, ()))
    with pytest.raises(TracingError, match="belongs to another trace"):
        traced(lambda x: cfo.cond(x > 0, lambda: leaked[0], lambda: x), (F32, ()))


def test_cond_with_stateful_branch_keeps_side_effects():
    def fn(x):
        def loud():
            ops.effects.print("big", x)
            return x

        return cfo.cond(x > 10, loud, lambda: x)

    f = traced(fn, (F32, ()))
    if_op = next(op for op in f.graph.operations if op.type == "If")
    assert f.graph.last_stateful is if_op
    assert f(np.float32(1)) == 1.0


def test_cond_kernel_error_names_the_inner_op(capsys):
    f = traced(lambda x, i: cfo.cond(i >= 0, lambda: ops.gather(x, i), lambda: x[0]), (F32, (3,)), (I32, ()))
    assert f(np.arange(3, dtype=np.float32), np.int32(2)) == 2.0
    with pytest.raises(ExecutionError, match="GatherV2"):
        f(np.arange(3, dtype=np.float32), np.int32(7))


# -- if_stmt with hand-written state closures (as converted code calls it) -----


def _abs_and_sign(x):
    y = x
    sign = 1

    def body():
        nonlocal y, sign
        y = -x
        sign = -1

    def get_state():
        return (y, sign)

    def set_state(values):
        nonlocal y, sign
        (y, sign) = values

    cf.if_stmt(x < 0, body, lambda: None, get_state, set_state, ("y", "sign"), 2)
    return y, sign


def test_if_stmt_merges_state_with_weak_python_numbers():
    f = traced(_abs_and_sign, (I32, ()))
    assert f.count("If") == 1
    y, sign = f(np.int32(-5))
    assert (y, sign) == (5, -1)
    y, sign = f(np.int32(4))
    assert (y, sign) == (4, 1)
    assert f.graph.outputs[0].dtype == np.int32


def test_if_stmt_unchanged_python_values_pass_through():
    def fn(x):
        label, y = "keep", x

        def body():
            nonlocal y
            y = x + 1.0

        def orelse():
            nonlocal y
            y = x - 1.0

        def get_state():
            return (label, y)

        def set_state(values):
            nonlocal label, y
            (label, y) = values

        cf.if_stmt(x > 0, body, orelse, get_state, set_state, ("label", "y"), 2)
        return label, y

    f = traced(fn, (F32, ()))
    assert f(np.float32(1)) == ("keep", 2.0)
    assert f(np.float32(-1)) == ("keep", -2.0)


def _one_branch_defines(x):
    y = Undefined("y")

    def body():
        nonlocal y
        y = x * 2.0

    def get_state():
        return (y,)

    def set_state(values):
        nonlocal y
        (y,) = values

    cf.if_stmt(x > 0, body, lambda: None, get_state, set_state, ("y",), 1)
    return y


def test_if_stmt_variable_defined_in_one_branch_is_an_error():
    with pytest.raises(TracingError) as info:
        traced(_one_branch_defines, (F32, ()))
    message = str(info.value)
    assert message.startswith("'y' must be defined in both branches of the if at ")
    assert re.search(HERE + r":\d+; it is defined only in the true branch\. Assign y before the if or in both "
                     r"branches\.", message)


def test_if_stmt_undefined_in_both_branches_stays_undefined():
    def fn(x):
        y = Undefined("y")
        z = x

        def body():
            nonlocal z
            z = x + 1.0

        def get_state():
            return (y, z)

        def set_state(values):
            nonlocal y, z
            (y, z) = values

        cf.if_stmt(x > 0, body, lambda: None, get_state, set_state, ("y", "z"), 2)
        assert isinstance(y, Undefined)
        return z

    f = traced(fn, (F32, ()))
    assert f(np.float32(1)) == 2.0 and f(np.float32(-1)) == -1.0


def test_if_stmt_without_state_keeps_side_effects(capsys):
    def fn(x):
        cf.if_stmt(x > 0, lambda: cf.print("positive", x), lambda: None, lambda: (), lambda v: None, (), 0)
        return x

    f = traced(fn, (F32, ()))
    f(np.float32(2))
    f(np.float32(-2))
    assert capsys.readouterr().out == "positive 2.0\n"


def test_if_stmt_list_appended_in_one_branch_is_staged():
    def fn(x):
        items = [x]

        def body():
            nonlocal items
            items = operators.list_append(items, x * 10.0)

        def get_state():
            return (items,)

        def set_state(values):
            nonlocal items
            (items,) = values

        cf.if_stmt(x > 0, body, lambda: None, get_state, set_state, ("items",), 1)
        return items

    f = traced(fn, (F32, ()))
    assert f.graph.outputs[0].shape == (None,)
    np.testing.assert_array_equal(f(np.float32(2)), [2, 20])
    np.testing.assert_array_equal(f(np.float32(-2)), [-2])


def test_nested_if_inside_if():
    def fn(x):
        return cfo.cond(
            x > 0,
            lambda: cfo.cond(x > 10, lambda: x * 100.0, lambda: x * 10.0),
            lambda: -x,
        )

    f = traced(fn, (F32, ()))
    assert f.count("If") == 2
    assert [f(np.float32(v)) for v in (20, 2, -3)] == [2000, 20, 3]


# -- if_exp, and_, or_, not_ ----------------------------------------------------


def test_if_exp_graph():
    f = traced(lambda x: cf.if_exp(x > 0, lambda: x, lambda: 0.0, "x > 0"), (F32, ()))
    assert f(np.float32(3)) == 3.0 and f(np.float32(-3)) == 0.0


def test_if_exp_error_names_the_expression():
    with pytest.raises(TracingError, match=r"'value' is a float32\[\] tensor in the true branch but the Python str 'no' in the false branch of "
                       r"the conditional expression `... if x > 0 else ...` at .*:\d+; "):
        traced(lambda x: cf.if_exp(x > 0, lambda: x, lambda: "no", "x > 0"), (F32, ()))


def test_and_or_short_circuit_in_the_graph():
    def fn(x, i):
        # x[i] is only read when i is in range: the right operand runs inside an If branch
        in_range = cf.and_(i < 3, lambda: ops.gather(x, i) > 0)
        either = cf.or_(i < 0, lambda: ops.gather(x, 0) > 0)
        return in_range, either

    f = traced(fn, (F32, (3,)), (I32, ()))
    assert f.count("If") == 2
    x = np.array([1, -1, 2], np.float32)
    assert f(x, np.int32(0)) == (True, True)
    assert f(x, np.int32(1)) == (False, True)
    assert f(x, np.int32(9)) == (False, True)  # no out-of-range gather


def test_and_or_of_cheap_scalar_comparisons_need_no_if():
    def fn(x, y):
        return cf.or_(cf.and_(x > 0, lambda: y > 0), lambda: cf.not_(x < -5))

    f = traced(fn, (F32, ()), (F32, ()))
    assert f.count("If") == 2  # as traced: the optimizer removes the branching (optimizer/logical_if.py)
    g = Traced(optimizer.optimize(f.graph, check=True), f.structure)
    assert g.count("If") == 0
    assert "LogicalAnd" in g.op_types() and "LogicalOr" in g.op_types()
    assert g.graph.library == {}
    for x, y in [(1, 2), (-3, 2), (-7, 2), (3, -1)]:
        expected = (x > 0 and y > 0) or not x < -5
        assert f(np.float32(x), np.float32(y)) == expected and g(np.float32(x), np.float32(y)) == expected


def test_and_returns_the_falsy_operand_like_python():
    f = traced(lambda x: cf.and_(x, lambda: x + 1), (I32, ()))
    assert f(np.int32(0)) == 0 and f(np.int32(2)) == 3


def test_not_of_bool_and_numbers():
    f = traced(lambda b, n: (cf.not_(b), cf.not_(n)), (BOOL, ()), (F32, ()))
    assert f(True, np.float32(0)) == (False, True)
    assert f(False, np.float32(2)) == (True, False)
