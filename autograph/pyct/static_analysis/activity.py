"""Activity analysis: which symbols each statement reads and binds.

Annotates (keys documented in ``anno``):

* every ``FunctionDef``/``Lambda`` with ``SCOPE``, a ``Scope``;
* every statement with ``USES`` and ``DEFS``: the names the statement
  itself reads and binds, not counting its nested blocks (an ``if``: its
  test; a ``for``: its iterable and extra loop test / its target; a nested
  ``def``: its decorators and defaults, plus the free variables
  of its body, read when the closure runs; a ``class``: see below);
* every ``If``/``While``/``For`` with ``MODIFIED``: the names bound anywhere
  in its blocks, plus the attribute chains assigned there (``self.total``),
  plus the containers mutated there, spelled ``container[]``: the object a
  subscript is assigned or deleted in (``x['a']['b'] = 1``, ``del x[i]``:
  ``x[]``; ``self.d[k] = v``: ``self.d[]``) or whose mutating method is
  called (``l.append(v)``, ``d.update(e)``: ``l[]``, ``d[]``).

A nested function, lambda or generator expression is its own scope
(except the lambdas converters make for lazy operands, ``anno.IN_PLACE``:
they run at once, so their reads are reads of the statement):
the names of the enclosing function it mentions are *captured* (they may be
read or written at any later time, so liveness treats them as always live).
Comprehensions other than generator expressions run at once: their reads
count as reads of the statement (their targets are their own; the first
iterable, a generator expression's too, is read where it stands).

A nested class body runs once, at its statement, in a scope of its own: what
it binds are class attributes (``nonlocal`` names excepted), what else it
reads is read by the class statement; the free names of its methods,
lambdas and comprehensions (which do not see the class's names) are
captured.  A name a nested scope declares ``global`` is never the function's.
"""

from __future__ import annotations

import gast

from autograph.pyct import anno, ast_util, qual_names
from autograph.pyct.static_analysis import walrus_reads

# Methods of Python's containers that change them in place.
MUTATING_METHODS = frozenset({
    "append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem",
    "sort", "reverse", "add", "discard", "__setitem__", "__delitem__",
})


def container_of(node):
    """``'x[]'`` for a subscript or method receiver rooted at a stable chain, else None.

    The container is the chain up to its first subscript: ``x['a'][0]`` and
    ``x`` give ``x[]``, ``self.d['k']`` and ``self.d`` give ``self.d[]``.
    """
    chain = []
    while type(node) in (gast.Subscript, gast.Attribute):
        chain.append(node)
        node = node.value
    if type(node) is not gast.Name:
        return None
    base = node
    for link in reversed(chain):
        if type(link) is gast.Subscript:
            break
        base = link
    qn = qual_names.qn_of(base)
    return None if qn is None else qn + "[]"


def _mutations(node) -> set:
    """The containers a simple statement mutates through a method call (``l.append(x)``)."""
    found = set()
    for child in ast_util.walk(node):
        if type(child) is not gast.Call:
            continue
        func = child.func
        if type(func) is gast.Attribute and type(func.value) is gast.Name and func.value.id == "ag__" and child.args:
            if func.attr in ("aug_setitem", "list_append", "list_extend", "list_pop"):  # x = ag__.aug_setitem(x, i, '=', v)
                container = container_of(child.args[0])
                if container is not None:
                    found.add(container)
                continue
            if func.attr == "converted_call":
                func = child.args[0]  # call_trees ran first: ag__.converted_call(l.append, x)
        if type(func) is gast.Attribute and func.attr in MUTATING_METHODS:
            container = container_of(func.value)
            if container is not None:
                found.add(container)
    return found


_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp)


class Scope:
    """Symbols of one function scope.

    ``params``: parameter names; ``bound``: every name bound in the scope
    (parameters included); ``globals``/``nonlocals``: declared names;
    ``captured``: local names that nested scopes mention; ``free``: names
    the scope mentions without binding them.
    """

    __slots__ = ("params", "bound", "globals", "nonlocals", "captured", "free", "uses_locals")

    def __init__(self):
        self.params = []
        self.bound = set()
        self.globals = set()
        self.nonlocals = set()
        self.captured = set()
        self.free = set()
        self.uses_locals = False

    @property
    def locals(self) -> set:
        return self.bound - self.globals - self.nonlocals

    @property
    def always_live(self) -> set:
        """Names whose value is observable outside the straight-line code."""
        return self.captured | self.globals | self.nonlocals

    def __repr__(self):
        def fmt(names):
            return "{" + ", ".join(sorted(names)) + "}"

        return (
            f"Scope(params={self.params}, locals={fmt(self.locals)}, globals={fmt(self.globals)}, "
            f"nonlocals={fmt(self.nonlocals)}, captured={fmt(self.captured)}, free={fmt(self.free)})"
        )


class _ScopeWalker:
    """Walks one scope; nested scopes get their own walker."""

    __slots__ = ("scope", "reads", "nested_free", "walrus", "in_class")

    def __init__(self):
        self.scope = Scope()
        self.reads = set()
        self.nested_free = set()
        self.walrus = False  # a walrus seen in this scope so far: only then can a read follow one
        self.in_class = False  # a class body: its comprehensions do not see its names

    # -- expressions --------------------------------------------------------

    def expr(self, node, uses, defs):
        """Collects the names ``node`` reads into ``uses`` and binds into ``defs``."""
        kind = type(node)
        if kind is gast.Name:
            ctx = type(node.ctx)
            if ctx is gast.Load:
                uses.add(node.id)
            elif ctx is gast.Store:
                defs.add(node.id)
            else:
                uses.add(node.id)
                defs.add(node.id)
            return
        if kind is gast.Lambda and anno.get(node, anno.IN_PLACE, False):
            # Its parameters (a list comprehension's target) are its own, not the statement's.
            params = {a.id for a in node.args.args}
            inner_uses, inner_defs = set(), set()
            self.expr(node.body, inner_uses, inner_defs)
            uses |= inner_uses - params
            defs |= inner_defs - params
            return
        if kind is gast.Lambda:
            for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
                self.expr(default, uses, defs)
            self._nested(node, uses)
            return
        if kind in _COMPREHENSIONS or kind is gast.GeneratorExp:
            self.expr(node.generators[0].iter, uses, defs)  # evaluated where the comprehension stands
            inner_uses, inner_defs, targets = set(), set(), set()
            for index, generator in enumerate(node.generators):
                self.expr(generator.target, set(), targets)
                if index:
                    self.expr(generator.iter, inner_uses, inner_defs)
                for condition in generator.ifs:
                    self.expr(condition, inner_uses, inner_defs)
            if kind is gast.DictComp:
                self.expr(node.key, inner_uses, inner_defs)
                self.expr(node.value, inner_uses, inner_defs)
            else:
                self.expr(node.elt, inner_uses, inner_defs)
            outer = inner_uses - targets
            uses |= outer
            defs |= inner_defs - targets  # walrus inside a comprehension binds outside
            if kind is gast.GeneratorExp or self.in_class:  # a class's comprehension does not see its names
                self.nested_free |= outer
            return
        if kind is gast.Call and type(node.func) is gast.Name and node.func.id in ("locals", "vars", "eval", "exec"):
            self.scope.uses_locals = True
        elif kind is gast.NamedExpr:
            self.walrus = True
        for field in node._fields:
            value = getattr(node, field)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, gast.AST):
                        self.expr(item, uses, defs)
            elif isinstance(value, gast.AST):
                self.expr(value, uses, defs)

    def target(self, node, uses, defs, modified):
        """An assignment target: names are bound; attribute chains are modified."""
        kind = type(node)
        if kind is gast.Name:
            defs.add(node.id)
        elif kind in (gast.Tuple, gast.List):
            for element in node.elts:
                self.target(element, uses, defs, modified)
        elif kind is gast.Starred:
            self.target(node.value, uses, defs, modified)
        else:
            if kind is gast.Attribute:
                qn = qual_names.qn_of(node)
                if qn is not None:
                    modified.add(qn)
                self.expr(node.value, uses, defs)
            else:
                if kind is gast.Subscript:
                    container = container_of(node)
                    if container is not None:
                        modified.add(container)
                self.expr(node, uses, defs)

    def _nested(self, node, uses):
        """Analyses a nested function or lambda; its free names count as reads here."""
        free = analyze(node)
        uses |= free
        self.nested_free |= free

    # -- statements ---------------------------------------------------------

    def block(self, statements) -> set:
        modified = set()
        for statement in statements:
            modified |= self.statement(statement)
        return modified

    def statement(self, node) -> set:
        """Annotates ``node``; returns the symbols bound anywhere in it."""
        uses, defs, modified = set(), set(), set()
        kind = type(node)
        _STATEMENTS.get(kind, _ScopeWalker._expression_statement)(self, node, uses, defs, modified)
        if kind in _VALUED:
            modified |= _mutations(node)
        value = node.test if kind is gast.If else getattr(node, "value", None) if kind in _VALUED else None
        if defs and value is not None and self.walrus:  # `c += (t := f(i)) * t` does not read t before it
            uses -= walrus_reads.bound_before_read(value) - _read_first(node)
        anno.set(node, anno.USES, frozenset(uses))
        anno.set(node, anno.DEFS, frozenset(defs))
        self.reads |= uses
        self.scope.bound |= defs
        return modified | defs

    # One rule per statement type: each adds what the statement itself reads to ``uses``, what it
    # binds to ``defs``, and what it (or a block in it) binds or changes to ``modified``.

    def _assign(self, node, uses, defs, modified):
        self.expr(node.value, uses, defs)
        for target in node.targets:
            self.target(target, uses, defs, modified)

    def _aug_assign(self, node, uses, defs, modified):
        self.expr(node.value, uses, defs)
        self.target(node.target, uses, defs, modified)
        if type(node.target) is gast.Name:
            uses.add(node.target.id)

    def _ann_assign(self, node, uses, defs, modified):
        if node.value is not None:
            self.expr(node.value, uses, defs)
            self.target(node.target, uses, defs, modified)
        elif type(node.target) is not gast.Name:
            self.expr(node.target, uses, set())

    def _if_or_while(self, node, uses, defs, modified):
        self.expr(node.test, uses, defs)
        extra_test = anno.get(node, anno.EXTRA_LOOP_TEST, None) if type(node) is gast.While else None
        if extra_test is not None:
            self.expr(extra_test, uses, set())
        modified |= self.block(node.body) | self.block(node.orelse)
        anno.set(node, anno.MODIFIED, frozenset(modified | defs))

    def _for(self, node, uses, defs, modified):
        self.expr(node.iter, uses, set())
        extra_test = anno.get(node, anno.EXTRA_LOOP_TEST, None)
        if extra_test is not None:
            self.expr(extra_test, uses, set())
        self.target(node.target, uses, defs, modified)
        modified |= self.block(node.body) | self.block(node.orelse)
        anno.set(node, anno.MODIFIED, frozenset(modified | defs))

    def _with(self, node, uses, defs, modified):
        for item in node.items:
            self.expr(item.context_expr, uses, defs)
            if item.optional_vars is not None:
                self.target(item.optional_vars, uses, defs, modified)
        modified |= self.block(node.body)

    def _try(self, node, uses, defs, modified):
        modified |= self.block(node.body) | self.block(node.orelse) | self.block(node.finalbody)
        for handler in node.handlers:
            h_uses, h_defs = set(), set()
            if handler.type is not None:
                self.expr(handler.type, h_uses, h_defs)
            if handler.name is not None:
                self.target(handler.name, h_uses, h_defs, modified)
            anno.set(handler, anno.USES, frozenset(h_uses))
            anno.set(handler, anno.DEFS, frozenset(h_defs))
            self.reads |= h_uses
            self.scope.bound |= h_defs
            modified |= h_defs | self.block(handler.body)

    def _definition(self, node, uses, defs, modified):
        """A nested ``def`` or ``class``: its decorators, defaults or bases, and its free names."""
        for decorator in node.decorator_list:
            self.expr(decorator, uses, defs)
        if type(node) is gast.ClassDef:
            for base in node.bases + [k.value for k in node.keywords]:
                self.expr(base, uses, defs)
            self._class_body(node, uses, defs)
        else:
            args = node.args  # (annotations are not reads: under PEP 563 they are never evaluated)
            for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
                self.expr(default, uses, defs)
            self._nested(node, uses)
        defs.add(node.name)

    def _class_body(self, node, uses, defs):
        """A class body: what it reads (but binds not) is read here; its ``nonlocal`` names bound."""
        walker = _ScopeWalker()
        walker.in_class = True
        walker.block(node.body)
        inner = walker.scope
        uses |= walker.reads - inner.locals - inner.globals
        uses |= walker.nested_free
        defs |= inner.nonlocals & inner.bound
        self.nested_free |= walker.nested_free | inner.nonlocals

    def _import(self, node, uses, defs, modified):
        for alias in node.names:
            if alias.name != "*":
                defs.add((alias.asname or alias.name).partition(".")[0])

    def _global(self, node, uses, defs, modified):
        self.scope.globals.update(node.names)

    def _nonlocal(self, node, uses, defs, modified):
        self.scope.nonlocals.update(node.names)

    def _match(self, node, uses, defs, modified):
        self.expr(node.subject, uses, defs)
        for case in node.cases:
            self.expr(case.pattern, uses, defs)
            _pattern_names(case.pattern, defs)
            if case.guard is not None:
                self.expr(case.guard, uses, defs)
            modified |= self.block(case.body)

    def _delete(self, node, uses, defs, modified):
        for target in node.targets:
            container = container_of(target) if type(target) is gast.Subscript else None
            if container is not None:
                modified.add(container)
        self.expr(node, uses, defs)

    def _expression_statement(self, node, uses, defs, modified):
        """The default rule: every name the statement mentions, as an expression would."""
        self.expr(node, uses, defs)


_STATEMENTS = {
    gast.Assign: _ScopeWalker._assign,
    gast.AugAssign: _ScopeWalker._aug_assign,
    gast.AnnAssign: _ScopeWalker._ann_assign,
    gast.If: _ScopeWalker._if_or_while,
    gast.While: _ScopeWalker._if_or_while,
    gast.For: _ScopeWalker._for,
    gast.AsyncFor: _ScopeWalker._for,
    gast.With: _ScopeWalker._with,
    gast.AsyncWith: _ScopeWalker._with,
    gast.Try: _ScopeWalker._try,
    gast.FunctionDef: _ScopeWalker._definition,
    gast.AsyncFunctionDef: _ScopeWalker._definition,
    gast.ClassDef: _ScopeWalker._definition,
    gast.Import: _ScopeWalker._import,
    gast.ImportFrom: _ScopeWalker._import,
    gast.Global: _ScopeWalker._global,
    gast.Nonlocal: _ScopeWalker._nonlocal,
    gast.Match: _ScopeWalker._match,
    gast.Delete: _ScopeWalker._delete,
}
if hasattr(gast, "TryStar"):
    _STATEMENTS[gast.TryStar] = _ScopeWalker._try

# Statements whose expression (``value``) Python evaluates before anything else of theirs.
_VALUED = (gast.Expr, gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Return)


def _read_first(node) -> set:
    """``x`` of ``x += v``: read before ``v`` is evaluated."""
    return {node.target.id} if type(node) is gast.AugAssign and type(node.target) is gast.Name else set()


def _pattern_names(pattern, defs):
    for node in ast_util.walk(pattern):
        for field in ("name", "rest"):
            value = getattr(node, field, None)
            if type(value) is str:
                defs.add(value)


def analyze(node) -> set:
    """Annotates the function or lambda ``node`` and everything in it.

    Returns the names the function mentions without binding them (its free
    variables and the globals it reads).
    """
    walker = _ScopeWalker()
    scope = walker.scope
    args = node.args
    for arg in args.posonlyargs + args.args + ([args.vararg] if args.vararg else []) + args.kwonlyargs + (
        [args.kwarg] if args.kwarg else []
    ):
        scope.params.append(arg.id)
    scope.bound.update(scope.params)
    if type(node) is gast.Lambda:
        uses = set()
        walker.expr(node.body, uses, scope.bound)
        walker.reads |= uses
    else:
        walker.block(node.body)
    local = scope.locals
    scope.captured = walker.nested_free & local
    # A name declared ``global`` here is the module's, in nested scopes too: not a free variable.
    scope.free = (walker.reads | walker.nested_free | scope.nonlocals) - local - scope.globals
    anno.set(node, anno.SCOPE, scope)
    return scope.free
