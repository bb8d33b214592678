"""rt.while_loop, the While op, and the graph path of while_stmt."""

import collections
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograph.runtime import operators as cf
from autograph.runtime.operators import loop_statements
from autograph.runtime.tracing import functional_api as cfo
from autograph.runtime import ops
from autograph.runtime.errors import TracingError
from autograph.runtime.operators import Undefined
from rt_control_util import traced

F32, I32, I64, BOOL = "float32", "int32", "int64", "bool"
HERE = re.escape(__file__.rsplit("/", 1)[-1])

State = collections.namedtuple("State", "count total")


# -- rt.while_loop ---------------------------------------------------------------


def test_while_loop_eager_is_a_python_loop():
    assert cfo.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + i), (0, 0)) == (4, 6)
    assert cfo.while_loop(lambda i: i < 100, lambda i: i + 1, [0], maximum_iterations=7) == [7]


def test_while_loop_graph_emits_while_and_keeps_dtypes():
    f = traced(lambda n: cfo.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), (0, 0)), (I32, ()))
    assert f.count("While") == 1
    assert f(np.int32(5)) == (5, 10)
    assert [t.dtype for t in f.graph.outputs] == [np.int32, np.int32]  # Python 0 took n's int32


def test_while_loop_nested_structures():
    def fn(x):
        def body(state, extra):
            return State(state.count + 1, {"sum": state.total["sum"] + x, "max": ops.maximum(state.total["max"], x)}), extra

        init = (State(0, {"sum": 0.0, "max": -1.0}), "untouched")
        return cfo.while_loop(lambda state, extra: state.count < 3, body, init)

    f = traced(fn, (F32, ()))
    state, extra = f(np.float32(2))
    assert isinstance(state, State) and extra == "untouched"
    assert state.count == 3 and state.total == {"sum": 6.0, "max": 2.0}


def test_while_loop_single_list_var_returns_same_structure():
    f = traced(lambda x: cfo.while_loop(lambda v: v < 100.0, lambda v: v * 2.0, [x]), (F32, ()))
    out = f(np.float32(3))
    assert isinstance(out, list) and out[0] == 192.0


def test_while_loop_maximum_iterations_int_and_tensor():
    f = traced(lambda x: cfo.while_loop(lambda v: v > -1000.0, lambda v: v - 1.0, [x], maximum_iterations=5), (F32, ()))
    while_op = next(op for op in f.graph.operations if op.type == "While")
    assert while_op.attrs["maximum_iterations"] == 5
    assert f(np.float32(0))[0] == -5.0

    g = traced(lambda x, m: cfo.while_loop(lambda v: v > -1000.0, lambda v: v - 1.0, [x], maximum_iterations=m),
               (F32, ()), (I32, ()))
    assert g(np.float32(0), np.int32(3))[0] == -3.0
    assert g(np.float32(0), np.int32(0))[0] == 0.0


def test_while_loop_zero_iterations_returns_the_initial_values():
    f = traced(lambda x: cfo.while_loop(lambda v: v < 0.0, lambda v: v - 1.0, (x,)), (F32, ()))
    assert f(np.float32(5)) == (5.0,)


def test_while_loop_captures_outer_tensors():
    def fn(x, step, limit):
        return cfo.while_loop(lambda v: v < limit, lambda v: v + step, (x,))

    f = traced(fn, (F32, ()), (F32, ()), (F32, ()))
    while_op = next(op for op in f.graph.operations if op.type == "While")
    assert len(while_op.inputs) == 3  # the loop variable, then the captured step and limit
    assert len(while_op.outputs) == 1
    assert f(np.float32(0), np.float32(3), np.float32(10)) == (12.0,)


def test_while_loop_shape_relaxes_automatically():
    def fn(x):
        return cfo.while_loop(lambda v: ops.size(v) < 8, lambda v: ops.concat([v, v], axis=0), (x,))

    f = traced(fn, (F32, (1,)))
    assert f.graph.outputs[0].shape == (None,)
    np.testing.assert_array_equal(f(np.ones(1, np.float32))[0], np.ones(8))


def test_while_loop_shape_invariant_is_used_and_checked():
    def grow(x):
        return cfo.while_loop(lambda v: ops.size(v) < 8, lambda v: ops.concat([v, v], axis=0), (x,),
                              shape_invariants=((None,),))

    f = traced(grow, (F32, (2,)))
    assert f.graph.outputs[0].shape == (None,)
    np.testing.assert_array_equal(f(np.ones(2, np.float32))[0], np.ones(8))

    def wrong(x):
        return cfo.while_loop(lambda v: ops.size(v) < 8, lambda v: ops.concat([v, v], axis=0), (x,),
                              shape_invariants=((2,),))

    with pytest.raises(TracingError, match=r"'loop_vars\[0\]' has shape \[4\] after an iteration of "
                                           r"rt.while_loop at .*, which does not fit its shape invariant \[2\]"):
        traced(wrong, (F32, (2,)))


def test_while_loop_invariant_that_does_not_cover_the_initial_value():
    with pytest.raises(TracingError, match=r"'loop_vars\[0\]' has shape \[2\] before .* shape invariant \[3\]"):
        traced(lambda x: cfo.while_loop(lambda v: False, lambda v: v, (x,), shape_invariants=[(3,)]), (F32, (2,)))


def test_while_loop_dtype_change_is_an_error_with_the_fix():
    with pytest.raises(TracingError) as info:
        traced(lambda x: cfo.while_loop(lambda v: v < 10, lambda v: v * 1.5, (x,)), (I32, ()))
    message = str(info.value)
    assert "'loop_vars[0]' is int32 before rt.while_loop at" in message
    assert re.search(HERE + r":\d+ but float64 after an iteration", message)
    assert "Cast it before the loop" in message


def test_while_loop_structure_change_is_an_error():
    with pytest.raises(TracingError, match=r"returns a different structure than loop_vars"):
        traced(lambda x: cfo.while_loop(lambda a, b: a < 3.0, lambda a, b: (a + 1.0, (b, b)), (x, x)), (F32, ()))


def test_while_loop_with_non_scalar_condition_is_an_error():
    with pytest.raises(TracingError, match=r"condition of rt.while_loop at .* shape \[3\]"):
        traced(lambda x: cfo.while_loop(lambda v: v < 3.0, lambda v: v + 1.0, (x,)), (F32, (3,)))


def test_while_loop_python_object_changed_by_body_is_an_error():
    with pytest.raises(TracingError, match=r"is the Python str 'a' before .* the Python str 'ab' after an iteration"):
        traced(lambda x: cfo.while_loop(lambda v, s: v < 3.0, lambda v, s: (v + 1.0, s + "b"), (x, "a")), (F32, ()))


def test_if_inside_while_inside_if():
    def fn(x, n):
        def loop():
            def body(i, acc):
                acc = cfo.cond(i % 2 == 0, lambda: acc + x, lambda: acc - 1.0)
                return i + 1, acc

            return cfo.while_loop(lambda i, acc: i < n, body, (0, 0.0))[1]

        return cfo.cond(n > 0, loop, lambda: -x)

    f = traced(fn, (F32, ()), (I32, ()))
    assert f.count("If") == 2 and f.count("While") == 1
    # i = 0..4: +x at 0, 2, 4; -1 at 1, 3
    assert f(np.float32(10), np.int32(5)) == 28.0
    assert f(np.float32(10), np.int32(0)) == -10.0


def test_stateful_body_makes_the_while_stateful(capsys):
    def fn(n):
        def body(i):
            ops.effects.print("step", i)
            return (i + 1,)

        return cfo.while_loop(lambda i: i < n, body, (0,))

    f = traced(fn, (I32, ()))
    while_op = next(op for op in f.graph.operations if op.type == "While")
    assert f.graph.last_stateful is while_op
    f(np.int32(3))
    assert capsys.readouterr().out == "step 0\nstep 1\nstep 2\n"


def test_discarded_traces_leave_no_library_functions():
    f = traced(lambda x: cfo.while_loop(lambda v: ops.size(v) < 8, lambda v: ops.concat([v, v], axis=0), (x,)),
               (F32, (1,)))
    while_op = next(op for op in f.graph.operations if op.type == "While")
    assert sorted(f.graph.library) == sorted([while_op.attrs["cond"], while_op.attrs["body"]])


# -- while_stmt with hand-written closures ------------------------------------------


def _count_up(n):
    i = 0
    total = 0

    def test():
        return i < n

    def body():
        nonlocal i, total
        total = total + i * i
        i = i + 1

    def get_state():
        return (i, total)

    def set_state(values):
        nonlocal i, total
        (i, total) = values

    loop_statements.staged_while_stmt(test, body, get_state, set_state, ("i", "total"), {})
    return i, total


def test_while_stmt_python_scalars_take_the_tensor_dtype():
    f = traced(_count_up, (I32, ()))
    assert [t.dtype for t in f.graph.outputs] == [np.int32, np.int32]
    assert f(np.int32(4)) == (4, 14)
    g = traced(_count_up, (I64, ()))
    assert [t.dtype for t in g.graph.outputs] == [np.int64, np.int64]


def test_while_stmt_float_accumulator_takes_the_element_dtype():
    def fn(x):
        i, s = 0, 0

        def test():
            return i < ops.shape(x)[0]

        def body():
            nonlocal i, s
            s = s + x[i]
            i = i + 1

        def get_state():
            return (i, s)

        def set_state(values):
            nonlocal i, s
            (i, s) = values

        loop_statements.staged_while_stmt(test, body, get_state, set_state, ("i", "s"), {})
        return s

    f = traced(fn, (F32, (None,)))
    assert f.graph.outputs[0].dtype == np.float32
    assert f(np.array([1.5, 2.5, 3], np.float32)) == 7.0


def test_while_stmt_undefined_before_loop_is_an_error():
    def fn(n):
        i = 0
        last = Undefined("last")

        def test():
            return i < n

        def body():
            nonlocal i, last
            last = i * 2
            i = i + 1

        def get_state():
            return (i, last)

        def set_state(values):
            nonlocal i, last
            (i, last) = values

        loop_statements.staged_while_stmt(test, body, get_state, set_state, ("i", "last"), {})
        return last

    with pytest.raises(TracingError) as info:
        traced(fn, (I32, ()))
    message = str(info.value)
    assert message.startswith("'last' is not defined before the while loop at ")
    assert re.search(HERE + r":\d+ but the loop assigns it", message)
    assert "Assign last before the loop" in message


def test_while_stmt_maximum_iterations_and_dict_invariants():
    def fn(x):
        v = x

        def test():
            return ops.size(v) < 1000

        def body():
            nonlocal v
            v = ops.concat([v, v], axis=0)

        def get_state():
            return (v,)

        def set_state(values):
            nonlocal v
            (v,) = values

        loop_statements.staged_while_stmt(test, body, get_state, set_state, ("v",),
                      {"maximum_iterations": 2, "shape_invariants": {"v": (None,)}})
        return v

    f = traced(fn, (F32, (3,)))
    assert f(np.ones(3, np.float32)).shape == (12,)


def test_while_stmt_shape_invariant_pairs_match_by_value():
    def fn(x):
        v = x

        def body():
            nonlocal v
            v = ops.concat([v, v], axis=0)

        def get_state():
            return (v,)

        def set_state(values):
            nonlocal v
            (v,) = values

        loop_statements.staged_while_stmt(lambda: ops.size(v) < 10, body, get_state, set_state, ("v",),
                      {"shape_invariants": [(x, (3,))]})
        return v

    with pytest.raises(TracingError, match=r"'v' has shape \[6\] after an iteration of the while loop"):
        traced(fn, (F32, (3,)))


def test_while_stmt_list_append_is_staged():
    from autograph.runtime import operators

    def fn(n):
        i = 0
        squares = []

        def test():
            return i < n

        def body():
            nonlocal i, squares
            squares = operators.list_append(squares, i * i)
            i = i + 1

        def get_state():
            return (i, squares)

        def set_state(values):
            nonlocal i, squares
            (i, squares) = values

        loop_statements.staged_while_stmt(test, body, get_state, set_state, ("i", "squares"), {})
        return squares

    original = []
    f = traced(fn, (I32, ()))
    assert original == []
    assert f.graph.outputs[0].dtype == np.int32 and f.graph.outputs[0].shape == (None,)
    np.testing.assert_array_equal(f(np.int32(5)), [0, 1, 4, 9, 16])
    assert f(np.int32(0)).shape == (0,)


def test_while_stmt_does_not_mutate_the_users_list():
    from autograph.runtime import operators

    shared = [1.0]

    def fn(x):
        items = shared

        def body():
            nonlocal items
            items = operators.list_append(items, x)

        def get_state():
            return (items,)

        def set_state(values):
            nonlocal items
            (items,) = values

        loop_statements.staged_while_stmt(lambda: cf.len(items) < 4, body, get_state, set_state, ("items",), {})
        return items

    # 'shared' is another name for the list the loop stages: it could not see the appends, as it
    # does in Python, so the loop refuses it (tests/test_aliases.py); tracing never touched the list.
    with pytest.raises(TracingError, match="the list .items. changes length in the while loop .* also reached as 'shared'"):
        traced(fn, (F32, ()))
    assert shared == [1.0]


# -- eager == graph ------------------------------------------------------------------

def _poly_loop(x, n):
    def body(i, acc, ys):
        acc = cfo.cond(acc > 100, lambda: acc - x * 3, lambda: acc * 2 + x)
        return i + 1, acc, ops.concat([ys, ops.stack([acc])], axis=0)

    return cfo.while_loop(lambda i, acc, ys: i < n, body, (0, x, ops.zeros((0,), x.dtype)))


@settings(max_examples=30, deadline=None, derandomize=True)
@given(dtype=st.sampled_from(["int32", "int64", "float32", "float64"]), n=st.integers(0, 12),
       x=st.integers(-5, 9))
def test_while_and_cond_eager_equals_graph(dtype, n, x):
    x_value = np.asarray(x, dtype)
    eager = _poly_loop(x_value, np.int32(n))
    f = traced(_poly_loop, (dtype, ()), ("int32", ()))
    graph = f(x_value, np.int32(n))
    assert eager[0] == graph[0] == n
    assert np.asarray(graph[1]).dtype == np.dtype(dtype) == np.asarray(eager[1]).dtype
    np.testing.assert_array_equal(graph[1], eager[1])
    np.testing.assert_array_equal(graph[2], eager[2])


def test_while_stmt_nested_state_and_structure_change_error():
    def fn(x, change_structure):
        i = 0
        pair = (x, {"n": 0})

        def body():
            nonlocal i, pair
            i = i + 1
            pair = (pair[0] * 2.0, {"n": pair[1]["n"] + 1}) if not change_structure else (pair[0],)

        def get_state():
            return (i, pair)

        def set_state(values):
            nonlocal i, pair
            (i, pair) = values

        loop_statements.staged_while_stmt(lambda: pair[0] < 100.0, body, get_state, set_state, ("i", "pair"), {})
        return i, pair

    f = traced(lambda x: fn(x, False), (F32, ()))
    i, (value, info) = f(np.float32(3))
    assert (i, value, info["n"]) == (6, 192.0, 6)
    with pytest.raises(TracingError, match=r"'pair' changes structure in the while loop at .*: a tuple of 2 vs a "
                                           r"tuple of 1"):
        traced(lambda x: fn(x, True), (F32, ()))


def test_while_stmt_python_value_left_alone_passes_through():
    def fn(x):
        v, label = x, "fixed"

        def body():
            nonlocal v, label
            v = v + 1.0
            label = "fixed"

        def get_state():
            return (v, label)

        def set_state(values):
            nonlocal v, label
            (v, label) = values

        loop_statements.staged_while_stmt(lambda: v < 3.0, body, get_state, set_state, ("v", "label"), {})
        return v, label

    f = traced(fn, (F32, ()))
    assert f(np.float32(0)) == (3.0, "fixed")
    while_op = next(op for op in f.graph.operations if op.type == "While")
    assert len(while_op.outputs) == 1
