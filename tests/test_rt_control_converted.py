"""Control flow through real converted functions: ag.convert, traced into a graph by hand.

Each function is converted, traced on placeholders and run with the
executor; the result must equal the original Python function on the same
values, and the graph must hold the If/While ops the data-dependent control
flow asks for.
"""

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.tracing import functional_api as cfo
from autograph.runtime.errors import TracingError
from rt_control_util import traced

F32, I32 = "float32", "int32"


def _convert(fn):
    return ag.convert(fn, always_converted=True)


def while_with_branch(x, n):
    i = 0
    s = 0.0
    while i < n:
        if x > i:
            s = s + x
        else:
            s = s - 1.0
        i += 1
    return s


def for_with_break_and_continue(xs, t):
    total = 0.0
    for x in xs:
        if x > t:
            break
        if x < 0:
            continue
        total += x
    return total


def nested_loops(n):
    acc = 0
    for i in range(n):
        j = 0
        while j < i:
            acc += j
            j += 1
    return acc


def boolean_logic(x, y):
    if x > 0 and y > 0 or not x < -5:
        r = x if x > y else y
    else:
        r = 0.0
    return r


def collect_squares(n):
    out = []
    for i in range(n):
        if i % 2 == 0:
            out.append(i * i)
    return out


def collatz_steps(n):
    steps = 0
    while n > 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


CASES = [
    (while_with_branch, [(F32, ()), (I32, ())], [(2.5, 5), (-1.0, 3), (7.0, 0)], {"While": 1, "If": 1}),
    (for_with_break_and_continue, [(F32, (None,)), (F32, ())],
     [([1, -2, 3, 10, 4], 5.0), ([1, 2], 0.5), ([], 1.0)], {"While": 1}),
    (nested_loops, [(I32, ())], [(5,), (0,), (1,)], {"While": 2}),
    (boolean_logic, [(F32, ()), (F32, ())], [(1.0, 2.0), (-3.0, 2.0), (-7.0, 2.0), (3.0, -1.0)], {"If": 2}),
    (collect_squares, [(I32, ())], [(6,), (0,)], {"While": 1, "If": 1}),
    (collatz_steps, [(I32, ())], [(1,), (6,), (27,)], {"While": 1, "If": 1}),
]


@pytest.mark.parametrize("fn, specs, calls, expected_ops", CASES, ids=[c[0].__name__ for c in CASES])
def test_converted_function_matches_python(fn, specs, calls, expected_ops):
    f = traced(_convert(fn), *specs)
    for op_type, count in expected_ops.items():
        assert f.count(op_type) >= count, f.graph.to_text()
    for args in calls:
        values = [np.asarray(a, dtype=d) for a, (d, _) in zip(args, specs)]
        got = f(*values)
        want = fn(*args)
        np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64))


def test_converted_loop_counter_keeps_input_dtype():
    f = traced(_convert(collatz_steps), (I32, ()))
    assert f.graph.outputs[0].dtype == np.int32


def test_converted_variable_defined_in_one_branch_is_an_error():
    def one_branch(x):
        if x > 0:
            y = x * 2
        return y

    with pytest.raises(TracingError, match=r"'y' must be defined in both branches of the if at .*test_rt_control_"
                                           r"converted.py:\d+; it is defined only in the true branch"):
        traced(_convert(one_branch), (F32, ()))


def test_converted_variable_undefined_before_loop_is_an_error():
    def last_index(n):
        for i in range(n):
            last = i
        return last

    with pytest.raises(TracingError, match=r"'last' is not defined before the for loop at .*test_rt_control_converted"
                                           r".py:\d+"):
        traced(_convert(last_index), (I32, ()))


def test_converted_loop_dtype_change_is_an_error():
    def halve(x):
        while x > 1:
            x = x / 2
        return x

    with pytest.raises(TracingError, match=r"'x' is int32 before the while loop at .* but float64 after an iteration"):
        traced(_convert(halve), (I32, ()))


def test_return_value_placeholder_is_filled_in_tensor_loops():
    # What the return lowering produces for `for x in xs: if x > t: return x` + `return -1.0`
    # when every path returns: retval_ starts as an UndefinedReturnValue.
    from autograph.runtime import operators as cf

    def find(xs, t):
        do_return = False
        retval_ = cfo.UndefinedReturnValue()

        def loop_body(x):
            def if_body():
                nonlocal do_return, retval_
                retval_ = x
                do_return = True

            def get_state():
                return (do_return, retval_)

            def set_state(vars_):
                nonlocal do_return, retval_
                do_return, retval_ = vars_

            cf.if_stmt(x > t, if_body, lambda: None, get_state, set_state, ("do_return", "retval_"), 2)

        def get_state_1():
            return (do_return, retval_)

        def set_state_1(vars_):
            nonlocal do_return, retval_
            do_return, retval_ = vars_

        def extra_test():
            return cf.not_(do_return) if not isinstance(do_return, bool) else not do_return

        cf.for_stmt(xs, extra_test, loop_body, get_state_1, set_state_1, ("do_return", "retval_"), {})

        def if_body_1():
            nonlocal do_return, retval_
            retval_ = -1.0
            do_return = True

        def get_state_2():
            return (retval_,)

        def set_state_2(vars_):
            nonlocal retval_
            retval_, = vars_

        cf.if_stmt(cf.not_(do_return), if_body_1, lambda: None, get_state_2, set_state_2, ("retval_",), 1)
        return retval_

    f = traced(find, (F32, (None,)), (F32, ()))
    xs = np.array([1, 5, 3, 8], np.float32)
    assert f(xs, np.float32(2)) == 5.0
    assert f(xs, np.float32(6)) == 8.0
    assert f(xs, np.float32(9)) == -1.0
    assert f(np.zeros(0, np.float32), np.float32(0)) == -1.0
