"""Each converter, tested with inline before/after source.

The code is converted from a string (no live namespace, as ``autograph show``
does), up to and including the named pass, and printed.
"""

import ast
import textwrap

import gast
import pytest

from autograph import api, compiling, pipeline
from autograph.pyct import context


def show(source, after=None):
    node = gast.ast_to_gast(ast.parse(textwrap.dedent(source)).body[0])
    converted = api.convert_node(node, "<test>", context.Options(), name="f", stop_after=after)
    return compiling.to_source(converted) + "\n"


def check(before, after, stop_after=None):
    assert show(before, stop_after) == textwrap.dedent(after).lstrip("\n")


def test_pipeline_is_declared_once_in_order():
    assert pipeline.PASS_NAMES == (
        "unsupported", "private_names", "raise_statements", "break_statements", "continue_statements", "walrus",
        "return_statements", "asserts", "comprehensions",
        "activity", "lists", "slices", "call_trees", "conditional_expressions", "logical_expressions",
        "analysis", "control_flow",
    )
    with pytest.raises(ValueError, match="unknown pass 'nope'"):
        show("def f(): pass", "nope")


def test_break_in_while_with_else():
    check(
        """
        def f(xs, target):
            i = 0
            while i < len(xs):
                if xs[i] == target:
                    break
                i += 1
            else:
                i = -1
            return i
        """,
        """
        def f(xs, target):
            i = 0
            break_ = False
            while i < len(xs):
                if xs[i] == target:
                    break_ = True
                else:
                    i += 1
            if not break_:
                i = -1
            return i
        """,
        "break_statements",
    )
    # The flag test is the loop's extra test, checked before `i < len(xs)`.
    converted = show(
        """
        def f(xs, target):
            i = 0
            while i < len(xs):
                if xs[i] == target:
                    break
                i += 1
            else:
                i = -1
            return i
        """
    )
    assert "def extra_test():\n        return ag__.not_(break_)\n\n    def loop_test():\n        return i < ag__.len(xs)" in converted
    assert "('break_', 'i'), {'extra_test': extra_test})" in converted


def test_loop_else_without_break_follows_the_loop():
    check(
        """
        def f(xs):
            for x in xs:
                pass
            else:
                x = 0
            return x
        """,
        """
        def f(xs):
            for x in xs:
                pass
            x = 0
            return x
        """,
        "break_statements",
    )


def test_break_in_inner_loop_else_breaks_the_outer_loop():
    check(
        """
        def f(a, b):
            for x in a:
                for y in b:
                    pass
                else:
                    break
            return 1
        """,
        """
        def f(a, b):
            break_ = False
            for x in a:
                for y in b:
                    pass
                break_ = True
            return 1
        """,
        "break_statements",
    )


def test_continue_moves_the_rest_into_the_other_branch():
    check(
        """
        def f(xs):
            total = 0
            for x in xs:
                if x < 0:
                    continue
                total += x
            return total
        """,
        """
        def f(xs):
            total = 0
            for x in xs:
                if not x < 0:
                    total += x
            return total
        """,
        "continue_statements",
    )


def test_continue_flag_when_the_rest_cannot_move():
    check(
        """
        def f(xs):
            total = 0
            count = 0
            for x in xs:
                if x > 0:
                    if x > 10:
                        continue
                    count += 1
                total += x
            return total, count
        """,
        """
        def f(xs):
            total = 0
            count = 0
            for x in xs:
                continue_ = False
                if x > 0:
                    if x > 10:
                        continue_ = True
                    else:
                        count += 1
                if not continue_:
                    total += x
            return (total, count)
        """,
        "continue_statements",
    )


def test_return_in_if_moves_the_rest_into_else():
    check(
        """
        def f(x):
            if x < 0:
                return -x
            return x
        """,
        """
        def f(x):
            if x < 0:
                retval_ = -x
            else:
                retval_ = x
            return retval_
        """,
        "return_statements",
    )


def test_return_in_loop_uses_a_flag():
    check(
        """
        def f(xs):
            for x in xs:
                if x > 0:
                    return x
            return -1
        """,
        """
        def f(xs):
            do_return = False
            retval_ = ag__.UndefinedReturnValue()
            for x in xs:
                if x > 0:
                    retval_ = x
                    do_return = True
            if not do_return:
                retval_ = -1
            return retval_
        """,
        "return_statements",
    )


def test_bare_return_and_falling_off_the_end():
    check(
        """
        def f(x):
            if x > 0:
                print(x)
                return
            print(-x)
        """,
        """
        def f(x):
            retval_ = None
            if x > 0:
                print(x)
                retval_ = None
            else:
                print(-x)
            return retval_
        """,
        "return_statements",
    )


def test_returns_not_nested_are_left_alone():
    source = """
    def f(x):
        y = x + 1
        return y
    """
    check(source, source, "return_statements")


def test_dead_code_after_a_jump_is_kept_guarded():
    check(
        """
        def f(xs):
            for x in xs:
                break
                y = x
            return 1
        """,
        """
        def f(xs):
            break_ = False
            for x in xs:
                break_ = True
                if not break_:
                    y = x
            return 1
        """,
        "break_statements",
    )


def test_if_else_becomes_if_stmt():
    check(
        """
        def f(x):
            if x > 0:
                y = x
            else:
                y = -x
            return y
        """,
        """
        def f(x):

            def if_body():
                nonlocal y
                y = x

            def else_body():
                nonlocal y
                y = -x

            def get_state():
                return (y,)

            def set_state(vars_):
                nonlocal y
                y, = vars_
            y = ag__.Undefined('y')
            ag__.if_stmt(x > 0, if_body, else_body, get_state, set_state, ('y',), 1)
            return y
        """,
    )


def test_if_without_state_or_else():
    check(
        """
        def f(x):
            if x:
                tmp = x * 2
                print(tmp)
            return x
        """,
        """
        def f(x):

            def if_body():
                tmp = x * 2
                ag__.print(tmp)
            ag__.if_stmt(x, if_body, ag__.no_op, ag__.no_state, ag__.no_state, (), 0)
            return x
        """,
    )


def test_while_loop_state_is_loop_carried_variables():
    check(
        """
        def f(n):
            i = 0
            s = 0
            while i < n:
                s += i
                i += 1
            return s
        """,
        """
        def f(n):
            i = 0
            s = 0

            def loop_test():
                return i < n

            def loop_body():
                nonlocal i, s
                s += i
                i += 1

            def get_state():
                return (i, s)

            def set_state(vars_):
                nonlocal i, s
                i, s = vars_
            ag__.while_stmt(loop_test, loop_body, get_state, set_state, ('i', 's'), {})
            return s
        """,
    )


def test_for_target_as_parameter_and_attribute_state():
    check(
        """
        def f(self, n):
            for i in range(n):
                self.total += i
        """,
        """
        def f(self, n):

            def loop_body(i):
                self.total += i

            def get_state():
                return (ag__.getattr_(self, 'total'),)

            def set_state(vars_):
                ag__.setattr_(self, 'total', vars_[0])
            ag__.for_stmt(ag__.range(n), None, loop_body, get_state, set_state, ('self.total',), {'iterate_names': 'i'})
        """,
    )


def test_for_target_live_after_the_loop_uses_itr():
    check(
        """
        def f(xs):
            for x in xs:
                pass
            return x
        """,
        """
        def f(xs):
            x = ag__.Undefined('x')

            def loop_body(itr):
                nonlocal x
                x = itr
                pass

            def get_state():
                return (x,)

            def set_state(vars_):
                nonlocal x
                x, = vars_
            ag__.for_stmt(xs, None, loop_body, get_state, set_state, ('x',), {'iterate_names': 'x'})
            return ag__.defined(x)
        """,
    )


def test_loop_invariant_closures_are_hoisted_in_source_order_just_above_the_loop_body():
    check(
        """
        def f(n):
            steps = 0
            while n != 1:
                if n % 2 == 0:
                    n = n // 2
                else:
                    n = 3 * n + 1
                steps += 1
            return steps
        """,
        """
        def f(n):
            steps = 0

            def loop_test():
                return n != 1

            def if_body():
                nonlocal n
                n = n // 2

            def else_body():
                nonlocal n
                n = 3 * n + 1

            def get_state():
                return (n,)

            def set_state(vars_):
                nonlocal n
                n, = vars_

            def loop_body():
                nonlocal n, steps
                ag__.if_stmt(n % 2 == 0, if_body, else_body, get_state, set_state, ('n',), 1)
                steps += 1

            def get_state_1():
                return (n, steps)

            def set_state_1(vars_):
                nonlocal n, steps
                n, steps = vars_
            ag__.while_stmt(loop_test, loop_body, get_state_1, set_state_1, ('n', 'steps'), {})
            return steps
        """,
    )


def test_for_loop_with_break_gets_an_extra_test():
    check(
        """
        def f(xs):
            for x in xs:
                if x:
                    break
        """,
        """
        def f(xs):
            break_ = False

            def extra_test():
                return ag__.not_(break_)

            def if_body():
                nonlocal break_
                break_ = True

            def get_state():
                return (break_,)

            def set_state(vars_):
                nonlocal break_
                break_, = vars_

            def loop_body(x):
                nonlocal break_
                ag__.if_stmt(x, if_body, ag__.no_op, get_state, set_state, ('break_',), 1)
            ag__.for_stmt(xs, extra_test, loop_body, get_state, set_state, ('break_',), {'iterate_names': 'x'})
        """,
    )


def test_read_before_write_in_branch_is_state_but_not_an_output():
    # x is dead after the if, so it is no output (nouts is 0); it is state so
    # that a traced else branch starts from the x the if started from.
    check(
        """
        def f(x, c):
            if c:
                print(x)
                x = 2
            return c
        """,
        """
        def f(x, c):

            def if_body():
                nonlocal x
                ag__.print(x)
                x = 2

            def get_state():
                return (x,)

            def set_state(vars_):
                nonlocal x
                x, = vars_
            ag__.if_stmt(c, if_body, ag__.no_op, get_state, set_state, ('x',), 0)
            return c
        """,
    )


def test_user_nonlocal_is_hoisted_and_repeated():
    check(
        """
        def f(c):
            if c:
                nonlocal count
                count += 1
        """,
        """
        def f(c):
            nonlocal count

            def if_body():
                nonlocal count
                count += 1

            def get_state():
                return (count,)

            def set_state(vars_):
                nonlocal count
                count, = vars_
            ag__.if_stmt(c, if_body, ag__.no_op, get_state, set_state, ('count',), 1)
        """,
    )


def test_logical_expressions_keep_short_circuit():
    check(
        """
        def f(a, b, c):
            return a and not b or c
        """,
        """
        def f(a, b, c):
            return ag__.or_(ag__.and_(a, lambda: ag__.not_(b)), lambda: c)
        """,
    )


def test_walrus_in_the_first_operand_binds_in_place():
    source = """
    def f(a):
        return (b := a) and b
    """
    check(source, "def f(a):\n    return ag__.and_((b := a), lambda: b)\n")


def test_conditional_expression():
    check(
        """
        def f(x):
            return x if x > 0 else -x
        """,
        """
        def f(x):
            return ag__.if_exp(x > 0, lambda: x, lambda: -x, 'x > 0')
        """,
    )


def test_asserts():
    check(
        """
        def f(x, ys):
            assert x > 0, f'bad {x}'
            assert ys
        """,
        """
        def f(x, ys):
            ag__.assert_(x > 0, lambda: f'bad {x}')
            ag__.assert_(ys)
        """,
        "asserts",
    )


def test_lists_changed_in_control_flow_only_for_local_names():
    # out is appended to in a loop, so its append before the loop is lowered
    # too; kept, only changed in straight-line code, keeps its method call.
    check(
        """
        def f(xs, self):
            out = []
            kept = []
            out.append(0)
            kept.append(0)
            for x in xs:
                out.append(x)
                last = out.pop()
                out.pop(0)
                self.items.append(x)
                GLOBAL_LIST.append(x)
            return out
        """,
        """
        def f(xs, self):
            out = []
            kept = []
            out = ag__.list_append(out, 0)
            kept.append(0)
            for x in xs:
                out = ag__.list_append(out, x)
                out, last = ag__.list_pop(out)
                out = ag__.list_pop(out, 0)[0]
                self.items.append(x)
                GLOBAL_LIST.append(x)
            return out
        """,
        "lists",
    )


def test_augmented_subscript_assignment():
    check(
        """
        def f(counts, k, self):
            counts[k] += 1
            counts[1:2] += [3]
            self.c[k] -= 1
            GLOBAL[k] *= 2
        """,
        """
        def f(counts, k, self):
            counts = ag__.aug_setitem(counts, k, '+=', 1)
            counts = ag__.aug_setitem(counts, ag__.slice(1, 2, None), '+=', [3])
            self.c[k] -= 1
            GLOBAL[k] *= 2
        """,
        "slices",
    )


def test_call_trees():
    check(
        """
        def f(x, *args, **kw):
            a = helper(x, *args, k=1, **kw)
            n = len(x) + max(x)
            print(n)
            return obj.method(x)(2)
        """,
        """
        def f(x, *args, **kw):
            a = ag__.converted_call(helper, x, *args, k=1, **kw)
            n = ag__.len(x) + ag__.max(x)
            ag__.print(n)
            return ag__.converted_call(ag__.converted_call(obj.method, x), 2)
        """,
        "call_trees",
    )


def test_call_trees_do_not_resolve_shadowed_builtins():
    check(
        """
        def f(x, len):
            print = x
            return len(x), print(x), [range(i) for range in x]
        """,
        """
        def f(x, len):
            print = x
            return (ag__.converted_call(len, x), ag__.converted_call(print, x), ag__.list_comp(x, lambda range: ag__.converted_call(range, i), None))
        """,
        "call_trees",
    )


def test_non_recursive_option_leaves_calls_alone():
    node = gast.ast_to_gast(ast.parse("def f(x):\n    return g(len(x))\n").body[0])
    converted = api.convert_node(node, "<test>", context.Options(recursive=False), name="f")
    assert compiling.to_source(converted) == "def f(x):\n    return g(len(x))"


def test_zero_argument_super_is_made_explicit():
    check(
        """
        def f(self, x):
            return super().f(x)
        """,
        """
        def f(self, x):
            return super(__class__, self).f(x)
        """,
        "unsupported",
    )


def test_nested_functions_are_converted_inline():
    check(
        """
        def f(xs):
            def g(x):
                if x:
                    return 1
                return 2
            return g(xs)
        """,
        """
        def f(xs):

            def g(x):

                def if_body():
                    nonlocal retval_
                    retval_ = 1

                def else_body():
                    nonlocal retval_
                    retval_ = 2

                def get_state():
                    return (retval_,)

                def set_state(vars_):
                    nonlocal retval_
                    retval_, = vars_
                retval_ = ag__.Undefined('retval_')
                ag__.if_stmt(x, if_body, else_body, get_state, set_state, ('retval_',), 1, (('return_value', 'retval_'),))
                return retval_
            return ag__.converted_call(g, xs)
        """,
    )


def test_nested_generators_stay_as_written():
    check(
        """
        def f(n):
            def gen():
                for i in range(n):
                    if i:
                        yield i
            return sum(gen())
        """,
        """
        def f(n):

            def gen():
                for i in range(n):
                    if i:
                        yield i
            return ag__.sum(ag__.converted_call(gen))
        """,
    )


def _helper_for_ternary(x):
    return x


def test_a_ternary_s_condition_text_is_as_written():
    def f(x, xs):
        return 1 if len(xs) > _helper_for_ternary(x) else 2

    code = api.to_code(f)
    assert "'len(xs) > _helper_for_ternary(x)'" in code, code
