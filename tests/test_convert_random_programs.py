"""Random programs drawn by hypothesis behave the same converted (``ag.convert``) and not.

``ProgramWriter`` writes the source of a random, always-terminating
function ``prog(a, b, xs)`` over ints and lists: nested if/elif/else, while
loops bounded by a counter (also ``while True`` with a counter break),
for-over-range, break / continue / early return, for/else and while/else,
``append`` / ``pop`` / ``len`` / indexing / ``xs[i] += v``, and/or/not and
ternaries in conditions and expressions, calls to a user function
(``helper``, converted recursively).  Every variable is bound before any
branch, so the programs never hit an unbound local; a second test adds a
variable ``e`` bound on some paths only, where a read on the other paths
must raise ``UnboundLocalError`` naming ``e`` in both versions.

Each program is exec'd in a fresh module namespace under a unique fake file
name registered in ``linecache`` (so its source is recoverable), converted
with ``ag.convert`` and run on several argument tuples; the result (value,
or exception type and message) and the mutated list must match the
original.  Hypothesis draws the writer's choices, derandomized, so CI runs
the same programs every time; a failure prints the program.

``AUTOGRAPH_DIFF_EXAMPLES`` (default 500) changes the number of programs,
and ``AUTOGRAPH_DIFF_RANDOM=1`` draws fresh programs instead of the fixed
set, for bug hunting.  Seeded programs of other constructs, and programs
that once converted wrongly: tests/test_convert_seeded_programs.py.
"""

from __future__ import annotations

import ast
import copy
import linecache
import os
import random
import re
import warnings
from typing import Callable

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import autograph as ag
from corpus_registry import same
from modes import load_program

ARGS = (
    (0, 0, []),
    (3, -2, [1, 2, 3]),
    (7, 5, [4]),
    (-1, 10, [0, 5, -3, 2]),
    (2, 2, [9, -9]),
)

INT_VARS = ("a", "b", "c", "d")
LIST_VARS = ("xs", "ys")
MAX_DEPTH = 3
MAX_ITERATIONS = 4
_JUMPS = ("break", "continue", "return")

# A user function every program may call: converted recursively, with an
# early return from a loop, a while loop, and a mutation of its argument.
HELPER = """\
def helper(v, lst):
    for k in range(len(lst)):
        if lst[k] == v:
            return k
    while v > 10:
        v //= 2
    if len(lst) > 6:
        lst.pop()
    return v


"""


class ProgramWriter:
    """Writes one random program; ``choose(lo, hi)`` makes every decision."""

    def __init__(self, choose: Callable[[int, int], int], maybe_undefined: bool = False):
        self.choose = choose
        self.loops = 0
        # With maybe_undefined, ``e`` is assigned and read like the other
        # ints but never bound up front: reads may hit an unbound local.
        self.maybe_undefined = maybe_undefined

    def int_var(self, scope: tuple = ()) -> str:
        """An int variable; in maybe_undefined mode ``e`` half of the time."""
        if self.maybe_undefined and self.choose(0, 1):
            return "e"
        return self.pick(INT_VARS + scope)

    def pick(self, options):
        return options[self.choose(0, len(options) - 1)]

    # -- expressions

    def int_expr(self, scope: tuple, depth: int = 0) -> str:
        kind = self.choose(0, 12) if depth < 2 else self.choose(0, 2)
        lst = self.pick(LIST_VARS)
        if kind == 0:
            return self.int_var(scope)
        if kind == 1:
            return str(self.choose(-3, 5))
        if kind == 2:
            return f"len({lst})"
        sub = lambda: self.int_expr(scope, depth + 1)  # noqa: E731
        if kind == 3:
            return f"({sub()} + {sub()})"
        if kind == 4:
            return f"({sub()} - {sub()})"
        if kind == 5:
            return f"({sub()} * {self.choose(-2, 3)})"
        if kind == 6:
            return f"({sub()} % {self.choose(2, 5)})"
        if kind == 7:
            return f"({sub()} if {self.cond(scope, depth + 1)} else {sub()})"
        if kind == 8:
            return f"({lst}[{sub()} % len({lst})] if {lst} else {self.choose(-3, 3)})"
        if kind == 9 and self.choose(0, 2) == 0:
            return f"{lst}[{self.choose(-2, 2)}]"  # may raise IndexError
        if kind == 9:
            return f"({lst}[-1] if {lst} else {sub()})"
        if kind == 10:
            return f"max({sub()}, {sub()})"
        if kind == 12:
            return f"helper({sub()}, {lst})"
        return f"abs({sub()})"

    def cond(self, scope: tuple, depth: int = 0) -> str:
        kind = self.choose(0, 7) if depth < 2 else self.choose(0, 1)
        if kind == 0:
            op = self.pick(("<", "<=", "==", "!=", ">", ">="))
            return f"{self.int_expr(scope, depth + 1)} {op} {self.int_expr(scope, depth + 1)}"
        if kind == 1:
            return self.pick(LIST_VARS)
        sub = lambda: self.cond(scope, depth + 1)  # noqa: E731
        if kind == 2:
            return f"({sub()} and {sub()})"
        if kind == 3:
            return f"({sub()} or {sub()})"
        if kind == 4:
            return f"(not {sub()})"
        if kind == 5:
            return f"({sub()} if {sub()} else {sub()})"
        if kind == 6:
            return f"len({self.pick(LIST_VARS)}) > {self.choose(0, 3)}"
        return f"({self.int_expr(scope, depth + 1)} and {sub()})"

    # -- statements

    def block(self, scope: tuple, depth: int, in_loop: bool) -> list[str]:
        lines = []
        for _ in range(self.choose(1, 3)):
            statement = self.statement(scope, depth, in_loop)
            lines += statement
            if len(statement) == 1 and statement[0].split()[0] in _JUMPS:
                break  # no dead code after a jump, as in real programs
        return lines

    def statement(self, scope: tuple, depth: int, in_loop: bool) -> list[str]:
        kinds = ["assign", "augassign", "append", "pop", "subscript"]
        if depth < MAX_DEPTH:
            kinds += ["if", "for", "while", "if", "for", "while"]
        if in_loop:
            kinds += ["break", "continue"]
        kinds.append("return")
        kind = self.pick(kinds)
        if kind == "return" and self.choose(0, 2):
            kind = "assign"  # returns are rarer, so fewer programs end early
        expr = lambda: self.int_expr(scope)  # noqa: E731
        lst = self.pick(LIST_VARS)
        if kind == "assign":
            return [f"{self.int_var()} = {expr()}"]
        if kind == "augassign":
            return [f"{self.int_var()} {self.pick(('+=', '-='))} {expr()}"]
        if kind == "append":
            return [f"{lst}.append({expr()})"]
        if kind == "pop":
            if self.choose(0, 3):
                return [f"if {lst}:", f"    {self.int_var()} = {lst}.pop()"]
            return [f"{self.int_var()} = {lst}.pop()"]  # may raise IndexError
        if kind == "subscript":
            return [f"if {lst}:", f"    {lst}[{expr()} % len({lst})] += {expr()}"]
        if kind == "break":
            return ["break"]
        if kind == "continue":
            return ["continue"]
        if kind == "return":
            return [self.pick((f"return {expr()}", f"return {expr()}, len(xs)", "return"))]
        if kind == "if":
            return self.if_statement(scope, depth, in_loop)
        if kind == "for":
            return self.for_statement(scope, depth, in_loop)
        return self.while_statement(scope, depth, in_loop)

    def if_statement(self, scope, depth, in_loop) -> list[str]:
        lines = [f"if {self.cond(scope)}:"]
        lines += _indent(self.block(scope, depth + 1, in_loop))
        for _ in range(self.choose(0, 1)):
            lines.append(f"elif {self.cond(scope)}:")
            lines += _indent(self.block(scope, depth + 1, in_loop))
        if self.choose(0, 1):
            lines.append("else:")
            lines += _indent(self.block(scope, depth + 1, in_loop))
        return lines

    def for_statement(self, scope, depth, in_loop) -> list[str]:
        var = f"i{self.loops}"
        self.loops += 1
        bound = self.pick(
            (
                str(self.choose(0, MAX_ITERATIONS)),
                f"min(len({self.pick(LIST_VARS)}), {MAX_ITERATIONS})",
                f"{self.int_expr(scope)} % {MAX_ITERATIONS + 1}",
            )
        )
        lines = [f"for {var} in range({bound}):"]
        lines += _indent(self.block(scope + (var,), depth + 1, True))
        lines += self.loop_else(scope, depth, in_loop)
        return lines

    def while_statement(self, scope, depth, in_loop) -> list[str]:
        counter = f"w{self.loops}"
        self.loops += 1
        limit = self.choose(1, MAX_ITERATIONS)
        shape = self.choose(0, 2)
        lines = [f"{counter} = 0"]
        if shape == 0:
            lines.append(f"while {counter} < {limit} and {self.cond(scope)}:")
        elif shape == 1:
            lines.append(f"while {self.cond(scope)} and {counter} < {limit}:")
        else:
            lines.append("while True:")
        body = [f"{counter} += 1"]
        if shape == 2:
            body += [f"if {counter} > {limit}:", "    break"]
        body += self.block(scope, depth + 1, True)
        lines += _indent(body)
        if shape != 2:
            lines += self.loop_else(scope, depth, in_loop)
        return lines

    def loop_else(self, scope, depth, in_loop) -> list[str]:
        if self.choose(0, 3):
            return []
        return ["else:"] + _indent(self.block(scope, depth + 1, in_loop))

    def program(self) -> str:
        body = ["c = 0", "d = 0", "ys = []"]
        body += self.block((), 0, False)
        if self.maybe_undefined and self.choose(0, 1):
            body.append("return a, b, c, d, xs, ys, e")
        else:
            body.append("return a, b, c, d, xs, ys")
        return HELPER + "\n".join(["def prog(a, b, xs):"] + _indent(body)) + "\n"


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


@st.composite
def programs(draw, maybe_undefined: bool = False) -> str:
    choose = lambda lo, hi: draw(st.integers(lo, hi))  # noqa: E731
    return ProgramWriter(choose, maybe_undefined).program()


def _outcome(fn, args):
    args = copy.deepcopy(args)
    try:
        return ("return", fn(*args), args)
    except Exception as exc:  # noqa: BLE001 - the outcome under test
        return ("raise", (type(exc), str(exc)), args)


def _equivalent(expected, actual) -> bool:
    """Same result, or the same exception; unbound locals may word it their way.

    The original's ``UnboundLocalError`` message is CPython's; converted code
    raises its own, which must still name the variable.
    """
    if expected[0] != actual[0] or not same(expected[2], actual[2]):
        return False
    if expected[0] == "raise" and expected[1][0] is UnboundLocalError:
        name = re.search(r"'(\w+)'", expected[1][1]).group(1)
        return actual[1][0] is UnboundLocalError and f"'{name}'" in actual[1][1]
    return same(expected[1], actual[1])


def check_program(source: str) -> None:
    fn = load_program(source, "prog", "random-program")
    filename = fn.__code__.co_filename
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ag.AutoGraphWarning)
            try:
                converted = ag.convert(fn, always_converted=True)
            except Exception as exc:
                raise AssertionError(
                    f"ag.convert failed with {type(exc).__name__}: {exc}\n"
                    f"--- program ---\n{source}"
                ) from exc
            for args in ARGS:
                expected = _outcome(fn, args)
                actual = _outcome(converted, args)
                assert _equivalent(expected, actual), (
                    f"converted program differs on args {args!r}\n"
                    f"  original:  {expected[0]} {expected[1]!r}, xs after {expected[2][2]!r}\n"
                    f"  converted: {actual[0]} {actual[1]!r}, xs after {actual[2][2]!r}\n"
                    f"--- program ---\n{source}"
                )
    finally:
        linecache.cache.pop(filename, None)


_EXAMPLES = int(os.environ.get("AUTOGRAPH_DIFF_EXAMPLES", "500"))
_RANDOM = os.environ.get("AUTOGRAPH_DIFF_RANDOM") == "1"
# On failure: shrink to a small program and report it, but skip the costly
# "explain" phase and the hunt for further distinct bugs.
_FAILURE_REPORTING = dict(
    phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
    report_multiple_bugs=False,
)


@settings(
    max_examples=_EXAMPLES,
    deadline=None,
    derandomize=not _RANDOM,
    database=None,
    print_blob=_RANDOM,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    **_FAILURE_REPORTING,
)
@given(programs())
def test_converted_program_matches_original(source):
    check_program(source)


@settings(
    max_examples=max(_EXAMPLES // 2, 1),
    deadline=None,
    derandomize=not _RANDOM,
    database=None,
    print_blob=_RANDOM,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    **_FAILURE_REPORTING,
)
@given(programs(maybe_undefined=True))
def test_program_with_maybe_unbound_variable_matches_original(source):
    """``e`` is bound on some paths only: a read on the others must raise."""
    check_program(source)


def _features(source: str) -> set[str]:
    """The constructs a program uses, by walking its AST."""
    found = set()

    def visit(node, loop_depth):
        if isinstance(node, (ast.For, ast.While)):
            found.add(type(node).__name__.lower())
            if node.orelse:
                found.add("loop else")
            if loop_depth:
                found.add("nested loops")
            if isinstance(node, ast.While) and isinstance(node.test, ast.Constant):
                found.add("while True")
        elif isinstance(node, ast.Break):
            found.add("break")
        elif isinstance(node, ast.Continue):
            found.add("continue")
        elif isinstance(node, ast.Return) and loop_depth:
            found.add("return in loop")
        elif isinstance(node, ast.If) and len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            found.add("elif")
        elif isinstance(node, ast.BoolOp):
            found.add(type(node.op).__name__.lower())
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            found.add("not")
        elif isinstance(node, ast.IfExp):
            found.add("ternary")
        elif isinstance(node, ast.Attribute) and node.attr in ("append", "pop"):
            found.add(node.attr)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Subscript):
            found.add("subscript augassign")
        elif isinstance(node, ast.Name) and node.id == "helper":
            found.add("helper call")
        inner = loop_depth + isinstance(node, (ast.For, ast.While))
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(ast.parse(source.removeprefix(HELPER)), 0)
    return found


def test_program_writer_covers_the_constructs():
    """The writer is sound (programs run, terminate) and exercises everything."""
    rng = random.Random(20240601)
    sources = [ProgramWriter(rng.randint).program() for _ in range(300)]
    wanted = (
        "for", "while", "while True", "nested loops", "loop else", "break", "continue",
        "return in loop", "elif", "and", "or", "not", "ternary", "append", "pop",
        "subscript augassign", "helper call",
    )
    counts = {name: 0 for name in wanted}
    for source in sources:
        for name in _features(source) & set(wanted):
            counts[name] += 1
    rare = {name: n for name, n in counts.items() if n < 15}
    assert not rare, f"constructs too rare in 300 programs: {rare}"
    outcomes = set()
    for source in sources:
        fn = load_program(source, "prog", "random-program")
        filename = fn.__code__.co_filename
        linecache.cache.pop(filename, None)
        for args in ARGS:
            kind, value, _ = _outcome(fn, args)
            outcomes.add(kind)
            if kind == "raise":
                assert value[0] is IndexError, f"{value!r} from\n{source}"
    assert outcomes == {"return", "raise"}
