"""Seeded random programs, and programs that once converted wrongly: converted == original, value or exception alike.

A complement to tests/test_convert_random_programs.py (hypothesis): the generator here mixes
the constructs the pipeline lowers (nested if/while/for with break,
continue, return, loop else, try/except inside loops, nested functions,
list mutation, augmented item assignment, comprehensions, ternaries,
and/or/not, asserts) and reads of variables that may be unbound.  Each
program is checked on several argument tuples.
"""

import copy
import random

import pytest

import autograph as ag
from modes import load_program

VARS = ["a", "b", "c", "x"]
ARGS = [(0, 0, 3), (1, 2, 5), (-1, 3, 2), (2, -2, 0), (3, 1, 4)]


class _Generator:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.lines = []

    def expr(self, depth=0):
        r = self.r
        kind = r.randint(0, 9 if depth < 2 else 3)
        if kind <= 1:
            return r.choice(VARS + ["n"])
        if kind == 2:
            return str(r.randint(-3, 5))
        if kind == 3:
            return "len(lst)"
        if kind <= 5:
            return f"({self.expr(depth + 1)} {r.choice(['+', '-', '*'])} {self.expr(depth + 1)})"
        if kind == 6:
            return f"({self.expr(depth + 1)} if {self.cond(depth + 1)} else {self.expr(depth + 1)})"
        if kind == 7:
            return f"(lst[{self.expr(depth + 1)} % len(lst)] if lst else 0)"
        return f"abs({self.expr(depth + 1)})"

    def cond(self, depth=0):
        r = self.r
        kind = r.randint(0, 5 if depth < 2 else 1)
        if kind <= 1:
            op = r.choice(["<", ">", "==", "!=", "<=", ">="])
            return f"{self.expr(depth + 1)} {op} {self.expr(depth + 1)}"
        if kind == 2:
            return f"not {self.cond(depth + 1)}"
        if kind == 3:
            return f"({self.cond(depth + 1)} and {self.cond(depth + 1)})"
        if kind == 4:
            return f"({self.cond(depth + 1)} or {self.cond(depth + 1)})"
        return r.choice(VARS)

    def block(self, indent, depth, in_loop):
        for _ in range(self.r.randint(1, 3)):
            self.statement(indent, depth, in_loop)

    def statement(self, indent, depth, in_loop):
        r, p, emit = self.r, " " * indent, self.lines.append
        kind = r.randint(0, 19 if depth < 3 else 4)
        if kind <= 2:
            emit(f"{p}{r.choice(VARS)} = {self.expr()}")
        elif kind == 3:
            emit(f"{p}{r.choice(VARS)} += {self.expr()}")
        elif kind == 4:
            if in_loop and r.random() < 0.5:
                emit(f"{p}{r.choice(['break', 'continue'])}")
            elif r.random() < 0.3:
                emit(f"{p}return {self.expr()}")
            else:
                emit(f"{p}lst.append({self.expr()})")
        elif kind <= 6:
            emit(f"{p}if {self.cond()}:")
            self.block(indent + 4, depth + 1, in_loop)
            if r.random() < 0.5:
                emit(f"{p}else:")
                self.block(indent + 4, depth + 1, in_loop)
        elif kind <= 8:
            emit(f"{p}for i{depth} in range({r.randint(0, 4)}):")
            self.block(indent + 4, depth + 1, True)
            if r.random() < 0.2:
                emit(f"{p}else:")
                self.block(indent + 4, depth + 1, in_loop)
        elif kind <= 10:
            counter = f"w{depth}"
            emit(f"{p}{counter} = 0")
            emit(f"{p}while {counter} < {r.randint(0, 4)} and {self.cond()}:")
            emit(f"{p}    {counter} += 1")
            self.block(indent + 4, depth + 1, True)
            if r.random() < 0.2:
                emit(f"{p}else:")
                self.block(indent + 4, depth + 1, in_loop)
        elif kind == 11:
            emit(f"{p}if lst and {self.cond()}:")
            emit(f"{p}    {r.choice(VARS)} = lst.pop()")
        elif kind == 12:
            emit(f"{p}if {self.cond()}:")
            emit(f"{p}    return {self.expr()}")
        elif kind == 13:
            emit(f"{p}try:")
            self.block(indent + 4, depth + 1, in_loop)
            emit(f"{p}    {r.choice(VARS)} = 10 // ({self.expr()})")
            emit(f"{p}except ZeroDivisionError:")
            self.block(indent + 4, depth + 1, in_loop)
        elif kind == 14:
            emit(f"{p}if lst:")
            emit(f"{p}    lst[{self.expr()} % len(lst)] += {self.expr()}")
        elif kind == 15:
            v = r.choice(VARS)
            emit(f"{p}def helper{depth}(q):")
            emit(f"{p}    if q > {v}:")
            emit(f"{p}        return q - {v}")
            emit(f"{p}    return q + 1")
            emit(f"{p}{r.choice(VARS)} = helper{depth}({self.expr()})")
        elif kind == 16:
            emit(f"{p}{r.choice(VARS)} = [q for q in lst if q > {self.expr()} and q != 2]")
            emit(f"{p}{r.choice(VARS)} = len(a) if isinstance(a, list) else a")
        elif kind == 17:
            emit(f"{p}assert {self.cond()} or True, 'never'")
        elif kind == 18:
            k, v = f"k{depth}", f"v{depth}"
            emit(f"{p}for {k}, {v} in enumerate(lst[:3]):")
            emit(f"{p}    if {v} > {self.expr()}:")
            emit(f"{p}        {k} = {k} + {v}")
            emit(f"{p}    {r.choice(VARS)} += {k}")
            self.block(indent + 4, depth + 1, True)
        else:
            emit(f"{p}for {r.choice(VARS)} in range({r.randint(0, 3)}):")
            self.block(indent + 4, depth + 1, True)

    def program(self):
        if self.r.random() < 0.3:  # c may then be unbound when read
            self.lines = ["def f(a, b, n):", "    lst = []", "    x = 1"]
        else:
            self.lines = ["def f(a, b, n):", "    c = 0", "    x = 1", "    lst = []"]
        self.block(4, 0, False)
        self.lines.append("    return (a, b, c, lst)" if self.r.random() < 0.8 else "    return x")
        return "\n".join(self.lines) + "\n"


def _outcome(function, args):
    try:
        return "value", function(*args)
    except NameError:  # UnboundLocalError included: the messages differ by design
        return "unbound"
    except Exception as e:  # noqa: BLE001 - comparing whatever the program raises
        return "raise", type(e).__name__, str(e)


def _same_outcomes(original, arguments, where):
    converted = ag.convert(original, always_converted=True)
    for args in arguments:
        expected = _outcome(original, copy.deepcopy(args))
        got = _outcome(converted, copy.deepcopy(args))
        assert got == expected, f"{where}, args {args}:\n{ag.to_code(original)}"


@pytest.mark.parametrize("chunk", range(3))
def test_random_programs(chunk):
    for seed in range(chunk * 100, chunk * 100 + 100):
        source = _Generator(seed).program()
        _same_outcomes(load_program(source, tag=f"seeded-program-{seed}"), ARGS, f"seed {seed}\n{source}")


# Programs that once converted wrongly, each on the arguments that showed it.
REGRESSIONS = {
    # A tuple target modified in the body: its binding comes from `k, v = itr`.
    "tuple_target_modified": (
        """
def f(items):
    out = []
    for k, v in items:
        if v:
            k = k + 1
        out.append(k)
    return out
""",
        [([(1, True), (5, False)],), ([],)],
    ),
    # Shared extra loop tests must be defined outside try/except blocks.
    "extra_test_shared_across_try": (
        """
def f(xs):
    try:
        for x in xs:
            if x == 0:
                return 'zero'
        y = 10 // len(xs)
    except ZeroDivisionError:
        for x in [1, 2]:
            if x == 2:
                return 'handler'
    for x in xs:
        if x > 5:
            return x
    return -1
""",
        [([],), ([1, 0],), ([1, 7],), ([1, 2],)],
    ),
    # A continue flag used in closures hoisted out of the loop body.
    "continue_flag_in_guarded_try": (
        """
def f(n):
    i = 0
    total = 0
    while i < n:
        i += 1
        if i == 2:
            return total
        try:
            if i % 3 == 0:
                continue
            total += i
        except ValueError:
            pass
        total += 100
    return total
""",
        [(0,), (1,), (2,), (5,)],
    ),
    # Dead code after a jump keeps its names local.
    "dead_code_binding": (
        """
def f(xs):
    for x in xs:
        break
        e = x
    return e
""",
        [([1],), ([],)],
    ),
    # Reads of a possibly-unbound variable in a closure raise UnboundLocalError.
    "unbound_read_in_closure": (
        """
def f(xs):
    a = 1 if xs else e
    e = a
    return a
""",
        [([1],), ([],)],
    ),
    # `x += v` reads x before evaluating v.
    "augassign_reads_target_first": (
        """
def f(xs):
    if xs:
        e = xs.pop()
    e += xs[0]
    return e
""",
        [([1, 2],), ([],)],
    ),
    # Recursion through the module globals, not the factory's local name.
    "recursion": (
        """
def f(n):
    if n <= 1:
        return 1
    return n * f(n - 1)
""",
        [(5,)],
    ),
}


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_regression(name):
    source, arguments = REGRESSIONS[name]
    _same_outcomes(load_program(source, tag=f"regression-{name}"), arguments, name)
