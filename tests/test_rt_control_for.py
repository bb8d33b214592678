"""for_stmt over tensors and tensor ranges, the tensor builtins, staged lists, aug_setitem, assert_."""

import re

import numpy as np
import pytest

from autograph.runtime import operators as cf
from autograph.runtime.operators import tensor_builtins
from autograph.runtime import operators, ops
from autograph.runtime.errors import ExecutionError, TracingError
from rt_control_util import traced

F32, I32, I64, BOOL = "float32", "int32", "int64", "bool"
HERE = re.escape(__file__.rsplit("/", 1)[-1])


def _for(iterable, body_fn, state, names, extra_test=None, opts=None):
    """Runs for_stmt over ``state`` (a dict updated in place) the way converted code does."""

    def get_state():
        return tuple(state[n] for n in names)

    def set_state(values):
        state.update(zip(names, values))

    def body(item):
        body_fn(state, item)

    test = None if extra_test is None else (lambda: extra_test(state))
    cf.for_stmt(iterable, test, body, get_state, set_state, tuple(names), opts or {})
    return state


def test_for_over_range_of_tensor_sums_indices():
    def fn(n):
        state = _for(cf.range(n), lambda s, i: s.update(total=s["total"] + i), {"total": 0}, ["total"])
        return state["total"]

    f = traced(fn, (I32, ()))
    assert f.count("While") == 1
    assert f.graph.outputs[0].dtype == np.int32
    assert f(np.int32(5)) == 10 and f(np.int32(0)) == 0


@pytest.mark.parametrize("start, stop, step", [(2, 11, 3), (10, 0, -3), (5, 5, 1), (0, 7, 2), (7, 0, -1), (3, 1, 1)])
def test_range_with_start_stop_step(start, stop, step):
    def fn(a, b):
        state = _for(cf.range(a, b, step), lambda s, i: s.update(items=operators.list_append(s["items"], i)),
                     {"items": [-1]}, ["items"])
        return state["items"]

    f = traced(fn, (I32, ()), (I32, ()))
    np.testing.assert_array_equal(f(np.int32(start), np.int32(stop)), [-1, *range(start, stop, step)])


def test_range_with_tensor_step():
    def fn(a, b, c):
        state = _for(cf.range(a, b, c), lambda s, i: s.update(n=s["n"] + 1, last=i), {"n": 0, "last": -100},
                     ["n", "last"])
        return state["n"], state["last"]

    f = traced(fn, (I32, ()), (I32, ()), (I32, ()))
    for start, stop, step in [(0, 10, 3), (10, 0, -4), (0, 0, 2), (4, 0, 1)]:
        expected = list(range(start, stop, step))
        n, last = f(np.int32(start), np.int32(stop), np.int32(step))
        assert n == len(expected) and last == (expected[-1] if expected else -100)


def test_range_rejects_float_tensor():
    # Python's own error (range(np.float32(3)) is a TypeError), with the fix
    with pytest.raises(TypeError, match=r"range\(\) at .*'numpy.float32' object cannot be interpreted as an integer "
                                        r"\(cast it with int\(\) first\)"):
        traced(lambda x: cf.range(x), (F32, ()))


def test_for_over_tensor_rows():
    def fn(m):
        state = _for(m, lambda s, row: s.update(acc=s["acc"] + ops.reduce_sum(row)), {"acc": 0.0}, ["acc"])
        return state["acc"]

    f = traced(fn, (F32, (None, 3)))
    assert f.graph.outputs[0].dtype == np.float32
    assert f(np.arange(12, dtype=np.float32).reshape(4, 3)) == 66.0
    assert f(np.zeros((0, 3), np.float32)) == 0.0


def test_for_over_scalar_tensor_is_an_error():
    with pytest.raises(TracingError, match=r"the for loop at .* iterates over the scalar tensor"):
        traced(lambda x: _for(x, lambda s, v: None, {}, []), (F32, ()))


def test_for_with_extra_test_stops_early():
    # for x in xs: if x > limit: found = True; break  -- break lowered to a flag and extra_test
    def fn(xs, limit):
        def body(s, x):
            hit = x > limit
            s.update(found=ops.logical_or(s["found"], hit), seen=s["seen"] + 1)

        state = _for(xs, body, {"found": False, "seen": 0}, ["found", "seen"],
                     extra_test=lambda s: cf.not_(s["found"]) if not isinstance(s["found"], bool) else not s["found"])
        return state["found"], state["seen"]

    f = traced(fn, (F32, (None,)), (F32, ()))
    assert f(np.array([1, 5, 2, 9], np.float32), np.float32(4)) == (True, 2)
    assert f(np.array([1, 2], np.float32), np.float32(4)) == (False, 2)


def test_for_with_enumerate_and_zip():
    def fn(a, b):
        def body(s, item):
            i, (x, y) = item
            s.update(dot=s["dot"] + x * y * i)

        state = _for(cf.enumerate(cf.zip(a, b)), body, {"dot": 0.0}, ["dot"])
        return state["dot"]

    f = traced(fn, (F32, (None,)), (F32, (None,)))
    a = np.array([1, 2, 3, 4], np.float32)
    b = np.array([5, 6, 7], np.float32)
    assert f(a, b) == sum(i * x * y for i, (x, y) in enumerate(zip(a, b)))


def test_enumerate_start_and_range_of_len():
    def fn(xs):
        def body(s, item):
            i, x = item
            s.update(total=s["total"] + i * x)

        state = _for(cf.enumerate(xs, 10), body, {"total": 0.0}, ["total"])
        return state["total"]

    f = traced(fn, (F32, (None,)))
    assert f(np.array([1, 1, 2], np.float32)) == 10 + 11 + 24


def test_for_variable_undefined_before_loop_is_an_error():
    with pytest.raises(TracingError) as info:
        traced(lambda n: _for(cf.range(n), lambda s, i: s.update(last=i), {"last": operators.Undefined("last")},
                              ["last"]), (I32, ()))
    message = str(info.value)
    assert message.startswith("'last' is not defined before the for loop at ")
    assert re.search(HERE + r":\d+ but the loop assigns it", message)


def test_for_loop_builds_staged_list_of_rows():
    def fn(m):
        state = _for(m, lambda s, row: s.update(rows=operators.list_append(s["rows"], row * 2.0)), {"rows": []},
                     ["rows"])
        return state["rows"]

    f = traced(fn, (F32, (None, 2)))
    assert f.graph.outputs[0].shape == (None, 2)
    m = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.testing.assert_array_equal(f(m), m * 2)


def test_staged_list_pop_and_len_inside_loop():
    def fn(n):
        def body(s, i):
            items = operators.list_append(s["items"], i)
            items = operators.list_append(items, i * 10)
            items, popped = operators.list_pop(items)
            s.update(items=items, popped=s["popped"] + popped, size=cf.len(items))

        state = _for(cf.range(n), body, {"items": [], "popped": 0, "size": 0}, ["items", "popped", "size"])
        return state["items"], state["popped"], state["size"]

    f = traced(fn, (I32, ()))
    items, popped, size = f(np.int32(4))
    np.testing.assert_array_equal(items, [0, 1, 2, 3])
    assert popped == 60 and size == 4


def test_staged_list_elements_promote_like_numpy():
    def fn(n, x):
        state = _for(cf.range(n), lambda s, i: s.update(items=operators.list_append(s["items"], x)),
                     {"items": [np.int32(1)]}, ["items"])
        return state["items"]

    f = traced(fn, (I32, ()), (F32, ()))
    assert f.graph.outputs[0].dtype == np.float64
    np.testing.assert_array_equal(f(np.int32(2), np.float32(0.5)), [1, 0.5, 0.5])


def test_appending_a_wider_dtype_to_a_staged_list_is_an_error():
    with pytest.raises(TracingError, match=r"adds a float32 element to the staged list .* of int32 elements.*rt.cast"):
        traced(lambda items, x: cf.list_append(items, x), (I32, (None,)), (F32, ()))


def test_empty_staged_list_of_elements_of_an_unknown_shape():
    # the first append gives the list its element shape; elements of another shape fail at run time
    def fn(n, x):
        state = _for(cf.range(n), lambda s, i: s.update(items=operators.list_append(s["items"], x[:i])),
                     {"items": []}, ["items"])
        return state["items"]

    f = traced(fn, (I32, ()), (F32, (5,)))
    assert f.graph.outputs[0].shape == (None, None)
    x = np.arange(5, dtype=np.float32)
    assert f(np.int32(0), x).shape[0] == 0 and f(np.int32(1), x).shape == (1, 0)
    with pytest.raises(ExecutionError, match=r"the staged list 'items' of the for loop at .* holds elements of "
                                                r"shape \[0\] and an element of shape \[1\] is appended"):
        f(np.int32(3), x)


# -- builtins -------------------------------------------------------------------


def test_len_static_and_dynamic():
    f = traced(lambda x, y: (cf.len(x), cf.len(y)), (F32, (4, 2)), (F32, (None,)))
    assert f(np.zeros((4, 2), np.float32), np.zeros(7, np.float32)) == (4, 7)
    # len(x) of the static shape is the Python 4; len(y) is the one graph output, computed when it runs
    assert [t.op.type for t in f.graph.outputs] == ["Cast"]
    with pytest.raises(TracingError, match="len\\(\\) of the scalar tensor"):
        traced(lambda x: cf.len(x), (F32, ()))


def test_int_float_abs_casts():
    f = traced(lambda x, n: (tensor_builtins.int_(x), tensor_builtins.float_(n), cf.abs(x), tensor_builtins.int_(n)),
               (F32, ()), (I32, ()))
    i, fl, a, widened = f(np.float32(-2.7), np.int32(3))
    assert i == -2 and i.dtype == np.int64
    assert fl == 3.0 and fl.dtype == np.float64
    assert a == np.float32(2.7)
    assert widened == 3 and widened.dtype == np.int64  # Python's int: no wrap at int32 (int(n) + 2**31)


def test_print_prints_at_every_run(capsys):
    f = traced(lambda x: cf.print("x is", x, sep=":") or x, (F32, ()))
    f(np.float32(1))
    f(np.float32(2))
    assert capsys.readouterr().out == "x is:1.0\nx is:2.0\n"


def test_aug_setitem_updates_one_row():
    f = traced(lambda x, i: operators.aug_setitem(x, i, "+=", 10.0), (F32, (None, 2)), (I32, ()))
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    expected = x.copy()
    expected[1] += 10
    np.testing.assert_array_equal(f(x, np.int32(1)), expected)
    expected = x.copy()
    expected[-1] += 10
    np.testing.assert_array_equal(f(x, np.int32(-1)), expected)


def test_aug_setitem_static_index_and_unsupported_keys():
    f = traced(lambda x: operators.aug_setitem(x, -1, "*=", 3), (I32, (4,)))
    np.testing.assert_array_equal(f(np.array([1, 2, 3, 4], np.int32)), [1, 2, 3, 12])
    f = traced(lambda x: operators.aug_setitem(x, (0, 1), "+=", 1.0), (F32, (2, 2)))  # numpy's x[0, 1] += 1.0
    np.testing.assert_array_equal(f(np.zeros((2, 2), np.float32)), [[0, 1], [0, 0]])


def test_assert_in_graph_checks_at_every_run():
    f = traced(lambda x: cf.assert_(x > 0, lambda: "x must be positive") or x * 2.0, (F32, ()))
    assert f.count("Assert") == 1
    assert f(np.float32(2)) == 4.0
    with pytest.raises(AssertionError, match="x must be positive") as info:  # the user's own exception type
        f(np.float32(-1))
    assert any("Assert op" in note and "test_rt_control_for.py:" in note for note in info.value.__notes__)


def test_for_over_rt_range_counts_without_materializing():
    def fn(n):
        state = _for(ops.range(2, n, 3), lambda s, i: s.update(items=operators.list_append(s["items"], i)),
                     {"items": [0]}, ["items"])
        return state["items"]

    f = traced(fn, (I32, ()))
    assert f.count("GatherV2") == 0  # the Range op the user built stays unused (pruned at run time)
    assert f.graph.outputs[0].dtype == np.int32
    np.testing.assert_array_equal(f(np.int32(12)), [0, 2, 5, 8, 11])


def test_for_over_float_rt_range_iterates_its_elements():
    def fn(x):
        state = _for(ops.range(0.0, x, 0.5), lambda s, v: s.update(total=s["total"] + v), {"total": 0.0}, ["total"])
        return state["total"]

    f = traced(fn, (F32, ()))
    assert f(np.float32(2)) == 0.0 + 0.5 + 1.0 + 1.5


def test_aug_setitem_plain_assignment_and_staged_lists_in_loops():
    def fn(n):
        def body(s, i):
            s.update(xs=operators.aug_setitem(s["xs"], i % 3, "=", i))

        state = _for(cf.range(n), body, {"xs": np.zeros(3, np.int32)}, ["xs"])
        return state["xs"]

    f = traced(fn, (I32, ()))
    np.testing.assert_array_equal(f(np.int32(5)), [3, 4, 2])
