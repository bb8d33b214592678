"""Python paths of the operators in ``autograph.runtime.operators``."""

import functools
import re
import sys

import pytest

import autograph as ag
import autograph.runtime.operators as ops
from autograph.runtime.operators import calls


class _Cell:
    """A variable the hand-written bodies below read and write."""

    def __init__(self, value):
        self.value = value


def test_if_stmt_runs_one_branch():
    log = []
    ops.if_stmt(True, lambda: log.append("then"), lambda: log.append("else"), ops.no_state, ops.no_state, (), 0)
    ops.if_stmt(0, lambda: log.append("then"), lambda: log.append("else"), ops.no_state, ops.no_state, (), 0)
    ops.if_stmt([1], lambda: log.append("then"), ops.no_op, ops.no_state, ops.no_state, (), 0)
    assert log == ["then", "else", "then"]


def test_if_stmt_uses_truth_value_once():
    class Truthy:
        calls = 0

        def __bool__(self):
            Truthy.calls += 1
            return True

    ops.if_stmt(Truthy(), ops.no_op, ops.no_op, ops.no_state, ops.no_state, (), 0)
    assert Truthy.calls == 1


def test_while_stmt():
    i = _Cell(0)
    tests = []

    def test():
        tests.append(i.value)
        return i.value < 3

    def body():
        i.value += 1

    ops.while_stmt(test, body, ops.no_state, ops.no_state, ("i",), {})
    assert i.value == 3 and tests == [0, 1, 2, 3]


def test_for_stmt_and_extra_test_checked_before_fetching_the_next_item():
    seen = []
    stop = _Cell(False)

    def body(item):
        seen.append(item)
        if item == 2:
            stop.value = True

    iterator = iter([1, 2, 3, 4])
    ops.for_stmt(iterator, lambda: not stop.value, body, ops.no_state, ops.no_state, (), {})
    assert seen == [1, 2]
    # The original `for ... break` would leave 3 in the iterator: so must we.
    assert next(iterator) == 3


def test_for_stmt_extra_test_false_from_the_start():
    seen = []
    ops.for_stmt([1, 2], lambda: False, seen.append, ops.no_state, ops.no_state, (), {})
    ops.for_stmt([1, 2], None, seen.append, ops.no_state, ops.no_state, (), {})
    assert seen == [1, 2]


def test_and_or_preserve_values_and_short_circuit():
    log = []

    def operand(value):
        def get():
            log.append(value)
            return value

        return get

    assert ops.and_(0, operand(1)) == 0
    assert ops.and_(2, operand("")) == ""
    assert ops.or_([], operand(3)) == 3
    assert ops.or_(4, operand(5)) == 4
    assert ops.and_(True, operand(6)) == 6 and ops.or_(False, operand(7)) == 7
    assert ops.and_(False, operand(8)) is False and ops.or_(True, operand(9)) is True
    assert log == ["", 3, 6, 7]
    assert ops.not_(0) is True and ops.not_([1]) is False and ops.not_(True) is False


def test_if_exp_is_lazy():
    assert ops.if_exp(1, lambda: "a", lambda: 1 / 0, "c") == "a"
    assert ops.if_exp([], lambda: 1 / 0, lambda: "b", "c") == "b"


def test_assert_():
    ops.assert_(1 == 1, lambda: 1 / 0)
    with pytest.raises(AssertionError) as info:
        ops.assert_(1 == 2, lambda: "bad value")
    assert info.value.args == ("bad value",)
    with pytest.raises(AssertionError) as info:
        ops.assert_(False)
    assert info.value.args == ()


def test_undefined_raises_on_any_use_naming_the_variable():
    y = ops.Undefined("y")
    assert repr(y) == "Undefined('y')"
    assert ops.is_undefined(y) and not ops.is_undefined(None)
    pattern = r"local variable 'y' is not defined on every path reaching its use at .*test_pipeline_operators\.py:\d+"
    for use in (lambda: y + 1, lambda: 1 - y, lambda: bool(y), lambda: y.attr, lambda: y(), lambda: str(y),
                lambda: y[0], lambda: len(y), lambda: iter(y), lambda: y < 1, lambda: hash(y), lambda: f"{y}"):
        with pytest.raises(UnboundLocalError, match=pattern):
            use()
    with pytest.raises(UnboundLocalError, match="Assign 'y' a value before"):
        ops.defined(y)
    assert ops.defined(3) == 3


def test_undefined_return_value_is_a_recognizable_placeholder():
    placeholder = ops.UndefinedReturnValue()
    assert repr(placeholder) == "UndefinedReturnValue()"
    assert type(placeholder).__name__ == "UndefinedReturnValue"


def test_list_helpers_and_aug_setitem():
    xs = [1]
    assert ops.list_append(xs, 2) is xs and xs == [1, 2]
    assert ops.list_pop(xs) == (xs, 2) and xs == [1]
    ys = [5, 6, 7]
    assert ops.list_pop(ys, 0) == (ys, 5)
    counts = {"a": 1}
    assert ops.aug_setitem(counts, "a", "+=", 2) is counts and counts == {"a": 3}
    inner = [1]
    nested = [inner]
    ops.aug_setitem(nested, 0, "+=", [2])
    assert nested[0] is inner and inner == [1, 2]  # in place, as Python's `+=`
    grid = [3, 4]
    for op, expected in [("-=", 1), ("*=", 3), ("//=", 1), ("**=", 1), ("|=", 3), ("^=", 0)]:
        ops.aug_setitem(grid, 0, op, 3 if op != "**=" else 5)
    assert grid[0] == 0


def test_builtins_python_paths():
    assert ops.range(3) == range(3)
    assert ops.len([1, 2]) == 2
    assert ops.int("7") == 7 and ops.float("1.5") == 1.5 and ops.abs(-2) == 2
    assert list(ops.enumerate("ab", 1)) == [(1, "a"), (2, "b")]
    assert list(ops.zip([1], [2])) == [(1, 2)]


def test_builtins_print(capsys):
    ops.print("a", 1, sep="-")
    assert capsys.readouterr().out == "a-1\n"


def _user_helper(x):
    return x * 2 if x > 0 else -x


def test_converted_call_converts_user_functions_once():
    assert ops.converted_call(_user_helper, 3) == 6
    converted = calls._converted(_user_helper)
    assert converted is not _user_helper
    assert calls.is_converted(converted)
    assert calls._converted(_user_helper) is converted
    assert "ag__.if_exp" in ag.to_code(_user_helper)


def test_converted_call_passes_through_builtins_and_libraries():
    import math

    assert ops.converted_call(max, [1, 3]) == 3
    assert ops.converted_call(math.sqrt, 4.0) == 2.0
    assert ops.converted_call(str.upper, "a") == "A"
    assert ops.converted_call("a,b".split, ",") == ["a", "b"]
    assert ops.converted_call(dict, a=1) == {"a": 1}
    assert calls._converted(pytest.raises) is pytest.raises


def test_converted_call_methods_partials_and_callable_objects():
    class Thing:
        def __init__(self):
            self.total = 0

        def add(self, n):
            for i in range(n):
                self.total += i
            return self.total

        def __call__(self, x):
            return x if x else -1

    thing = Thing()
    assert ops.converted_call(thing.add, 4) == 6 and thing.total == 6
    assert ops.converted_call(thing, 0) == -1
    assert ops.converted_call(functools.partial(_user_helper, 5)) == 10
    assert calls.cached_conversion(Thing.add) is not None
    assert calls.cached_conversion(Thing.__call__) is not None


def test_converted_call_respects_do_not_convert():
    @ag.do_not_convert
    def plain(x):
        return x + 1

    assert ops.converted_call(plain, 1) == 2
    assert calls.cached_conversion(plain) is None
    assert id(plain.__code__) in calls._passthrough_codes


def test_converted_call_runs_generator_functions_as_they_are():
    def gen(n):
        for i in range(n):
            yield i

    assert list(ops.converted_call(gen, 3)) == [0, 1, 2]


def test_is_skipped_module():
    assert calls.is_skipped_module("numpy.linalg")
    assert calls.is_skipped_module("os.path")
    assert calls.is_skipped_module("autograph.runtime.ops")
    assert not calls.is_skipped_module("mypackage.numpy")
    assert not calls.is_skipped_module(None)


def test_operators_module_exports_the_documented_names():
    doc = ops.__doc__
    for name in ("if_stmt", "while_stmt", "for_stmt", "if_exp", "and_", "or_", "not_", "assert_", "Undefined",
                 "defined", "list_append", "list_pop", "aug_setitem", "converted_call", "no_state", "no_op"):
        assert callable(getattr(ops, name)), name
        assert re.search(rf"\b{name}\b", doc), name
    for name in ("range", "len", "print", "int", "float", "abs", "enumerate", "zip"):
        assert getattr(ops, name) is not getattr(sys.modules["builtins"], name)
