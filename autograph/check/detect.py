"""The rules: walk one analysed function and report what breaks the tracing rules.

``findings(facts, source)`` yields ``(node, code, fields)``: the node
whose position is reported, a code of ``rules.RULES`` and the fields of its
message and fix.  It reads the levels of ``taint.Facts`` and never guesses
beyond them: a rule that needs a tensor fires on ``TENSOR`` (or ``MAYBE``
for library calls, which fail on a nest of tensors as well), a rule that
needs a Python value fires on ``PY`` only.

Statements under a first-call guard (``if self.v is None:``,
``if not hasattr(self, "v"):``, ``if key not in cache:``) run once by
design, so creating variables and setting attributes there is not reported.
"""

from __future__ import annotations

import ast

from autograph.check import equivalents, taint
from autograph.check.taint import MAYBE, PY, TENSOR

_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")
_MUTATORS = frozenset({
    "append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem", "add",
    "discard", "sort", "reverse", "appendleft", "extendleft", "popleft",
})
_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})
_ITERATING = frozenset({"list", "tuple", "set", "frozenset", "sorted", "sum", "min", "max", "any", "all", "iter",
                        "dict", "enumerate", "zip"})
_VARIABLE = frozenset({
    "autograph.runtime.Variable", "autograph.runtime.ops.variables.Variable",
})
_UNCONVERTED = "in code autograph does not convert (@ag.do_not_convert, rt.function or autograph=False)"
_FIX_BOOL = "let autograph convert this code (drop @ag.do_not_convert / autograph=False), or use rt.cond / rt.where"
_FIX_TYPE = ("let autograph convert this code and use isinstance(x, ...) / type(x) (answered as numpy's types "
             "for the array a tensor stands for), or test x.ndim / x.dtype")
# builtins that iterate their argument, which converted code stages for a tensor
_STAGED_ITERATING = frozenset({"enumerate", "zip", "max", "min", "sum", "any", "all"})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_FIX_ITER = "let autograph convert this code (a converted for loop stages it), or index the tensor / use rt.while_loop"


def _text(source, node, limit=48) -> str:
    text = " ".join((ast.get_source_segment(source, node) or type(node).__name__).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_text(node) -> bool:
    return isinstance(node, ast.JoinedStr) or isinstance(node, ast.Constant) and isinstance(node.value, str)


def guarded_branch(test):
    """``"body"``/``"orelse"``: the branch of ``if test`` that runs on the first call only, else None."""
    if isinstance(test, ast.BoolOp):
        branches = {guarded_branch(v) for v in test.values}
        return "body" if "body" in branches else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, right = test.ops[0], test.comparators[0]
        is_none = isinstance(right, ast.Constant) and right.value is None
        if (isinstance(op, (ast.Is, ast.Eq)) and is_none) or isinstance(op, ast.NotIn):
            return "body"
        if (isinstance(op, (ast.IsNot, ast.NotEq)) and is_none) or isinstance(op, ast.In):
            return "orelse"
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        if isinstance(test.operand, (ast.Name, ast.Attribute, ast.Subscript)) or _is_hasattr(test.operand):
            return "body"
    if _is_hasattr(test):
        return "orelse"
    return None


def _is_hasattr(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hasattr"


def _root_name(node):
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


class _Walker:
    def __init__(self, facts, source):
        self.facts = facts
        self.source = source
        self.converted = facts.mode == "converted"
        self.found = []
        self.comprehension_names = {
            name for node in taint.walk_body(facts.node) if isinstance(node, ast.comprehension)
            for name in taint.sym.target_names(node.target)
        }

    def report(self, node, code, **fields):
        self.found.append((node, code, fields))

    def text(self, node) -> str:
        return _text(self.source, node)

    def level(self, node) -> int:
        return self.facts.level(node)

    # -- statements -----------------------------------------------------------------------

    def statements(self, body, guarded):
        for statement in body:
            self.statement(statement, guarded)

    def statement(self, node, guarded):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for decorator in node.decorator_list:
                self.expression(decorator, guarded)
            return
        handler = getattr(self, "on_" + type(node).__name__, None)
        if handler is not None:
            handler(node, guarded)
        branch = guarded_branch(node.test) if isinstance(node, ast.If) else None
        for field, value in ast.iter_fields(node):
            if field in _STATEMENT_LISTS:
                for child in value:
                    if isinstance(child, (ast.ExceptHandler, ast.match_case)):
                        self.statements(child.body, guarded)
                    else:
                        self.statement(child, guarded or branch == field)
            elif isinstance(value, ast.AST):
                self.expression(value, guarded)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.expression(item, guarded)

    def on_If(self, node, guarded):
        self.condition(node.test, "an `if` test")

    def on_While(self, node, guarded):
        if self.converted:
            self.loop_bound(node.test, f"while {self.text(node.test)}")
        elif self.level(node.test) == TENSOR:
            self.bool_use(node.test, "a `while` test")

    def on_For(self, node, guarded):
        loop = f"for {self.text(node.target)} in {self.text(node.iter)}"
        if self.converted:
            call = node.iter
            if isinstance(call, ast.Call) and self.facts.builtin(call.func) == "range":
                self.loop_bound(call, loop)
        elif self.level(node.iter) == TENSOR:
            self.report(node.iter, "AG110", use="iteration", arg=self.text(node.iter), where=_UNCONVERTED,
                        replacement=_FIX_ITER)

    def on_Match(self, node, guarded):
        if self.level(node.subject) != TENSOR:
            return
        for case in node.cases:
            for pattern in ast.walk(case.pattern):
                if isinstance(pattern, ast.MatchClass):
                    self.report(pattern, "AG111", construct=f"the class pattern `case {self.text(pattern)}`",
                                arg=self.text(node.subject), where="in a `match`", replacement=_FIX_TYPE)

    def on_Assert(self, node, guarded):
        if not self.converted and self.level(node.test) == TENSOR:
            self.bool_use(node.test, "an assert")

    def on_Assign(self, node, guarded):
        for target in node.targets:
            self.target(target, guarded, node)
        if any(isinstance(t, (ast.Tuple, ast.List)) for t in node.targets) and self.level(node.value) == TENSOR:
            self.report(node.value, "AG110", use="unpacking", arg=self.text(node.value),
                        where="(tuple unpacking is not converted)",
                        replacement="index the tensor (x[0], x[1]) or unpack a tuple the function returns")

    def on_AugAssign(self, node, guarded):
        self.target(node.target, guarded, node)

    def on_AnnAssign(self, node, guarded):
        if node.value is not None:
            self.target(node.target, guarded, node)

    def on_Delete(self, node, guarded):
        for target in node.targets:
            self.target(target, guarded, node)

    def on_Global(self, node, guarded):
        self.counters(node, "global")

    def on_Nonlocal(self, node, guarded):
        self.counters(node, "nonlocal")

    def counters(self, node, kind):
        rebound = {n for n in self.facts.bound}
        for name in node.names:
            if name not in rebound:
                continue
            if kind == "nonlocal" and self.facts.outer is not None and self.facts.outer.in_chain(name):
                continue  # a local of the traced function around it: part of the same trace
            note = " (and ag.function cannot convert a `global` statement: ag.ConversionError)" \
                if kind == "global" and self.converted else ""
            self.report(node, "AG105", kind=kind, name=name, note=note)

    def target(self, target, guarded, statement):
        if guarded or not isinstance(target, (ast.Attribute, ast.Subscript)):
            return
        name = _root_name(target)
        if self.outside(name):
            verb = {ast.Delete: "deleting", ast.AugAssign: "updating"}.get(type(statement), "assigning")
            self.report(target, "AG104", what=f"{verb} {self.text(target)}", name=name)

    def outside(self, name) -> bool:
        """Whether ``name`` is an object from outside the traced code (a global, a closure, ``self``)."""
        if name is None or name in self.comprehension_names:
            return False
        if name == self.facts.self_name:
            return True
        return not self.facts.in_chain(name) and name not in taint.BUILTIN_NAMES

    # -- control flow ------------------------------------------------------------------

    def condition(self, test, use):
        level = self.level(test)
        if not self.converted:
            if level == TENSOR:
                self.bool_use(test, use)
            return
        shape = self.shape_of_tensor(test)
        if level == PY and shape is not None:
            self.report(test, "AG109", test=self.text(test), tensor=self.text(shape.value))

    def loop_bound(self, bound, loop):
        """AG108 for a bound read from ``x.shape``, AG107 for one from a Python argument."""
        if self.level(bound) != PY:
            return
        shape = self.shape_of_tensor(bound)
        if shape is not None:
            self.report(bound, "AG108", loop=loop, shape=self.text(shape), tensor=self.text(shape.value))
            return
        argument = self.python_argument(bound)
        if argument is not None:
            self.report(bound, "AG107", loop=loop, arg=argument)

    def shape_of_tensor(self, node):
        """The first ``t.shape`` in ``node`` where ``t`` may be a tensor, or None."""
        for child in ast.walk(node):
            if isinstance(child, ast.Attribute) and child.attr == "shape" and self.level(child.value) >= MAYBE:
                return child
        return None

    def python_argument(self, node):
        """The parameter (with a Python value) that ``node``'s value comes from, directly or via locals."""
        facts = self.facts
        python_params = {n for n, level in facts.params.items() if level == PY and n != facts.self_name}
        seen, stack = set(), [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in python_params:
                return name
            stack.extend(facts.deps.get(name, ()))
        return None

    def bool_use(self, node, use):
        self.report(node, "AG110", use=use, arg=self.text(node), where=_UNCONVERTED, replacement=_FIX_BOOL)

    # -- expressions -------------------------------------------------------------------

    def expression(self, root, guarded):
        stack = [root]
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Lambda):
                continue  # runs whenever it is called (often by rt.py_function): not this trace
            kind = type(node)
            if kind is ast.Call:
                self.call(node, guarded)
            elif kind is ast.IfExp:
                self.condition(node.test, "a conditional expression")
            elif not self.converted and kind is ast.BoolOp:
                for value in node.values[:-1]:
                    if self.level(value) == TENSOR:
                        self.bool_use(value, "`and`/`or`")
            elif not self.converted and kind is ast.UnaryOp and isinstance(node.op, ast.Not):
                if self.level(node.operand) == TENSOR:
                    self.bool_use(node.operand, "`not`")
            elif kind is ast.JoinedStr or kind is ast.BinOp and isinstance(node.op, ast.Mod) and _is_text(node.left):
                self.formatting(node)
            elif kind in _COMPREHENSIONS:
                self.comprehension(node)
            stack.extend(reversed(list(ast.iter_child_nodes(node))))

    def comprehension(self, node):
        """AG110 for a comprehension over a tensor that is not staged: in unconverted code, and in
        converted code a set or dict comprehension or one of several ``for`` clauses (a list
        comprehension or generator expression with one ``for`` is a staged loop)."""
        staged = self.converted and type(node) in (ast.ListComp, ast.GeneratorExp) and len(node.generators) == 1
        if staged:
            return
        for generator in node.generators:
            if self.level(generator.iter) == TENSOR:
                where = _UNCONVERTED if not self.converted else (
                    "in a set or dict comprehension, or one of several `for` clauses (only a list comprehension "
                    "or generator expression with one `for` over a tensor is staged)")
                self.report(generator.iter, "AG110", use="iteration", arg=self.text(generator.iter), where=where,
                            replacement="use a for loop (converted and staged), a list comprehension, or vectorized "
                            "rt ops")
                return

    def formatting(self, node):
        """AG112 for the first tensor an f-string or a ``%`` formatting shows."""
        if isinstance(node, ast.JoinedStr):
            shown = [v.value for v in node.values if isinstance(v, ast.FormattedValue)]
            construct = "an f-string"
        else:
            shown = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
            construct = "`%` formatting"
        for value in shown:
            if self.level(value) == TENSOR:
                self.report(node, "AG112", construct=construct, arg=self.text(value))
                return

    def call(self, node, guarded):
        facts = self.facts
        origin = facts.qualname(node.func)
        if origin is not None:
            self.library_call(node, origin, guarded)
            return
        name = facts.builtin(node.func)
        if name is not None:
            self.builtin_call(node, name)
            return
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "format" and _is_text(func.value):
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                if self.level(argument) == TENSOR:
                    self.report(node, "AG112", construct="str.format()", arg=self.text(argument))
                    return
        if isinstance(func, ast.Attribute) and func.attr in _MUTATORS and not guarded:
            root = _root_name(func.value)
            if self.outside(root):
                self.report(node, "AG104", what=f"{self.text(func)}(...)", name=root)

    def library_call(self, node, origin, guarded):
        call = self.text(node.func)
        top = origin.split(".")[0]
        if origin.startswith("numpy.random.") or top == "random" or origin in equivalents.CLOCKS:
            self.report(node, "AG102", call=f"{call}(...)", replacement=equivalents.random_fix(origin))
        elif top in taint.LIBRARIES:
            self.tensor_argument(node, origin, call)
        elif top == "logging" and origin.rsplit(".", 1)[-1] in _LOG_METHODS or origin == "warnings.warn" \
                or origin in ("sys.stdout.write", "sys.stderr.write"):
            self.report(node, "AG103", call=f"{call}(...)", why="")
        elif origin in _VARIABLE and not guarded:
            self.report(node, "AG106", call=f"{call}(...)")

    def tensor_argument(self, node, origin, call):
        for argument in [*node.args, *(k.value for k in node.keywords)]:
            if self.level(argument) >= MAYBE:
                args = ", ".join(self.text(a) for a in node.args)
                spelling = equivalents.rt_spelling(origin, args)
                replacement = f"use {spelling}" if spelling else (
                    f"no rt op computes it: compute it with rt ops, or run it at every call with "
                    f"rt.py_function({call}, [{self.text(argument)}], Tout)"
                )
                self.report(node, "AG101", call=call, arg=self.text(argument), replacement=replacement)
                return

    def builtin_call(self, node, name):
        first = node.args[0] if node.args else None
        if name == "print":
            levels = [self.level(a) for a in [*node.args, *(k.value for k in node.keywords if k.arg != "file")]]
            if not self.converted:
                self.report(node, "AG103", call="print(...)", why=" (code autograph does not convert never stages it)")
            elif all(level == PY for level in levels):
                self.report(node, "AG103", call="print(...)", why=" (no argument is a tensor, so it is not staged)")
        elif first is None or self.level(first) != TENSOR:
            return
        elif name in ("str", "format"):
            self.report(node, "AG112", construct=f"{name}()", arg=self.text(first))
        elif name in ("isinstance", "type"):
            if not self.converted:
                self.report(node, "AG111", construct=f"{name}()", arg=self.text(first), where=_UNCONVERTED,
                            replacement=_FIX_TYPE)
        elif name == "bool":
            if not self.converted:  # converted code stages bool() (numpy's truth, checked when the graph runs)
                self.report(node, "AG110", use="bool()", arg=self.text(first), where=_UNCONVERTED,
                            replacement=_FIX_BOOL)
        elif name in _ITERATING and (not self.converted or name not in _STAGED_ITERATING):
            self.report(node, "AG110", use=f"{name}()", arg=self.text(first),
                        where=f"({name}() iterates in Python)" if self.converted else _UNCONVERTED,
                        replacement="use the rt reductions (rt.reduce_sum, rt.reduce_max, ...) or a converted for loop")
        elif name in ("len", "range") and not self.converted:
            self.report(node, "AG110", use=f"{name}()", arg=self.text(first), where=_UNCONVERTED,
                        replacement=f"use rt.shape({self.text(first)})[0], or {self.text(first)}.shape[0] for a static size")


def findings(facts, source):
    """``(node, code, fields)`` for every rule ``facts.node`` breaks."""
    walker = _Walker(facts, source)
    walker.statements(facts.node.body, guarded=False)
    return walker.found
