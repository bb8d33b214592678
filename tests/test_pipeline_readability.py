"""Second round on the generated code: source order, simplifications, line numbers, builtins.

Each test names the finding it pins; code is converted from a string as
``autograph show`` does (``show``), or from a live function defined in a
``linecache``-registered file when it must run.
"""

import linecache
import textwrap

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from test_pipeline_converters import show

_counter = 0


def _define(source, name="f"):
    """Defines ``name`` from ``source`` in a file of its own; returns (function, filename)."""
    global _counter
    _counter += 1
    filename = f"<readability-{_counter}>"
    source = textwrap.dedent(source).lstrip("\n")
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name], filename


def _defs(code):
    """The names of the ``def``s of ``code``, in textual order."""
    return [line.strip()[4:].split("(")[0] for line in code.splitlines() if line.strip().startswith("def ")]


IS_PRIME = """
def f(n):
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True
"""


def test_closures_are_defined_in_source_order_in_the_scope_of_their_statement():
    code = show(IS_PRIME)
    assert _defs(code) == [
        "f", "if_body", "else_body", "extra_test", "loop_test", "if_body_1", "else_body_1", "get_state", "set_state",
        "loop_body", "if_body_2", "get_state_1", "set_state_1", "get_state_2", "set_state_2",
    ]
    else_body = code[code.index("def else_body():"):code.index("    def get_state_2")]
    # The loop's `return False` branch stays in the else branch, above the loop body, one level up.
    assert "retval_ = False\n            do_return = True" in else_body
    assert else_body.index("d = 2") < else_body.index("def loop_test") < else_body.index("def loop_body")
    assert else_body.index("ag__.while_stmt(") < else_body.index("def if_body_2")


def test_source_order_keeps_every_closure_before_its_use_and_in_its_scope():
    f, _ = _define(IS_PRIME)
    converted = ag.convert(f, always_converted=True)
    assert [converted(n) for n in range(30)] == [f(n) for n in range(30)]


def test_closures_using_loop_locals_stay_in_the_loop_body():
    code = show(
        """
        def f(xs):
            total = 0
            for x in xs:
                y = x * 2
                if y > 3:
                    total += y
            return total
        """
    )
    loop_body = code[code.index("def loop_body"):]
    assert "def if_body" in loop_body  # reads y, local to the loop body


def test_double_negation_from_continue_is_folded():
    source = """
        def f(rows):
            total = 0
            for row in rows:
                if not row:
                    continue
                total += len(row)
            return total
        """
    code = show(source)
    assert "ag__.not_(ag__.not_(" not in code
    assert "ag__.if_stmt(row, " in code
    f, _ = _define(source)
    rows = [[1], [], [2, 3], ()]
    assert ag.convert(f, always_converted=True)(rows) == f(rows)


def test_while_true_with_break_tests_only_the_flag():
    source = """
        def f(n):
            steps = 0
            while True:
                if n == 1:
                    break
                n = n // 2
                steps += 1
            return steps
        """
    code = show(source)
    assert "lambda: True" not in code
    assert "def extra_test():\n        return ag__.not_(break_)\n\n    def loop_test():\n        return True" in code
    f, _ = _define(source)
    assert ag.convert(f, always_converted=True)(64) == f(64) == 6


def test_nested_else_gets_no_second_undefined_placeholder():
    code = show(
        """
        def f(n):
            if n < 0:
                sign = -1
            elif n == 0:
                sign = 0
            else:
                sign = 1
            return sign
        """
    )
    assert code.count("ag__.Undefined('sign')") == 1


def test_lazy_assert_message_does_not_make_the_loop_variable_state():
    code = show(
        """
        def f(xs):
            for x in xs:
                assert x >= 0, 'negative value %r' % x
            return sum(xs)
        """
    )
    assert "def loop_body(x):" in code
    assert "ag__.for_stmt(xs, None, loop_body, ag__.no_state, ag__.no_state, ()" in code


def test_pop_nested_in_an_expression_goes_through_list_pop_and_makes_the_list_loop_state():
    source = """
        def f(xs):
            stack = list(xs)
            out = []
            while stack:
                out.append(stack.pop() * 2)
            return out
        """
    code = show(source)
    assert "stack, popped = ag__.list_pop(stack)\n        out = ag__.list_append(out, popped * 2)" in code
    assert "('out', 'stack')" in code
    assert "converted_call" not in code
    f, _ = _define(source)
    assert ag.convert(f, always_converted=True)([1, 2, 3]) == f([1, 2, 3]) == [6, 4, 2]


def test_pop_after_an_effect_in_the_same_statement_is_not_moved():
    code = show(
        """
        def f(xs, g):
            stack = list(xs)
            out = []
            while stack:
                out.append(g(stack) + stack.pop())
            return out
        """
    )
    assert "ag__.list_pop" not in code  # g(stack) runs before the pop: order kept


def test_nested_item_augmented_assignment_is_lowered_like_a_single_one():
    source = """
        def f(m):
            for i in range(len(m)):
                for j in range(len(m[i])):
                    m[i][j] *= i + j
            return m
        """
    code = show(source)
    assert "m = ag__.aug_setitem(m, i, '=', ag__.aug_setitem(m[i], j, '*=', i + j))" in code
    f, _ = _define(source)
    assert ag.convert(f, always_converted=True)([[1, 2], [3, 4]]) == f([[1, 2], [3, 4]]) == [[0, 2], [3, 8]]
    m = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(ag.convert(f, always_converted=True)(m.copy()), f(m.copy()))


def test_nested_item_update_with_a_call_in_an_index_is_left_as_written():
    code = show(
        """
        def f(m, g):
            m[g()][0] += 1
            return m
        """
    )
    assert "m[ag__.converted_call(g)][0] += 1" in code


def test_methods_of_literals_are_not_wrapped():
    code = show(
        """
        def f(parts, x):
            return ', '.join(parts) + f'{x}'.upper() + str([1, 2].count(x))
        """
    )
    assert "', '.join(parts)" in code
    assert "f'{x}'.upper()" in code
    assert "[1, 2].count(x)" in code
    assert "converted_call" not in code


def test_convert_rejects_what_is_not_a_function():
    with pytest.raises(TypeError, match=r"ag.convert expects a function, got int 3\. Pass the function itself"):
        ag.convert(3, always_converted=True)
    with pytest.raises(TypeError, match=r"got str 'f'"):
        ag.convert("f", always_converted=True)


def test_operator_calls_carry_the_line_of_their_statement():
    f, filename = _define(
        """
        def f(x):
            y = x
            if x > 0:
                y = x * 2
                y = y + 1
            else:
                y = -x
            return y
        """
    )
    graph = ag.function(f).get_concrete_function(rt.TensorSpec((), "float32")).graph
    (if_op,) = [op for op in graph.operations if op.type == "If"]
    assert if_op.location == f"{filename}:3"


def test_loop_operator_calls_carry_the_line_of_their_statement():
    f, filename = _define(
        """
        def f(n):
            i = 0
            while i < n:
                i += 1
                i = i * 1
            return i
        """
    )
    graph = ag.function(f).get_concrete_function(rt.TensorSpec((), "int32")).graph
    (while_op,) = [op for op in graph.operations if op.type == "While"]
    assert while_op.location == f"{filename}:3"


@pytest.mark.parametrize(
    "source, expected",
    [
        ("def f(n):\n    s = 0\n    for i, v in enumerate(range(n)):\n        s += i * v\n    return s\n", 30),
        ("def f(n):\n    s = 0\n    for a, b in zip(range(n), range(1, n + 1)):\n        s += a * b\n    return s\n",
         40),
        ("def f(n):\n    return len(range(1, n))\n", 4),
    ],
)
def test_len_enumerate_zip_dispatch_staged_iterables_to_the_graph(source, expected):
    f, _ = _define(source)
    assert f(5) == expected
    traced = ag.function(f, input_signature=[rt.TensorSpec((), "int32")])
    assert int(traced(np.int32(5))) == expected


def test_methods_of_builtin_types_resolve_at_conversion_time_unless_shadowed():
    code = show(
        """
        def f(xs, str):
            return dict.fromkeys(xs), list.copy(xs), str.join(xs)
        """
    )
    assert "(dict.fromkeys(xs), list.copy(xs), ag__.converted_call(str.join, xs))" in code


FIZZBUZZ = """
def f(n):
    fizz = buzz = 0
    for i in range(n):
        if i % 3 == 0:
            fizz += 1
        elif i % 5 == 0:
            buzz += 1
    return fizz, buzz
"""


def test_closures_of_a_statement_nested_in_a_branch_of_a_loop_go_before_that_loop():
    code = show(FIZZBUZZ)
    before_loop = code[:code.index("def loop_body")]
    # `fizz += 1` and `buzz += 1` use nothing local to the loop body: defined once, before it.
    assert "def if_body():\n        nonlocal fizz\n        fizz += 1" in before_loop
    assert "def if_body_1():\n        nonlocal buzz\n        buzz += 1" in before_loop
    # The elif reads `i`: its else branch stays in the loop body.
    assert "def else_body():" in code[code.index("def loop_body"):]
    f, _ = _define(FIZZBUZZ)
    assert ag.convert(f, always_converted=True)(31) == f(31)


def test_hoisting_goes_before_the_nearest_loop_only():
    code = show(
        """
        def f(rows):
            total = 0
            for row in rows:
                for x in row:
                    if x > 0:
                        total += 1
            return total
        """
    )
    outer_body = code[code.index("def loop_body(row)"):]
    # `total += 1` could run anywhere, but is defined before the inner loop, one level up.
    assert "def if_body():" in outer_body
    assert outer_body.index("def if_body():") < outer_body.index("def loop_body_1(x)")


def test_generated_closures_are_numbered_in_textual_order():
    code = show(FIZZBUZZ)
    for base in ("if_body", "else_body", "get_state", "set_state", "loop_body"):
        names = [name for name in _defs(code) if name == base or name.startswith(base + "_")]
        assert names == [base] + [f"{base}_{k}" for k in range(1, len(names))], (base, names)


def test_renumbering_avoids_the_users_names():
    source = """
        def f(x, if_body):
            if x > 0:
                y = if_body(x)
            else:
                y = -x
            return y
        """
    code = show(source)
    assert "def if_body_1():" in code
    assert "y = ag__.converted_call(if_body, x)" in code
    f, _ = _define(source)
    assert ag.convert(f, always_converted=True)(3, abs) == f(3, abs) == 3


def test_while_stmt_python_path_with_non_bool_conditions():
    from autograph.runtime import operators

    for start in (5, 5.0, [1, 2, 3], "abc"):
        state = {"v": start, "runs": 0}

        def test():
            return state["v"]

        def body():
            state["runs"] += 1
            state["v"] = state["v"][1:] if isinstance(state["v"], (list, str)) else state["v"] - 1

        operators.while_stmt(test, body, operators.no_state, operators.no_state, (), {})
        assert state["runs"] == (3 if isinstance(start, (list, str)) else 5)
    # A condition that changes kind between iterations (int, then bools, then None).
    values = iter([2, True, 1, None])
    seen = []
    operators.while_stmt(lambda: next(values), lambda: seen.append(1), operators.no_state, operators.no_state, (), {})
    assert len(seen) == 3


def test_aug_setitem_stores_with_equals():
    from autograph.runtime import operators

    row = [1, 2]
    m = [row, [3]]
    assert operators.aug_setitem(m, 0, "=", [9]) is m
    assert m == [[9], [3]]


STACK = """
def f(n):
    stack = [0]
    i = 0
    while i < n:
        stack.append(i * 2)
        i += 1
    out = 0
    while i > 0:
        out += stack.pop()
        i -= 1
    return out
"""


def test_a_list_appended_and_popped_in_tensor_loops_is_staged():
    code = show(STACK)
    assert "stack, popped = ag__.list_pop(stack)\n        out += popped" in code
    f, _ = _define(STACK)
    assert ag.convert(f, always_converted=True)(5) == f(5) == 20
    traced = ag.function(f, input_signature=[rt.TensorSpec((), "int32")])
    assert int(traced(np.int32(5))) == 20
    assert int(traced(np.int32(0))) == 0


def test_negated_identity_and_membership_tests_are_inverted():
    source = """
        def f(xs):
            kept = []
            for x in xs:
                if x is None:
                    continue
                if x in (0, 1):
                    continue
                kept.append(x)
            return kept
        """
    code = show(source)
    assert "ag__.if_stmt(x is not None, " in code
    assert "ag__.if_stmt(x not in (0, 1), " in code
    assert "ag__.not_(" not in code
    f, _ = _define(source)
    assert ag.convert(f, always_converted=True)([None, 0, 2, 1, 3]) == f([None, 0, 2, 1, 3]) == [2, 3]
