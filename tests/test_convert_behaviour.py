"""Converted code behaves like the original, through the public API only.

Part 1 runs every function of the behaviour corpus (tests/corpus_*.py) on
each of its argument lists, unconverted and through ``ag.convert``, and
compares everything a caller can observe: the return value or the raised
exception (type and message), printed output, mutated arguments and
side effects on module state.  It also checks that the converted function
really runs generated code, and that it warns about nothing.

Part 2 covers the ways into ``ag.convert`` (methods bound and unbound,
closures, decorator forms, exec'd code in linecache) and tracebacks.

Part 3 covers the error paths: unsupported syntax, functions without
source, variables undefined on some path.
"""

from __future__ import annotations

import ast
import copy
import inspect
import linecache
import os
import re
import sys
import textwrap
import traceback
import warnings

import pytest

import autograph as ag
import corpus_errors
import corpus_loops
import corpus_numeric
import corpus_python
import corpus_syntax
from corpus_registry import CASES, Call, run, same

# Imported for their @check registrations into CASES.
_CORPUS_MODULES = (corpus_loops, corpus_python, corpus_numeric, corpus_syntax)
assert len(CASES) >= 100, len(CASES)

PARAMS = [
    pytest.param(case, spec, id=f"{case.name.split('.', 1)[1]}-{i}")
    for case in CASES
    for i, spec in enumerate(case.calls)
]


def _has_control_flow(fn) -> bool:
    """Whether fn's own body (not nested defs) has if/while/for statements."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn.__code__)))
    todo = list(tree.body[0].body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.If, ast.While, ast.For)):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        todo.extend(ast.iter_child_nodes(node))
    return False


class _CodeRecorder:
    """Records the code objects of Python frames entered while active."""

    def __init__(self):
        self.codes = set()

    def _profile(self, frame, event, arg):
        if event == "call":
            self.codes.add(frame.f_code)

    def __enter__(self):
        self._previous = sys.getprofile()
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc):
        sys.setprofile(self._previous)


def _describe(outcome) -> str:
    return (
        f"{outcome.kind} {outcome.value!r}; stdout={outcome.stdout!r}; "
        f"args after={outcome.args!r} kwargs after={outcome.kwargs!r}; log={outcome.log!r}"
    )


def assert_same_outcome(original, converted, what: str) -> None:
    assert original.kind == converted.kind and same(original.value, converted.value), (
        f"{what}: results differ\n  original:  {_describe(original)}\n"
        f"  converted: {_describe(converted)}"
    )
    assert original.stdout == converted.stdout, (
        f"{what}: printed output differs\n  original:  {original.stdout!r}\n"
        f"  converted: {converted.stdout!r}"
    )
    assert same(original.args, converted.args) and same(original.kwargs, converted.kwargs), (
        f"{what}: arguments mutated differently\n  original:  {_describe(original)}\n"
        f"  converted: {_describe(converted)}"
    )
    assert original.log == converted.log, (
        f"{what}: side effects differ\n  original:  {original.log!r}\n"
        f"  converted: {converted.log!r}"
    )


# ---------------------------------------------------------------- part 1


@pytest.mark.parametrize("case, spec", PARAMS)
def test_converted_matches_original(case, spec):
    original = run(case.target(), spec)

    target = case.target()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        converted_fn = ag.convert(target, always_converted=True)
        with _CodeRecorder() as recorder:
            converted = run(converted_fn, spec)

    assert_same_outcome(original, converted, f"{case.name}{spec!r}")
    ours = [w for w in caught if issubclass(w.category, ag.AutoGraphWarning)]
    assert not ours, f"{case.name}: unexpected warnings: {[str(w.message) for w in ours]}"
    if "ag__" in ag.to_code(target):
        assert target.__code__ not in recorder.codes, (
            f"{case.name}: calling the converted function ran the original code"
        )


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_control_flow_is_converted(case):
    target = case.target()
    code = ag.to_code(target)
    # The function's own code (a decorator's wrapper keeps the wrapped name).
    assert isinstance(code, str) and f"def {target.__code__.co_name}(" in code, code
    if _has_control_flow(target):
        assert "ag__." in code, f"{case.name}: control flow left unconverted:\n{code}"


# ---------------------------------------------------------------- part 2


def _run_both(original_fn, converted_fn, *args):
    return run(original_fn, Call(args, {})), run(converted_fn, Call(args, {}))


def test_unbound_method_gets_self_explicitly():
    converted = ag.convert(corpus_python.Accumulator.add_all, always_converted=True)
    for xs in ([1, 2, 3], [-1, 5], []):
        plain, conv = corpus_python.Accumulator(), corpus_python.Accumulator()
        expected = corpus_python.Accumulator.add_all(plain, list(xs))
        assert converted(conv, list(xs)) == expected
        assert vars(conv) == vars(plain)


def test_bound_method_updates_its_own_instance():
    plain, conv = corpus_python.Accumulator(), corpus_python.Accumulator()
    converted = ag.convert(conv.add_all, always_converted=True)
    for xs in ([4, -2, 6], [1], []):
        assert converted(list(xs)) == plain.add_all(list(xs))
    assert vars(conv) == vars(plain)
    assert conv.history == [4, 10, 11]


def test_closure_sees_live_cells():
    plain = corpus_python.make_accumulator(0)
    conv = ag.convert(corpus_python.make_accumulator(0), always_converted=True)
    for xs in ([1, 2], [3, None, 100], [4]):
        assert conv(list(xs)) == plain(list(xs))
    assert conv([]) == 10


def test_closure_over_rebound_outer_variable():
    def outer():
        factor = 2

        def inner(xs):
            out = []
            for x in xs:
                out.append(x * factor)
            return out

        converted = ag.convert(inner, always_converted=True)
        first = converted([1, 2])
        factor = 5
        return first, converted([1, 2])

    assert outer() == ([2, 4], [5, 10])


def test_decorator_forms():
    @ag.convert(always_converted=True)
    def plain(n):
        total = 0
        for i in range(n):
            if i % 2:
                continue
            total += i
        return total

    @ag.convert(recursive=True, always_converted=True)
    def with_options(n):
        return corpus_python.factorial(n) if n >= 0 else None

    assert [plain(n) for n in range(6)] == [0, 0, 0, 2, 2, 6]
    assert [with_options(n) for n in (-1, 0, 5)] == [None, 1, 120]


def test_converting_twice_gives_the_same_code():
    fn = corpus_loops.primes_below
    first = ag.to_code(fn)
    ag.convert(fn, always_converted=True)
    assert ag.to_code(fn) == first
    assert ag.convert(fn, always_converted=True)(20) == ag.convert(fn, always_converted=True)(20) == fn(20)


def test_to_code_is_deterministic_and_readable():
    code = ag.to_code(corpus_loops.find_index)
    assert code == ag.to_code(corpus_loops.find_index)
    assert "try:" not in code, code
    assert "def find_index(" in code
    ast.parse(code)  # printable source is valid Python


def test_do_not_convert_is_respected():
    @ag.do_not_convert
    def helper(xs):
        out = []
        for x in xs:
            out.append(x + 1)
        return out

    def caller(xs):
        if xs:
            return helper(xs)
        return []

    with _CodeRecorder() as recorder:
        assert ag.convert(caller, always_converted=True)([1, 2]) == [2, 3]
    inner = inspect.unwrap(helper)
    assert inner.__code__ in recorder.codes, "do_not_convert function was not run as is"


def test_exec_code_registered_in_linecache():
    source = textwrap.dedent(
        """
        def clamp_all(xs, lo, hi):
            out = []
            for x in xs:
                if x < lo:
                    x = lo
                elif x > hi:
                    break
                out.append(x)
            return out
        """
    )
    filename = "<autograph-test-exec-clamp>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {}
    exec(compile(source, filename, "exec"), namespace)
    fn = namespace["clamp_all"]
    converted = ag.convert(fn, always_converted=True)
    for args in (([1, -5, 3, 9, 2], 0, 4), ([], 0, 1)):
        assert converted(*args) == fn(*args)
    assert "ag__" in ag.to_code(fn)


def test_lambda_with_recoverable_source():
    pick = lambda x: "big" if x > 10 else "small"  # noqa: E731
    converted = ag.convert(pick, always_converted=True)
    assert [converted(v) for v in (3, 30)] == ["small", "big"]


def test_traceback_points_at_user_line():
    fn = corpus_loops.raise_in_loop
    lines, start = inspect.getsourcelines(fn)
    raise_line = start + next(i for i, t in enumerate(lines) if "raise ValueError" in t)
    with pytest.raises(ValueError, match="negative entry -2") as info:
        ag.convert(fn, always_converted=True)([1, -2, 3])
    frames = traceback.extract_tb(info.value.__traceback__)
    user = [f for f in frames if f.filename == inspect.getsourcefile(fn)]
    assert user, [f"{f.filename}:{f.lineno}" for f in frames]
    assert user[-1].lineno == raise_line, f"{user[-1].filename}:{user[-1].lineno}"
    assert frames[-1].filename == inspect.getsourcefile(fn), (
        "the innermost frame is not the user's: "
        + ", ".join(f"{f.filename}:{f.lineno}" for f in frames)
    )


def test_assert_failure_keeps_message_and_line():
    fn = corpus_python.assert_positive
    lines, start = inspect.getsourcelines(fn)
    assert_line = start + next(i for i, t in enumerate(lines) if "assert n >= 0" in t)
    with pytest.raises(AssertionError, match="n must be non-negative, got -3") as info:
        ag.convert(fn, always_converted=True)(-3)
    frames = [
        f for f in traceback.extract_tb(info.value.__traceback__)
        if f.filename == inspect.getsourcefile(fn)
    ]
    assert frames and frames[-1].lineno == assert_line


def test_classmethod_and_staticmethod():
    scale_all = ag.convert(corpus_python.Scaler.scale_all, always_converted=True)
    first_negative = ag.convert(corpus_python.Scaler.first_negative, always_converted=True)
    assert scale_all([1, 2]) == corpus_python.Scaler.scale_all([1, 2]) == [3, 6]
    assert first_negative([1, -2, -3]) == -2
    assert first_negative([]) is None


def test_converting_a_converted_function():
    @ag.convert(always_converted=True)
    def countdown(n):
        out = []
        while n > 0:
            out.append(n)
            n -= 2
        return out

    assert ag.convert(countdown, always_converted=True)(5) == countdown(5) == [5, 3, 1]
    code = ag.to_code(countdown)
    assert "@ag.convert(always_converted=True)" not in code and "ag__.while_stmt" in code, code


def test_recursion_keeps_reasonable_depth():
    # Converted recursion costs a few frames per level (the converted call,
    # the if_stmt, the branch body); it must still reach an eighth of the
    # recursion limit, where the original reaches nearly all of it.
    depth = sys.getrecursionlimit() // 8
    assert ag.convert(corpus_python.factorial, always_converted=True)(depth) == corpus_python.factorial(depth)


# ---------------------------------------------------------------- part 3


def _location(fn, tag) -> str:
    """A regex matching ``file:line`` of the tagged line of fn."""
    filename, line = corpus_errors.tagged_line(fn, tag)
    return rf"{_basename(filename)}:{line}\b"


def _basename(path: str) -> str:
    return re.escape(os.path.basename(path))


@pytest.mark.parametrize(
    "fn, tag, construct",
    [
        pytest.param(corpus_errors.uses_yield, "yield", "yield", id="yield"),
        pytest.param(corpus_errors.uses_yield_from, "yield_from", "yield", id="yield-from"),
        pytest.param(corpus_errors.is_async, "async_def", "async", id="async-def"),
        pytest.param(corpus_errors.rebinds_global, "global", "global", id="global"),
    ],
)
@pytest.mark.parametrize("entry", ["convert-and-call", "to_code"])
def test_unsupported_construct_is_a_conversion_error(fn, tag, construct, entry):
    pattern = rf"(?s)(?=.*\b{construct}\b)(?=.*{_location(fn, tag)})"
    with pytest.raises(ag.ConversionError, match=pattern) as info:
        if entry == "to_code":
            ag.to_code(fn)
        else:
            ag.convert(fn, always_converted=True)(3)
    message = str(info.value)
    assert fn.__name__ in message or construct in message
    assert isinstance(info.value, ag.AutoGraphError)


def test_conversion_error_raised_by_decorator_or_first_call_not_later():
    converted = None
    try:
        converted = ag.convert(corpus_errors.rebinds_global, always_converted=True)
    except ag.ConversionError:
        return
    before = corpus_errors.COUNTER
    with pytest.raises(ag.ConversionError):
        converted(2)
    assert corpus_errors.COUNTER == before, "the unsupported code ran before the error"


def _exec_without_source(src: str, name: str):
    namespace = {}
    exec(compile(textwrap.dedent(src), "<no-source-here>", "exec"), namespace)
    return namespace[name]


def test_function_without_source_runs_unconverted_with_one_warning():
    fn = _exec_without_source(
        """
        def hidden_total(n):
            total = 0
            for i in range(n):
                total += i
            return total
        """,
        "hidden_total",
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        converted = ag.convert(fn, always_converted=True)
        results = [converted(n) for n in (0, 4, 10)]
    assert results == [fn(0), fn(4), fn(10)]
    ours = [w for w in caught if issubclass(w.category, ag.AutoGraphWarning)]
    assert len(ours) == 1, [str(w.message) for w in ours]
    message = str(ours[0].message)
    assert "hidden_total" in message, message
    assert "unconverted" in message or "as is" in message or "original" in message, message


def test_builtin_runs_unconverted_with_one_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        converted = ag.convert(sorted, always_converted=True)
        assert converted([3, 1, 2]) == [1, 2, 3]
        assert converted([2, 1], reverse=True) == [2, 1]
    ours = [w for w in caught if issubclass(w.category, ag.AutoGraphWarning)]
    assert len(ours) == 1, [str(w.message) for w in ours]
    assert "sorted" in str(ours[0].message)


def test_calling_a_function_without_source_from_converted_code_still_works():
    hidden = _exec_without_source(
        """
        def hidden_double(xs):
            return [x * 2 for x in xs]
        """,
        "hidden_double",
    )

    def make_caller():
        def caller(xs):
            out = []
            for chunk in (xs, xs[::-1]):
                out.extend(hidden(chunk))
            return out

        return caller

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ag.AutoGraphWarning)
        assert ag.convert(make_caller(), always_converted=True)([1, 2]) == make_caller()([1, 2]) == [2, 4, 4, 2]


@pytest.mark.parametrize(
    "fn, args, ok_args, name, tag",
    [
        pytest.param(
            corpus_errors.maybe_defined, (False,), (True,), "result_value",
            "undefined_after_if", id="if",
        ),
        pytest.param(
            corpus_errors.defined_in_loop, (0,), (3,), "last_item",
            "undefined_after_loop", id="for",
        ),
        pytest.param(
            corpus_errors.defined_in_while, (0,), (4,), "remainder_seen",
            "undefined_after_while", id="while",
        ),
        pytest.param(
            corpus_errors.undefined_copied, (0,), (3,), "last_seen",
            "undefined_copied", id="copied-to-another-variable",
        ),
        pytest.param(
            corpus_errors.undefined_appended, (False,), (True,), "pending_item",
            "undefined_appended", id="appended-to-a-list",
        ),
        pytest.param(
            corpus_errors.local_read_before_assignment, ([1],), ([],), "scale_factor",
            "read_before_assignment", id="local-shadowing-a-global",
        ),
    ],
)
def test_variable_undefined_on_some_path(fn, args, ok_args, name, tag):
    converted = ag.convert(fn, always_converted=True)
    assert converted(*ok_args) == fn(*ok_args)
    with pytest.raises(NameError):  # what the original does (UnboundLocalError)
        fn(*copy.deepcopy(args))
    with pytest.raises((NameError, ag.AutoGraphError), match=rf"\b{name}\b") as info:
        result = converted(*copy.deepcopy(args))
        pytest.fail(f"returned {result!r} instead of raising an error naming {name!r}")
    # Not a crash inside the library: the error names the user's variable,
    # and the traceback reaches the line that uses it.
    assert not isinstance(info.value, (AttributeError, TypeError))
    filename, line = corpus_errors.tagged_line(fn, tag)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert any(f.filename == filename and f.lineno == line for f in frames), (
        f"no traceback frame at {filename}:{line}: "
        + ", ".join(f"{f.filename}:{f.lineno}" for f in frames)
    )
