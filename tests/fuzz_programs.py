"""Random Python-total programs over scalars, tensors and composite state.

``ProgramWriter(choose, features).program()`` writes the source of one
function ``prog(a, b, n, v)``: ``a`` and ``b`` are scalars of the program's
dtype (int32 or float32; with ``narrow`` also int8, uint8, int16, uint32,
int64 and float64, see below), ``n`` an int32 loop bound in ``0..3``, ``v`` a
vector of the program's dtype.  Every decision is one ``choose(lo, hi)``
call (an inclusive integer draw), so the writer runs on a seeded
``random.Random`` (``rng.randint``) or on hypothesis
(``lambda lo, hi: draw(st.integers(lo, hi))``), which then shrinks
failing programs.

The programs are *Python-total*: they always terminate (``while`` loops are
bounded by a counter incremented first thing in the body, ``for`` loops run
over ``range`` of a small bound or over ``v``), never divide (``%`` and
``//`` only by positive constants) and keep every value a small integer:
stored values are reduced ``% 97`` and products only multiply leaves, so a
float32 program computes exactly the same numbers as an int32 one and
results compare exactly.  They are also *type-consistent*: every variable
has a kind, ``I`` (int: counters, ``n``, ``range`` indices) or ``V`` (the
program's dtype), and only receives values of its kind, so that a graph
never has a real reason to refuse one (Python constants are weakly typed
and fit either kind).

State mixes plain names (``s``, ``k`` of kind ``I``; ``t``, ``u`` of kind
``V``), dict items (``d['x']``, ``d['y']``), list slots (``l[0]``,
``l[1]``) and an object attribute (``o.v`` on a ``Box``, the class bound in
the program's module namespace), each starting as a Python constant or an
input.  Statements: assignments, augmented assignments, resets to Python
constants (``i = 0`` between two ifs), nested if/elif/else, ``while``
(counter-bounded, also ``while True`` with a counter ``break``), ``for``
over ``range(n)``, ``range(3)`` or ``range(<expr> % 4)`` and over ``v``,
``break``/``continue``, early ``return`` (also inside loops), ternaries and
``and``/``or``/``not`` in conditions.  Every ``return`` returns the same
structure: a flat tuple of the state, or ``(s, t, d, l, o.v)`` with the
containers themselves.

A list that grows (``append`` and the features after it in ``FEATURES``):
``acc = []`` or ``acc = [<expr>]`` at the top level, ``acc.append(<expr>)``
anywhere (in tensor and Python ifs and loops, nested; the elements are
computed from ``a`` or ``b`` unless ``append_number``), ``acc.pop()`` (also
``t = acc.pop()``, and ``d['y'] = acc.pop()`` with ``pop_to_item``) only as
the body of an ``if len(acc) > 0`` (possibly ``and``-ed with another
condition; the condition comes before the length check only with
``pop_late_guard``, since a tensor ``if`` traces its body even when the
Python length check fails), reads ``len(acc)`` (an int leaf),
``(acc[-1] if len(acc) > 0 else <expr>)``
(indices guarded by a length check) and ``for x in acc:`` (whose body never
appends to or pops from ``acc``), and a few of these reads after the
program's statements (a sum over ``acc``, its last item).  Its elements
have the program's dtype (kind ``V``); every ``return`` returns
``len(acc)`` too, and with ``return_list`` possibly ``acc`` itself (then
the program has no early ``return`` unless ``return_list_early``).  A
list a tensor loop or branch grows is *staged* (one tensor of stacked
elements, returned as that array), so the header line ``# staged:
result[i]`` names the result that may come back as
``np.asarray(<the Python list>)``.

Edges: with ``alias`` the list is also reached as ``ys`` or ``box['r']``
and appended to through that name (reads go through ``acc``); with
``helper_call`` state is written by calls: module-level helpers
``bump(o, e)`` (``o.v``) and ``put(d, e)`` (``d['y']``), the method
``o.add(e)``, a closure ``inc(e)`` doing ``nonlocal k``, and one defined
where it is called (``def inc_here``), also in a ``while`` test with
``test_call`` (``while (inc(e) or c < n)``: Python changes ``k`` at every
evaluation of the test, which a tensor loop refuses); ``walrus``
binds ``w<k>`` in a ``while`` or ``if`` test, read in the body and right
after the statement; ``tensor_index`` assigns items and slices of ``v``
(also ``+=``) at indices ``e % 4`` (out of range for a short ``v``: Python's
``IndexError``), reads ``v[e % 4]`` and returns ``v`` (never inside a
``for x in v``, whose iteration would see the in-place update only in
Python: arrays passed in are values); with ``numpy_buffer`` one such
program in two first makes ``v`` a numpy array of its own
(``v = np.full(4, c, dtype)``), which numpy changes in place; ``builtins`` uses ``max``, ``min``,
``abs`` and ``divmod`` on values of one kind; ``conversions`` takes
``int()`` or ``round()`` of a value (a Python int, unbounded: no wrap at the
value's dtype); ``comprehension`` sums or
counts a list comprehension or generator over ``v``; ``raise`` raises
``ValueError`` under a condition; ``rebind`` rebinds ``l`` to a new list
(``l = [e, e]``), also under tensor conditions and in loops, and one program
in three keeps its first list as ``keep`` and returns its items (Python's
old list keeps what it held; a tensor statement rebinding ``l`` on some
paths only, while ``keep`` holds the old list, is refused).  A program that may raise says so in a
header line ``# may raise: IndexError, ValueError``: on inputs where
Python raises one of them, every mode must raise it too.

Narrow dtypes (``narrow``): half the programs take one of int8, uint8,
int16, uint32, int64 (and float64 with ``float``), where Python numbers meet
numpy values of another width under NEP 50. The inputs are ``ARGS`` cast
with numpy's wrapping (``-2`` as a uint8 is ``254``). Arithmetic on the
narrow values wraps, as numpy scalars do (deterministically: every mode must
wrap the same way); a Python int out of the dtype's bounds combined with one
(a Python-number state variable that went negative, ``t = 0; t -= 3; a + t``
with a uint8 ``a``, or a product of Python numbers) is Python's
``OverflowError``, so those programs' header names it.  Values that are
Python ints in Python whatever the graph makes of them (kind ``P``: the
index of a ``for`` over ``range``, ``len(acc)``) flow into ``V`` expressions
there.  With ``narrow_bounds``, one comparison in four (of a narrow program)
is of a ``V`` value with a constant out of some dtype's bounds (``a > 300``,
``t == 2**31``, ``u >= -1``), which NumPy 2 compares exactly.  Constants and
Python-number initial values of ``V`` are sometimes ``100..127``: each fits
every dtype, but two added as Python ints (``t = 120; u = 110; ... t + u``,
``sum(acc)`` over Python numbers) do not fit an int8 or uint8. One narrow
integer program in four *mixes* kinds as an int32 program does (``n`` and
``I`` state meet ``V`` values: a variable's dtype then depends on the path,
which a graph may refuse naming it, or naming the conditional expression,
``max``/``min`` or the return value whose dtype would depend on the path:
the header line ``# mixes dtypes`` says so). A program without ``narrow`` is
the same as before the feature existed (the dtype draw comes first and
``narrow`` only adds draws).

``FEATURES`` names every optional construct; ``features=`` restricts the
writer to a subset (a disabled state kind is neither created nor
returned).
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

FEATURES = frozenset(
    {
        # state kinds
        "dict",  # d = {'x': .., 'y': ..}, read anywhere, written at the top level
        "list",  # l = [.., ..], read anywhere, written at the top level
        "item_assign",  # d['x'] = .. / l[0] = .. inside if/while/for too
        "item_augassign",  # d['x'] += .. / l[0] += .. inside if/while/for too
        "attr",  # o = Box(); o.v = ..
        "python_init",  # a state variable may start as a Python constant
        "reset",  # statements `x = <constant>` (Python value after a tensor one)
        "float",  # float32 programs (else int32 only)
        "narrow",  # programs of int8, uint8, int16, uint32, int64 (float64 with "float"): Python numbers meet
        # narrower numpy dtypes (NEP 50 weak typing, wrapping, OverflowError; see the module docstring)
        "narrow_bounds",  # narrow programs compare with constants out of bounds (a > 300) and add
        # Python numbers 100..127 (t = 120; t + u no longer fits an int8)
        # control flow
        "elif",
        "else",
        "augassign_after_if_in_loop",  # x += .. in a loop body after an if there that assigns x
        "branch_cross_read",  # an elif/else branch reads what an earlier branch of its if writes
        # (or jumps after a jump in an earlier branch: the lowered jump flag is such a read)
        "while",
        "while_true",  # while True: c += 1; if c > N: break
        "for_range",  # for i in range(n) / range(3) / range(e % 4)
        "for_tensor",  # for x in v
        "break",
        "continue",
        "return",  # early return from an if outside loops
        "return_in_loop",
        # expressions
        "ternary",
        "boolop",  # and / or in conditions
        "not",
        "floordiv",  # e % m, e // m by positive constants
        "return_containers",  # return (s, t, d, l, o.v): dict/list as results
        # a list that grows (see the module docstring)
        "append",  # acc = [] / [e]; acc.append(e) anywhere; len(acc) read anywhere and returned
        "append_number",  # acc may hold Python numbers (else every element is computed from a or b)
        "pop",  # if len(acc) > 0 [and c]: acc.pop() / t = acc.pop()
        "pop_late_guard",  # if c and len(acc) > 0: acc.pop() (the length check second)
        "pop_to_item",  # d['x'] = acc.pop() / l[0] = .. / o.v = ..
        "list_index",  # (acc[-1] if len(acc) > 0 else e), acc[0] ..
        "for_list",  # for x in acc
        "return_list",  # return (..., len(acc), acc): a staged list comes back stacked
        "return_list_early",  # ... also from inside ifs and loops (else no early return then)
        # the edges of Python (see "Edges" in the module docstring)
        "alias",  # ys = acc / box = {'r': acc}: appends through the alias, reads through acc
        "helper_call",  # bump(o, e) / put(d, e) / o.add(e) / inc(e) (nonlocal k): state written by a call
        "local_helper",  # with helper_call: def inc_here(x): nonlocal k; ... defined where it is called
        "test_call",  # with helper_call: while (inc(e) or c < n): the test changes k at every evaluation
        "walrus",  # while (w := c) < n / if (w := e) > e: w read in the body and after
        "tensor_index",  # v[e % 4] = e / v[e % 4:] += e / v[e % 4] reads: IndexError when out of range
        "numpy_buffer",  # with tensor_index, one program in two: v = np.full(4, c, dtype) first, a numpy
        # array made in the function that the statements store into (under tensor ifs and loops too)
        "builtins",  # max(e, e), min(e, e), abs(e), divmod(e, m)[1]
        "conversions",  # int(e), round(e): a Python int in Python (unbounded), a weak int64 in the graph
        "comprehension",  # sum([x % 5 for x in v]), sum(x % 5 for x in v), len([x for x in v if c])
        "raise",  # if c and c: raise ValueError('...') (Python raises on some inputs: so must the graph)
        "rebind",  # with list: l = [e, e] anywhere (a new list), one program in three with keep = l read at the end
    }
)

_NEEDS_NARROW = ("narrow_bounds",)
_NEEDS_APPEND = ("append_number", "pop", "pop_late_guard", "pop_to_item", "list_index", "for_list", "return_list",
                 "return_list_early", "alias")

MAX_DEPTH = 3  # nesting of compound statements
MAX_BOUND = 3  # while loops with a constant bound iterate at most this often
MODULUS = 97

I, V = "I", "V"  # the two kinds of values (see the module docstring)
BIG = 127  # the largest Python constant "narrow" writes (int8's maximum)
P = "P"  # an I value that is a Python int in Python (a range index, len(acc)): weakly typed, fits V too
NARROW_INTS = ("int8", "uint8", "int16", "uint32", "int64")
# Python ints out of these dtypes' bounds are an OverflowError when combined with them (int64: never reached)
OVERFLOWING = ("int8", "uint8", "int16", "uint32")
# constants a V value is compared with under "narrow": out of some dtype's bounds (NumPy 2 compares exactly)
WIDE_CONSTANTS = (-1, -129, 127, 128, 200, 255, 256, 300, 32768, 40000, 70000, 2**31, 2**32 + 1)
JUMP = "<jump>"  # stands for the flag a break/continue/return sets, in ProgramWriter.writes


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


class ProgramWriter:
    """Writes one random program; ``choose(lo, hi)`` makes every decision."""

    def __init__(self, choose: Callable[[int, int], int], features: Iterable[str] = FEATURES):
        self.choose = choose
        self.features = frozenset(features)
        unknown = self.features - FEATURES
        if unknown:
            raise ValueError(f"unknown fuzz features: {sorted(unknown)}")
        self.loops = 0
        self.excluded = frozenset()  # targets leaf() must not read (see branch_cross_read)
        self.writes = []  # one set per if statement being written: the targets its branches assign
        self.loop_if_writes = []  # one set per loop body being written: targets its ifs assign
        self.iterating_acc = 0  # for loops over acc being written: no append or pop in there
        self.returns_acc = False  # the program returns acc itself
        self.iterating_v = 0  # for loops over v being written: no item assignment to v in there
        self.v_numpy = False  # v is a numpy array the program made (numpy_buffer): read at Python indices only
        self.raises = set()  # names of the exceptions the program may raise (the '# may raise' header)
        self.aliases = ["acc"]  # the names appends go through (see alias)
        self.keep = False  # with rebind: keep = l, the list's second name, read at the end
        self.walruses = 0
        self.dtype = "float32" if "float" in self.features and self.choose(0, 1) else "int32"
        self.narrow = "narrow" in self.features and bool(self.choose(0, 1))
        self.mix = False  # I values flow into V ones too (as in int32 programs): dtypes change on some paths
        if self.narrow:
            self.dtype = self.pick(NARROW_INTS + (("float64",) if "float" in self.features else ()))
            self.mix = self.dtype in NARROW_INTS and self.choose(0, 3) == 0
            if self.dtype in OVERFLOWING:
                self.raises.add("OverflowError")
        self.bounds = self.narrow and "narrow_bounds" in self.features  # constants at and past the bounds

    def on(self, feature: str) -> bool:
        if feature in _NEEDS_APPEND and "append" not in self.features:
            return False
        if feature in _NEEDS_NARROW and "narrow" not in self.features:
            return False
        return feature in self.features

    def acc_readable(self) -> bool:
        return self.on("append") and "acc" not in self.excluded

    def pick(self, options):
        options = list(options)
        return options[self.choose(0, len(options) - 1)]

    # -- state

    def state(self) -> list[tuple[str, str]]:
        """(target, kind) of every state slot, in return order."""
        slots = [("s", I), ("k", I), ("t", V), ("u", V)]
        if self.on("dict"):
            slots += [("d['x']", I), ("d['y']", V)]
        if self.on("list"):
            slots += [("l[0]", I), ("l[1]", V)]
        if self.on("attr"):
            slots += [("o.v", V)]
        return slots

    def compatible(self, kind: str, wanted: str) -> bool:
        """A value of ``kind`` may flow where ``wanted`` is expected."""
        if kind == wanted or self.dtype == "int32" or self.mix:
            return True
        # a Python int (P) is an I; under "narrow" it meets V values too (weakly typed, it takes their dtype)
        return kind == P and (wanted == I or self.narrow)

    def initial(self, kind: str) -> str:
        choices = ["0", str(self.choose(1, 5))] if self.on("python_init") else []
        if self.bounds and kind == V and choices:
            choices.append(str(self.choose(100, BIG)))  # fits every dtype; two of them add up beyond int8/uint8
        choices += ["n"] if kind == I else ["a", "b"]
        if self.dtype == "int32" or self.mix:
            choices += ["a", "n"]
        return self.pick(choices)

    # -- expressions

    def leaf(self, scope: list[tuple[str, str]], kind: str) -> str:
        names = [t for t, k in self.slots + scope if self.compatible(k, kind) and t not in self.excluded]
        if self.acc_readable() and self.compatible(P, kind):
            names.append("len(acc)")
        inputs = [x for x, k in (("a", V), ("b", V), ("n", I)) if self.compatible(k, kind)]
        choice = self.choose(0, 5)
        if choice <= 2 and names:
            return self.pick(names)
        if choice <= 3:
            return self.pick(inputs)
        if self.bounds and self.compatible(V, kind) and self.choose(0, 3) == 0:
            return str(self.choose(100, BIG))
        return str(self.choose(0, 9))

    def expr(self, scope, kind: str, depth: int = 0) -> str:
        base = 8 if self.on("list_index") else 7
        edges = [edge for edge in ("builtins", "comprehension", "tensor_index", "conversions") if self.on(edge)]
        top = base + len(edges) if depth < 2 else 1
        choice = self.choose(0, top)
        if choice > base:
            return self.edge_expr(edges[choice - base - 1], scope, kind, depth)
        if choice <= 1:
            return self.leaf(scope, kind)
        sub = lambda: self.expr(scope, kind, depth + 1)  # noqa: E731
        if choice == 2:
            return f"({sub()} + {sub()})"
        if choice == 3:
            return f"({sub()} - {sub()})"
        if choice == 4:
            # products of leaves only: values stay far below 2**24 (exact in float32)
            return f"{self.leaf(scope, kind)} * {self.leaf(scope, kind)}"
        if choice == 5 and self.on("ternary"):
            return f"({sub()} if {self.cond(scope, depth + 1)} else {sub()})"
        if choice == 6 and self.on("floordiv"):
            return f"({sub()} {self.pick(('%', '//'))} {self.choose(2, 5)})"
        if choice == 7 and self.acc_readable() and self.compatible(V, kind):
            index = self.pick((-1, -1, 0, 1, -2))
            guard = self.pick((f"len(acc) > {max(index, -index - 1)}", f"len(acc) >= {max(index + 1, -index)}"))
            return f"(acc[{index}] if {guard} else {sub()})"
        return self.leaf(scope, kind)

    def edge_expr(self, edge: str, scope, kind: str, depth: int) -> str:
        """An expression of one of the Python-edge features (builtins, comprehension, tensor_index,
        conversions)."""
        sub = lambda: self.expr(scope, kind, depth + 1)  # noqa: E731
        if edge == "conversions":  # a Python int (kind P): fits I and V alike
            return f"{self.pick(('int', 'round'))}({self.expr(scope, V, depth + 1)})"
        if edge == "builtins":
            form = self.choose(0, 3)
            if form <= 1:
                return f"{('max', 'min')[form]}({sub()}, {sub()})"
            if form == 2:
                return f"abs({sub()})"
            return f"divmod({sub()}, {self.choose(2, 5)})[1]"
        if "v" in self.excluded:
            return self.leaf(scope, kind)
        if edge == "tensor_index":
            if not self.compatible(V, kind) or self.v_numpy:  # (a numpy array indexed by a tensor: refused)
                return self.leaf(scope, kind)
            self.raises.add("IndexError")
            return f"v[{self.index(scope, depth)}]"
        count = f"len([y for y in v if y > {self.leaf(scope, V)}])"
        if not self.compatible(V, kind) or self.compatible(I, kind) and self.choose(0, 2) == 0:
            return count
        if self.acc_readable() and self.choose(0, 2) == 0:
            return f"(sum(acc) % {MODULUS})"
        return self.pick((f"sum([y % 5 for y in v])", f"sum(y % 5 for y in v)"))

    def cond(self, scope, depth: int = 0) -> str:
        top = 5 if depth < 2 else 0
        choice = self.choose(0, top)
        if choice == 1 and self.on("not"):
            return f"not {self.cond(scope, depth + 1)}"
        if choice == 2 and self.on("boolop"):
            return f"({self.cond(scope, depth + 1)} {self.pick(('and', 'or'))} {self.cond(scope, depth + 1)})"
        kind = self.pick((I, V))
        op = self.pick(("<", "<=", "==", "!=", ">", ">="))
        if self.bounds and self.choose(0, 3) == 0:
            # a Python int out of the dtype's bounds: NumPy 2 compares it exactly (no OverflowError)
            return f"{self.expr(scope, V, depth + 1)} {op} {self.pick(WIDE_CONSTANTS)}"
        return f"{self.expr(scope, kind, depth + 1)} {op} {self.expr(scope, kind, depth + 1)}"

    # -- statements

    def block(self, scope, depth: int, in_loop: bool) -> list[str]:
        lines = []
        for _ in range(self.choose(2, 5) if depth == 0 else self.choose(1, 3)):
            statement = self.statement(scope, depth, in_loop)
            lines += statement
            if statement[0].split()[0] in ("break", "continue", "return"):
                break  # no dead code after a jump
        return lines

    def statement(self, scope, depth: int, in_loop: bool) -> list[str]:
        kinds = ["assign", "assign", "augassign"]
        if self.on("reset"):
            kinds.append("reset")
        if depth < MAX_DEPTH:
            kinds += ["if", "if"]
            if self.on("while") or self.on("while_true"):
                kinds.append("while")
            if self.on("for_range") or self.on("for_tensor"):
                kinds.append("for")
        # A jump sets a flag that the lowered code after it reads: without
        # branch_cross_read, no jump follows one in an earlier branch of its if.
        may_jump = JUMP not in self.excluded
        if in_loop and self.on("break") and may_jump:
            kinds.append("break")
        if in_loop and self.on("continue") and may_jump:
            kinds.append("continue")
        may_return = may_jump and (self.on("return_list_early") or not self.returns_acc)
        if self.on("return_in_loop" if in_loop else "return") and depth > 0 and may_return:
            kinds.append("return")
        if self.acc_readable() and not self.iterating_acc:
            kinds += ["append", "append"]
            if self.on("pop"):
                kinds.append("pop")
        kinds += [edge for edge in ("helper_call", "raise") if self.on(edge)]
        if self.on("rebind") and self.on("list") and (depth == 0 or self.on("item_assign")):
            kinds.append("rebind")
        if self.on("tensor_index") and not self.iterating_v and self.v_readable():
            kinds.append("tensor_index")
        kind = self.pick(kinds)
        if kind == "append":
            for written in self.writes:
                written.add("acc")
            return [f"{self.pick(self.aliases)}.append({self.element(scope)})"]
        if kind == "helper_call":
            call = self.call_statement(scope)
            if call:
                return call
            kind = "assign"
        if kind == "raise":
            self.raises.add("ValueError")
            return [f"if {self.cond(scope)} and {self.cond(scope)}:", "    raise ValueError('unlucky')"]
        if kind == "tensor_index":
            return self.index_statement(scope)
        if kind == "rebind":  # a new list: l's old one (held by keep) keeps what it held
            self.wrote("l[0]")
            self.wrote("l[1]")
            return [f"l = [{self.value(scope, I)}, {self.value(scope, V)}]"]
        if kind == "pop":
            return self.pop_statement(scope)
        if kind in ("break", "continue", "return"):
            for written in self.writes:
                written.add(JUMP)
        if kind in ("assign", "augassign", "reset"):
            targets = [(t, k) for t, k in self.slots if depth == 0 or self.writable(t, kind)]
            if kind == "augassign":  # it reads its target
                readable = [(t, k) for t, k in targets if t not in self.excluded]
                if self.loop_if_writes and not self.on("augassign_after_if_in_loop"):
                    readable = [(t, k) for t, k in readable if t not in self.loop_if_writes[-1]]
                targets, kind = (readable, kind) if readable else (targets, "assign")
            target, target_kind = self.pick(targets)
            for written in self.writes:
                written.add(target)
            if kind == "reset":
                return [f"{target} = {self.choose(0, 3)}"]
            if kind == "augassign":
                return [f"{target} {self.pick(('+=', '-='))} {self.leaf(scope, target_kind)}"]
            return [f"{target} = {self.value(scope, target_kind)}"]
        if kind == "break":
            return ["break"]
        if kind == "continue":
            return ["continue"]
        if kind == "return":
            return [self.return_statement(scope)]
        if kind == "if":
            return self.if_statement(scope, depth, in_loop)
        if kind == "for":
            return self.for_statement(scope, depth)
        return self.while_statement(scope, depth)

    def value(self, scope, kind: str) -> str:
        """An expression to store: reduced ``% MODULUS`` when it computes."""
        value = self.expr(scope, kind)
        if any(op in value for op in "+-*"):
            value = f"({value}) % {MODULUS}"
        return value

    def element(self, scope) -> str:
        """A value to append to ``acc``: without append_number, computed from a tensor input."""
        if self.on("append_number"):
            return self.value(scope, V)
        return f"({self.pick(('a', 'b'))} + {self.expr(scope, V)}) % {MODULUS}"

    def pop_statement(self, scope) -> list[str]:
        """``if len(acc) > 0: acc.pop()``, the guard maybe ``and``-ed with a condition, the item maybe stored."""
        guard = self.pick(("len(acc) > 0", "len(acc) >= 1", "0 < len(acc)"))
        if self.on("boolop") and self.choose(0, 2) == 0:
            extra = self.cond(scope, 1)
            guard = f"({extra}) and {guard}" if self.on("pop_late_guard") and self.choose(0, 1) else f"{guard} and {extra}"
        targets = [t for t, k in self.slots if self.compatible(V, k) and self.writable(t, "assign")]
        if not self.on("pop_to_item"):
            targets = [t for t in targets if t.isidentifier()]
        if self.choose(0, 1) and targets:
            target = self.pick(targets)
            body = f"{target} = acc.pop()"
        else:
            target, body = None, "acc.pop()"
        written = {"acc"} | ({target} if target else set())
        for outer in self.writes:
            outer.update(written)
        if self.loop_if_writes:
            self.loop_if_writes[-1].update(written)
        return [f"if {guard}:", f"    {body}"]

    def readable(self, target: str) -> bool:
        """Whether a statement may read ``target`` here (as an augmented assignment does)."""
        if target in self.excluded:
            return False
        return not (self.loop_if_writes and not self.on("augassign_after_if_in_loop")
                    and target in self.loop_if_writes[-1])

    def wrote(self, target: str) -> None:
        for written in self.writes:
            written.add(target)

    def call_statement(self, scope) -> list[str]:
        """A call that updates state: a module-level helper, a method, or a closure with ``nonlocal``."""
        calls = [("inc({})", "k", I)] + ([(_LOCAL_INC, "k", I)] if self.on("local_helper") else [])
        if self.on("attr"):
            calls += [("bump(o, {})", "o.v", V), ("o.add({})", "o.v", V)]
        if self.on("dict"):
            calls += [("put(d, {})", "d['y']", V)]
        calls = [call for call in calls if self.readable(call[1])]
        if not calls:
            return []
        template, target, kind = self.pick(calls)
        self.wrote(target)
        return template.format(self.expr(scope, kind)).split("\n")

    def v_readable(self) -> bool:
        return self.on("tensor_index") and "v" not in self.excluded

    def index(self, scope, depth: int = 0) -> str:
        """An index into ``v``: ``e % 4`` (often out of range) or ``e % max(len(v), 1)`` (only for an empty ``v``)."""
        bound = self.pick(("4", "max(len(v), 1)", "max(len(v), 1)"))
        return f"({self.expr(scope, I, depth + 1)}) % {bound}"

    def index_statement(self, scope) -> list[str]:
        """``v[e % 4] = e``, ``v[e % 4] += e`` (out of range: IndexError) or the same on a slice of ``v``."""
        self.wrote("v")
        where = self.index(scope)
        form = self.choose(0, 3)
        if form <= 1:
            self.raises.add("IndexError")
        target = f"v[{where}]" if form <= 1 else self.pick((f"v[{where}:]", f"v[:{where}]"))
        if form % 2:
            # numpy's in-place add casts 'same_kind': no int32 into a narrow v (a TypeError); with mix
            # any state slot may hold an int32, so only the inputs or a constant then
            leaf = self.pick(("a", "b", str(self.choose(0, 9)))) if self.mix else self.leaf(scope, V)
            return [f"{target} += {leaf}"]
        return [f"{target} = {self.value(scope, V)}"]

    def walrus_name(self) -> str:
        self.walruses += 1
        return f"w{self.walruses - 1}"

    def read_after(self, name: str) -> list[str]:
        """``s = (s + w) % 97`` right after the statement whose test bound ``w``."""
        targets = [t for t, k in self.slots if k == I and self.readable(t)]
        if not targets:
            return []
        target = self.pick(targets)
        self.wrote(target)
        return [f"{target} = ({target} + {name}) % {MODULUS}"]

    def writable(self, target: str, kind: str) -> bool:
        """Whether ``target`` may be assigned inside control flow."""
        if target[0] in "dl" and "[" in target:
            return self.on("item_augassign" if kind == "augassign" else "item_assign")
        return True

    def if_statement(self, scope, depth, in_loop) -> list[str]:
        outer_excluded = self.excluded
        written = set()
        self.writes.append(written)
        test, after = self.cond(scope), []
        if self.on("walrus") and self.choose(0, 2) == 0:
            name = self.walrus_name()
            op = self.pick(("<", "<=", "==", "!=", ">", ">="))
            test = f"({name} := {self.expr(scope, I)}) {op} {self.expr(scope, I)}"
            scope, after = scope + [(name, I)], [name]
        lines = [f"if {test}:"] + _indent(self.block(scope, depth + 1, in_loop))
        if self.on("elif"):
            for _ in range(self.choose(0, 1)):
                self.exclude(written)
                lines += [f"elif {self.cond(scope)}:"] + _indent(self.block(scope, depth + 1, in_loop))
        if self.on("else") and self.choose(0, 1):
            self.exclude(written)
            lines += ["else:"] + _indent(self.block(scope, depth + 1, in_loop))
        self.writes.pop()
        self.excluded = outer_excluded
        if self.loop_if_writes:
            self.loop_if_writes[-1].update(written)
        for name in after:
            lines += self.read_after(name)
        return lines

    def exclude(self, written: set[str]) -> None:
        """Without branch_cross_read, the next branch reads nothing the earlier ones write."""
        if not self.on("branch_cross_read"):
            self.excluded = self.excluded | written

    def for_statement(self, scope, depth) -> list[str]:
        shapes = []
        if self.on("for_range"):
            shapes += ["range(n)", "range(n)", f"range({self.choose(0, MAX_BOUND)})",
                       f"range({self.expr(scope, I)} % {MAX_BOUND + 1})"]
        if self.on("for_tensor") and "v" not in self.excluded:
            shapes += ["v", "v"]
        if self.on("for_list") and self.acc_readable():
            shapes += ["acc"]
        if not shapes:
            shapes = ["range(n)"] if self.on("for_range") else [f"range({self.choose(0, MAX_BOUND)})"]
        iterable = self.pick(shapes)
        if iterable in ("v", "acc"):
            var, kind = f"x{self.loops}", V
        else:
            var, kind = f"i{self.loops}", P  # a Python int in Python, whatever range's bound
        self.loops += 1
        self.loop_if_writes.append(set())
        self.iterating_acc += iterable == "acc"
        self.iterating_v += iterable == "v"
        body = self.block(scope + [(var, kind)], depth + 1, True)
        self.iterating_acc -= iterable == "acc"
        self.iterating_v -= iterable == "v"
        self.loop_if_writes.pop()
        return [f"for {var} in {iterable}:"] + _indent(body)

    def while_statement(self, scope, depth) -> list[str]:
        counter = f"c{self.loops}"
        self.loops += 1
        shapes = []
        if self.on("while"):
            shapes += ["n", "n", "const"]
        if self.on("while_true"):
            shapes.append("true")
        shape = self.pick(shapes)
        lines = [f"{counter} = 0"]
        body = [f"{counter} += 1"]
        after = []
        if shape == "true":
            lines.append("while True:")
            body += [f"if {counter} > {self.choose(0, MAX_BOUND)}:", "    break"]
        else:
            bound = "n" if shape == "n" else str(self.choose(1, MAX_BOUND))
            test, outside = f"{counter} < {bound}", scope  # (outside: the names bound before the test)
            extra = self.cond(scope) if self.choose(0, 2) else None
            if self.on("walrus") and self.choose(0, 1):
                # the walrus comes first: it binds its name whatever the rest of the test gives
                name = self.walrus_name()
                test, scope, after = f"({name} := {counter}) < {bound}", scope + [(name, I)], [name]
                test = f"{test} and {extra}" if extra else test
            elif extra:
                test = f"{test} and {extra}" if self.choose(0, 1) else f"({extra}) and {test}"
            if self.on("test_call") and self.on("helper_call") and self.readable("k") and not self.choose(0, 3):
                # a test with an effect: inc returns None, so the loop's test is the rest
                self.wrote("k")
                test = f"(inc({self.expr(outside, I)}) or {test})"
            lines.append(f"while {test}:")
        self.loop_if_writes.append(set())
        body += self.block(scope, depth + 1, True)
        self.loop_if_writes.pop()
        lines += _indent(body)
        for name in after:
            lines += self.read_after(name)
        return lines

    def return_statement(self, scope) -> str:
        return "return " + self.result

    # -- the program

    def program(self) -> str:
        self.slots = self.state()
        body = []
        for name, kind in (("s", I), ("k", I), ("t", V), ("u", V)):
            body.append(f"{name} = {self.initial(kind)}")
        if self.on("dict"):
            body.append(f"d = {{'x': {self.initial(I)}, 'y': {self.initial(V)}}}")
        if self.on("list"):
            body.append(f"l = [{self.initial(I)}, {self.initial(V)}]")
            # a second name for the list: a tensor statement rebinding l on some paths only is refused
            # then (container_identity), so one program in three
            self.keep = self.on("rebind") and self.choose(0, 2) == 2
            if self.keep:
                body.append("keep = l")
        if self.on("attr"):
            body += ["o = Box()", f"o.v = {self.initial(V)}"]
        if self.on("append"):
            items = [self.initial(V) for _ in range(self.pick((0, 0, 1, 2)))]
            if not self.on("append_number"):
                items = [item if not item.isdigit() else self.pick(("a", "b")) for item in items]
            body.append(f"acc = [{', '.join(items)}]")
            # One list in three has an alias: a tensor statement growing an aliased list is refused
            # by design (see test_fuzz_traced's "refused"), and a refused program tests nothing else.
            if self.on("alias") and self.choose(0, 2) == 2:
                alias = self.pick(("ys", "box['r']"))
                body.append("ys = acc" if alias == "ys" else "box = {'r': acc}")
                self.aliases.append(alias)
        if self.on("helper_call"):
            body += ["def inc(x):", "    nonlocal k", f"    k = (k + x) % {MODULUS}"]
        if self.on("numpy_buffer") and self.on("tensor_index") and self.choose(0, 1):
            body.append(f"v = np.full(4, {self.choose(0, 5)}, '{self.dtype}')")
            self.v_numpy = True
        if self.on("return_containers") and self.choose(0, 1):
            parts = ["s", "k", "t", "u"]
            parts += ["d"] if self.on("dict") else []
            parts += ["l"] if self.on("list") else []
            parts += ["o.v"] if self.on("attr") else []
        else:
            parts = [target for target, _ in self.slots]
        header = [f"# dtype: {self.dtype}"]
        if self.mix:
            header.append("# mixes dtypes")
        if self.on("append"):
            parts.append("len(acc)")
            if self.on("return_list") and self.choose(0, 1):
                header.append(f"# staged: result[{len(parts)}]")
                parts.append("acc")
                self.returns_acc = True
        if self.on("tensor_index"):
            parts.append("v")
        if self.keep:
            parts += ["keep[0]", "keep[1]"]
        self.result = ", ".join(parts)
        body += self.block([], 0, False)
        if self.on("append"):
            body += self.list_reads()
        body.append(f"return {self.result}")
        if self.raises:
            header.append(f"# may raise: {', '.join(sorted(self.raises))}")
        helpers = HELPERS if self.on("helper_call") else []
        return "\n".join(header + helpers + ["def prog(a, b, n, v):"] + _indent(body)) + "\n"

    def list_reads(self) -> list[str]:
        """Reads of ``acc`` after the program's statements: a sum over it, a guarded last or first item."""
        targets = [t for t, k in self.slots if self.compatible(V, k)]
        lines = []
        if self.on("for_list") and self.choose(0, 1):
            var, target = f"x{self.loops}", self.pick(targets)
            self.loops += 1
            lines += [f"for {var} in acc:", f"    {target} = ({target} + {var}) % {MODULUS}"]
        if self.on("list_index") and self.choose(0, 1):
            index = self.pick((-1, 0))
            lines += ["if len(acc) > 0:", f"    {self.pick(targets)} = acc[{index}]"]
        return lines


# A closure defined where it is called (in a tensor loop body or branch), updating ``k`` through
# ``nonlocal``: the converter does not see ``k`` assigned there (tests/test_nonlocal_in_bodies.py).
_LOCAL_INC = "\n".join(["def inc_here(x):", "    nonlocal k", f"    k = (k * 3 + x) % {MODULUS}", "inc_here({})"])

HELPERS = [
    "def bump(o, x):",
    f"    o.v = (o.v + x) % {MODULUS}",
    "def put(d, x):",
    f"    d['y'] = (d['y'] + x) % {MODULUS}",
]


class Box:
    """The object whose attribute ``o.v`` generated programs update (also through ``add``)."""

    def add(self, x):
        self.v = (self.v + x) % MODULUS

    def __repr__(self):
        return f"Box({vars(self)!r})"


def program_dtype(source: str) -> str:
    """The dtype a program's ``a``, ``b`` and ``v`` take (from its header line)."""
    return source.split("\n", 1)[0].removeprefix("# dtype: ").strip()


def mixes_dtypes(source: str) -> bool:
    """Whether the program mixes kinds in a narrow dtype (the ``# mixes dtypes`` header line)."""
    return re.search(r"^# mixes dtypes$", source, re.MULTILINE) is not None


def staged_results(source: str) -> frozenset[int]:
    """Indices of the results that may come back as a staged list (the ``# staged: result[i]`` lines)."""
    return frozenset(int(i) for i in re.findall(r"^# staged: result\[(\d+)\]$", source, re.MULTILINE))


def may_raise(source: str) -> frozenset[str]:
    """Names of the exceptions the program may raise (its ``# may raise:`` header line)."""
    found = re.search(r"^# may raise: (.*)$", source, re.MULTILINE)
    return frozenset(found.group(1).split(", ")) if found else frozenset()
