"""Seeded random programs: converted == original, value or exception alike.

A complement to the hypothesis differential test: the generator here mixes
the constructs the pipeline lowers (nested if/while/for with break,
continue, return, loop else, try/except inside loops, nested functions,
list mutation, augmented item assignment, comprehensions, ternaries,
and/or/not, asserts) and reads of variables that may be unbound.  Each
program is checked on several argument tuples.
"""

import linecache
import random

import pytest

import autograph as ag

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


@pytest.mark.parametrize("chunk", range(3))
def test_random_programs(chunk):
    for seed in range(chunk * 100, chunk * 100 + 100):
        source = _Generator(seed).program()
        filename = f"<pipeline-random-{seed}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace = {}
        exec(compile(source, filename, "exec"), namespace)
        original = namespace["f"]
        converted = ag.convert(original, always_converted=True)
        for args in ARGS:
            expected, got = _outcome(original, args), _outcome(converted, args)
            assert got == expected, f"seed {seed}, args {args}:\n{source}\n{ag.to_code(original)}"
