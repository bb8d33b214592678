"""Lowers ``if``, ``while`` and ``for`` statements to ``ag__.if_stmt``, ``ag__.while_stmt``
and ``ag__.for_stmt`` calls over closures.

Before::

    def f(x):
        if x > 0:
            y = x
        else:
            y = -x
        return y

After::

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
            (y,) = vars_
        y = ag__.Undefined('y')
        ag__.if_stmt(x > 0, if_body, else_body, get_state, set_state, ('y',), 1)
        return y

What each closure declares comes from the analyses (never re-derived):

* *state* (``get_state``/``set_state``, ``symbol_names``): names the
  statement binds that are live after it (loops: also live at the loop
  head, i.e. read before written in an iteration or by the test), plus
  attribute chains it assigns (``self.total``, read and restored through
  ``ag__.getattr_``/``setattr_``) and the containers it mutates (``x`` for
  ``x['a'] = v`` or ``x.append(v)``); an ``if``'s state then lists, after
  its ``nouts`` outputs, the names its branches use that are dead after it
  (so that a traced else branch starts where the true branch did);
* ``nonlocal`` in a body: the names it binds whose enclosing value matters
  (live after, read before written, or captured by a closure); the other
  names it binds stay local to the body;
* ``x = ag__.Undefined('x')`` before the statement for such a name when no
  definition reaches it (reaching definitions: the placeholder is then its
  value, and any use raises a clear error where the original would fail),
  or when nothing in the function binds it yet (a ``nonlocal`` needs a
  binding; every path then assigns it before reading it);
* a read of a local that may be unbound there (not bound on every path)
  is wrapped in ``ag__.defined(x)``, which raises that error too.

A ``for`` target that is a plain name not live after the loop is the body's
parameter (``def loop_body(i):``); otherwise the body assigns it from
``itr``.  ``nonlocal`` statements of the user are hoisted to the top of the
function (they apply to the whole function anyway) and repeated in the
bodies that assign those names.

Source order: every statement's closures are defined right before the
operator call that uses them, in the scope of the statement.  The one
exception: the closures of a statement nested in a loop body that use no
name local to that loop body (nor to a branch between) are defined once,
just before the loop's ``def loop_body`` (before the nearest loop, never
further), instead of at every iteration.  Statements of one scope with the
same state share the ``get_state``/``set_state`` pair defined first (and
loops the ``extra_test`` closure of their lowered ``break``/``return``
flags).  Finally the generated closures are renumbered in textual order
(``if_body``, ``if_body_1``, ... from the top).
"""

from __future__ import annotations

import ast

import gast

from autograph.pyct import anno, ast_util, qual_names, templates

_BODY = """
def name():
    nonlocal nonlocals
    body
"""

_FOR_BODY = """
def name(param):
    nonlocal nonlocals
    body
"""

_TEST = """
def name():
    nonlocal nonlocals
    return test
"""

_GET_STATE = """
def get_state():
    return state
"""

_SET_STATE = """
def set_state(vars_):
    nonlocal nonlocals
    body
"""

_UNDEFINED = "name = ag__.Undefined(symbol)"

# Expressions whose names are not read where they stand.
_OPAQUE_EXPRESSIONS = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


class _Summaries:
    """Names bound / referenced by statements, from the activity annotations.

    Memoized per statement: the converter asks about the same statements
    at every level of nesting.
    """

    __slots__ = ("_bound", "_referenced")

    def __init__(self):
        self._bound = {}
        self._referenced = {}

    def bound(self, statements) -> set:
        """Names bound anywhere in ``statements``."""
        names = set()
        for statement in statements:
            cached = self._bound.get(id(statement))
            if cached is None:
                cached = self._bound[id(statement)] = self._bound_by(statement)
            names |= cached
        return names

    def _bound_by(self, statement) -> frozenset:
        modified = anno.get(statement, anno.MODIFIED, None)
        if modified is not None:
            return frozenset(m for m in modified if not qual_names.is_composite(m))
        names = set(anno.get(statement, anno.DEFS, ()))
        if type(statement) not in ast_util.SCOPES:
            for owner, field in ast_util.child_blocks(statement):
                names |= self.bound(getattr(owner, field))
            for handler in getattr(statement, "handlers", ()):
                names.update(anno.get(handler, anno.DEFS, ()))
        return frozenset(names)

    def referenced(self, statements) -> set:
        """Names ``statements`` read or bind anywhere."""
        names = set()
        for statement in statements:
            cached = self._referenced.get(id(statement))
            if cached is None:
                cached = self._referenced[id(statement)] = self._referenced_by(statement)
            names |= cached
        return names

    def _referenced_by(self, statement) -> frozenset:
        names = set(anno.get(statement, anno.USES, ())) | set(anno.get(statement, anno.DEFS, ()))
        if type(statement) not in ast_util.SCOPES:
            for owner, field in ast_util.child_blocks(statement):
                names |= self.referenced(getattr(owner, field))
            for handler in getattr(statement, "handlers", ()):
                names.update(anno.get(handler, anno.USES, ()))
                names.update(anno.get(handler, anno.DEFS, ()))
        return frozenset(names)


def _directly_bound(statements) -> set:
    """Names the statements themselves assign: not inside the if/while/for
    that become closures, nor inside nested functions."""
    bound = set()
    for statement in statements:
        kind = type(statement)
        if kind in (gast.While, gast.For):
            continue  # their test (walrus) and target are bound in closures
        bound.update(anno.get(statement, anno.DEFS, ()))
        if kind is gast.If or kind in ast_util.SCOPES:
            continue
        for owner, field in ast_util.child_blocks(statement):
            bound |= _directly_bound(getattr(owner, field))
        for handler in getattr(statement, "handlers", ()):
            bound.update(anno.get(handler, anno.DEFS, ()))
    return bound


class _Frame:
    """A function being generated (the converted function or a body closure).

    ``owned``: the names local to it; ``bound``: the names its own
    statements assign (so a ``nonlocal`` in a closure nested in it finds a
    binding); ``states``: the get_state/set_state pairs (and extra loop
    tests) already defined in it, by key; ``placeholders``: the names it
    gave an ``Undefined`` placeholder; ``preloop`` (loop bodies only): the
    closures of its statements hoisted before the loop.
    """

    __slots__ = ("owned", "bound", "states", "placeholders", "is_loop", "preloop")

    def __init__(self, owned, bound, is_loop=False):
        self.owned = frozenset(owned)
        self.bound = set(bound)
        self.states = {}
        self.placeholders = set()
        self.is_loop = is_loop
        self.preloop = []


class _FunctionConverter:
    __slots__ = (
        "ctx", "scope", "vars_name", "itr_name", "frames", "unbound_reads", "top_level_inits", "summaries", "generated",
    )

    def __init__(self, ctx, scope):
        self.ctx = ctx
        self.scope = scope
        self.vars_name = None
        self.itr_name = None
        self.frames = []
        self.unbound_reads = set()
        # Undefined placeholders emitted directly in the converted function, by name.
        self.top_level_inits = {}
        self.summaries = _Summaries()
        # Names of the generated closures -> their base name (`if_body_2` -> `if_body`).
        self.generated = {}

    # -- helpers ----------------------------------------------------------------

    def _new_def(self, base):
        """A fresh name for a generated closure (renumbered in textual order at the end)."""
        name = self.ctx.namer.new(base)
        self.generated[name] = base
        return name

    def _vars(self):
        if self.vars_name is None:
            self.vars_name = self.ctx.namer.new("vars_")
        return self.vars_name

    def _target_loop(self, referenced):
        """The loop frame before which closures of the statement now converted may go, or None.

        That is the nearest enclosing loop body, if neither it nor the
        closures between it and the statement own a name of ``referenced``.
        """
        for frame in reversed(self.frames):
            if referenced & frame.owned:
                return None
            if frame.is_loop:
                return frame
        return None

    def _place(self, definitions, referenced):
        """Where closure ``definitions`` go: before the enclosing loop if possible, else here.

        Returns what to emit right before the statement's operator call.
        """
        loop = self._target_loop(referenced)
        if loop is not None:
            loop.preloop.extend(definitions)
            return []
        return definitions

    def _shared(self, key, roots, define):
        """``(names, definitions)`` of the closure(s) identified by ``key`` over the variables ``roots``.

        Reused if already defined in this scope (or, when they can go
        before the enclosing loop, in the loop's scope); else ``define()``
        gives ``(names, definitions)``, placed like any closure of the
        statement.
        """
        frame = self.frames[-1]
        names = frame.states.get(key)
        if names is not None:
            return names, []
        loop = self._target_loop(roots)
        if loop is not None:
            outer = self.frames[self.frames.index(loop) - 1]
            names = outer.states.get(key)
            if names is not None:
                return names, []
        names, definitions = define()
        if loop is not None:
            loop.preloop.extend(definitions)
            outer.states[key] = names
            return names, []
        frame.states[key] = names
        return names, definitions

    def _body_function(
        self, base, statements, bound, visible, origin, param=None, referenced=None, assigns=(), placeholders=frozenset()
    ):
        """Defines the closure ``base`` running ``statements``.

        ``bound``: the names the statements assign; those in ``visible`` are
        declared ``nonlocal``, the others are the closure's own.  ``param``:
        the parameter of a for loop body; ``assigns``: names bound by
        generated statements among ``statements`` (``k, v = itr``);
        ``placeholders``: the names the statement initialised to ``Undefined``.
        Returns ``(name, definitions)``: for a loop body, the definitions are
        the closures hoisted before it, then its own ``def``.
        """
        name = self._new_def(base)
        nonlocals = sorted(bound & visible)
        owned = bound - visible
        if param is not None:
            owned = owned | {param}
        if referenced is None:  # before converting: conversion replaces nested blocks
            referenced = self.summaries.referenced(statements)
        direct = _directly_bound(statements) | set(assigns) | ({param} if param is not None else set())
        frame = _Frame(owned, direct, is_loop=base == "loop_body")
        frame.placeholders = (self.frames[-1].placeholders | placeholders) - owned
        self.frames.append(frame)
        body = self.block(statements)
        self.frames.pop()
        template = _BODY if param is None else _FOR_BODY
        extra = {} if param is None else {"param": param}
        code = templates.replace(
            template, origin=origin, name=name, nonlocals=nonlocals, body=body, **extra,
        )
        if frame.preloop:
            # Its hoisted closures stay one level up: the loop body stays with them.
            return name, frame.preloop + code
        return name, self._place(code, referenced - owned)

    def _state_functions(self, state, origin):
        """``(get_state, set_state, definitions)`` for ``state`` (``ag__.no_state`` if none)."""
        if not state:
            none = templates.replace_as_expression("ag__.no_state")
            return none, templates.copy_tree(none), []
        roots = {qual_names.root(symbol) for symbol in state}

        def define():
            definitions, get_name, set_name = self._define_state_functions(state, origin)
            return (get_name, set_name), definitions

        names, definitions = self._shared(tuple(state), roots, define)
        return templates.name(names[0]), templates.name(names[1]), definitions

    def _extra_test(self, test, origin):
        """``(name, definitions)`` of the closure testing a for loop's jump flags (``not break_``)."""
        flags = frozenset(n.id for n in gast.walk(test) if type(n) is gast.Name)
        key = ("extra_test", ast.dump(gast.gast_to_ast(test)))

        def define():
            name = self._new_def("extra_test")
            return name, templates.replace(_TEST, origin=origin, name=name, nonlocals=[], test=test)

        return self._shared(key, flags, define)

    def _define_state_functions(self, state, origin):
        get_name = self._new_def("get_state")
        set_name = self._new_def("set_state")
        plain = {s for s in state if not qual_names.is_composite(s)}
        nonlocals = sorted(plain)
        getter = templates.replace(_GET_STATE, origin=origin, get_state=get_name, state=_state_tuple(state))
        vars_ = self._vars()
        setter = templates.replace(
            _SET_STATE, origin=origin, set_state=set_name, vars_=vars_, nonlocals=nonlocals,
            body=_set_state_body(state, vars_),
        )
        return getter + setter, get_name, set_name

    def _roles(self, state):
        """The ``opts`` entries naming the state variables that have a role (the return lowering's
        value and flag: ``('return_value', 'retval_')``): the runtime reads roles only from these."""
        return [(role, templates.constant(n)) for n in state if (role := self.ctx.roles.get(n)) is not None]

    def _is_bound(self, name) -> bool:
        """True if some frame gives ``name`` the binding a ``nonlocal name`` needs."""
        for frame in reversed(self.frames):
            if name in frame.bound:
                return True
            if name in frame.owned:
                return False
        return False

    def _owned_by_loop_body(self, name) -> bool:
        """True if the innermost closure where ``name`` is local is a loop body."""
        for frame in reversed(self.frames):
            if name in frame.owned:
                return frame.is_loop
        return False

    def _undefined_inits(self, node, visible, live_in):
        """``x = ag__.Undefined('x')`` for the names a closure of ``node`` declares nonlocal
        that no definition reaches (the placeholder is their value), or that
        have no binding yet in the function (the ``nonlocal`` needs one; their
        value is then dead: every path assigns before reading).  Not for a
        name that still holds the placeholder an enclosing statement gave it.
        Returns ``(statements, names)``."""
        defined = anno.get(node, anno.DEFINED_IN)
        inits = []
        placeholders = set()
        frame = self.frames[-1]
        for name in sorted(visible):
            if name in self.scope.nonlocals:
                continue
            if name in defined and self._is_bound(name) and not (
                self._owned_by_loop_body(name) and name not in anno.get(node, anno.MUST_DEFINED, defined)
            ):
                # Bound here already -- unless it is local to a loop body and only a
                # previous iteration may have defined it: each call of the body starts unbound.
                continue
            if name not in defined and name in frame.placeholders:
                continue  # still the placeholder an enclosing statement gave it
            frame.bound.add(name)
            init = templates.replace(_UNDEFINED, origin=node, name=name, symbol=templates.constant(name))
            if len(self.frames) == 1:
                self.top_level_inits.setdefault(name, []).extend(init)
            inits += init
            placeholders.add(name)
        return inits, frozenset(placeholders)

    def _symbols(self, node):
        """``(names, composites)`` a statement changes: the names it binds, and the
        attribute chains and containers it changes without rebinding their root.

        A container (``x[]`` in ``MODIFIED``) is state as the chain that holds it:
        ``x`` for a local ``x`` (a global cannot be rebound from a closure; its
        mutations stay Python side effects), ``self.d`` for ``self.d[k] = v``.
        """
        modified = anno.get(node, anno.MODIFIED)
        names = {m for m in modified if not qual_names.is_composite(m)}
        visible = anno.get(node, anno.LIVE_IN) | anno.get(node, anno.LIVE_OUT) | self.scope.always_live
        rebindable = self.scope.locals | self.scope.nonlocals
        composites = set()
        for m in modified:
            if not qual_names.is_composite(m):
                continue
            if qual_names.root(m) in names:
                if m.endswith("[]") and m[:-2] in names and m[:-2] in visible:
                    composites.add(m[:-2])  # x = ag__.aug_setitem(x, ...): an alias may see x's items
                continue
            if m.endswith("[]"):
                m = m[:-2]
                if not qual_names.is_composite(m) and m not in rebindable:
                    continue
            composites.add(m)
        return names, composites

    # -- statements -------------------------------------------------------------

    def block(self, statements):
        """Converts ``statements``, a block of the current frame.

        Each converted statement is emitted as its closures' definitions
        followed by its operator call.  Closures defined inside a nested
        ``try``/``with`` block are not shared with statements after it (the
        block might not run to that point).
        """
        out = []
        frame = self.frames[-1]
        for statement in statements:
            kind = type(statement)
            out.extend(self._check_reads(statement))
            if kind in (gast.If, gast.While, gast.For):
                if kind is gast.If:
                    definitions, call = self.if_stmt(statement)
                elif kind is gast.While:
                    definitions, call = self.while_stmt(statement)
                else:
                    definitions, call = self.for_stmt(statement)
                out.extend(definitions)
                out.extend(call)
            else:
                if kind not in ast_util.SCOPES:
                    for owner, field in ast_util.child_blocks(statement):
                        shared = dict(frame.states)
                        setattr(owner, field, self.block(getattr(owner, field)))
                        frame.states = shared
                out.append(statement)
        return out

    def _check_reads(self, statement):
        """Wraps reads of local names that may be unbound here in ``ag__.defined``.

        The original raises ``UnboundLocalError`` at such a read; inside the
        closures of converted code the name would be a free variable, which
        fails differently, so these names also get an ``Undefined``
        placeholder at the top of the function (see ``transform``).
        """
        maybe_unbound = self.scope.locals - anno.get(statement, anno.MUST_DEFINED, self.scope.locals)
        if maybe_unbound and self.ctx.has_walrus:
            maybe_unbound -= {n.target.id for n in gast.walk(statement) if type(n) is gast.NamedExpr}
        if not maybe_unbound:
            return []
        unbound_reads = self.unbound_reads

        def check(node):
            kind = type(node)
            if kind is gast.Name:
                if type(node.ctx) is gast.Load and node.id in maybe_unbound:
                    unbound_reads.add(node.id)
                    return templates.replace_as_expression("ag__.defined(name)", origin=node, name=node)
                return node
            if kind in _OPAQUE_EXPRESSIONS and not anno.get(node, anno.IN_PLACE, False):
                return node
            return ast_util.map_children(node, check)

        kind = type(statement)
        if kind in (gast.If, gast.While):
            statement.test = check(statement.test)
        elif kind is gast.For:
            statement.iter = check(statement.iter)
        elif kind in (gast.With, gast.AsyncWith):
            for item in statement.items:
                item.context_expr = check(item.context_expr)
        elif kind is gast.Match:
            statement.subject = check(statement.subject)
        elif kind is gast.AugAssign and type(statement.target) is gast.Name:
            statement.value = check(statement.value)
            if statement.target.id in maybe_unbound:
                # `x += v` reads x before evaluating v: check x first.
                unbound_reads.add(statement.target.id)
                return templates.replace("ag__.defined(name)", origin=statement, name=statement.target.id)
        elif kind not in (gast.Try, gast.ClassDef) and kind not in ast_util.FUNCTIONS:
            check(statement)
        return []

    def if_stmt(self, node):
        names, composites = self._symbols(node)
        live_out = anno.get(node, anno.LIVE_OUT)
        live_in = anno.get(node, anno.LIVE_IN)
        always = self.scope.always_live
        outputs = _ordered_state(names & live_out, composites)
        visible = names & (live_out | live_in | always)
        # The names a branch reads or writes in the enclosing scope but that are dead
        # after the if: state too (not outputs), so each branch starts from the same values.
        state = outputs + sorted(visible - set(outputs))
        inits, placeholders = self._undefined_inits(node, visible, live_in)
        body_name, code = self._body_function(
            "if_body", node.body, self.summaries.bound(node.body), visible, node, placeholders=placeholders
        )
        if node.orelse:
            else_name, orelse = self._body_function(
                "else_body", node.orelse, self.summaries.bound(node.orelse), visible, node, placeholders=placeholders
            )
            code += orelse
            else_ref = templates.name(else_name)
        else:
            else_ref = templates.replace_as_expression("ag__.no_op")
        getter, setter, definitions = self._state_functions(state, node)
        code += definitions
        template = "ag__.if_stmt(test, body, orelse, get_state, set_state, symbol_names, nouts)"
        roles = self._roles(state)
        if roles:
            template = "ag__.if_stmt(test, body, orelse, get_state, set_state, symbol_names, nouts, opts)"
        call = inits + templates.replace(
            template, origin=node, test=node.test, body=body_name, orelse=else_ref, get_state=getter,
            set_state=setter, symbol_names=templates.str_tuple(state), nouts=templates.constant(len(outputs)),
            opts=_opts_dict(roles),
        )
        return code, call

    def while_stmt(self, node):
        if node.orelse:
            raise AssertionError("loop else clauses are lowered by break_statements")
        names, composites = self._symbols(node)
        live_in = anno.get(node, anno.LIVE_IN)
        live_out = anno.get(node, anno.LIVE_OUT)
        state = _ordered_state(names & live_in, composites)
        visible = names & (live_in | live_out | self.scope.always_live)
        inits, placeholders = self._undefined_inits(node, visible, live_in)
        code = []
        extra_test = anno.get(node, anno.EXTRA_LOOP_TEST, None)
        if extra_test is not None:
            extra_name, code = self._extra_test(extra_test, node)
        test_name = self._new_def("loop_test")
        test_nonlocals = sorted(anno.get(node, anno.DEFS))
        test_code = templates.replace(_TEST, origin=node, name=test_name, nonlocals=test_nonlocals, test=node.test)
        code += self._place(test_code, set(anno.get(node, anno.USES)) | set(anno.get(node, anno.DEFS)))
        body_name, body = self._body_function(
            "loop_body", node.body, self.summaries.bound(node.body), visible, node, placeholders=placeholders
        )
        code += body
        getter, setter, definitions = self._state_functions(state, node)
        code += definitions
        opts = [("extra_test", templates.name(extra_name))] if extra_test is not None else []
        call = inits + templates.replace(
            "ag__.while_stmt(test, body, get_state, set_state, symbol_names, opts)", origin=node, test=test_name,
            body=body_name, get_state=getter, set_state=setter, symbol_names=templates.str_tuple(state),
            opts=_opts_dict(opts + self._roles(state)),
        )
        return code, call

    def for_stmt(self, node):
        if node.orelse:
            raise AssertionError("loop else clauses are lowered by break_statements")
        names, composites = self._symbols(node)
        live_in = anno.get(node, anno.LIVE_IN)
        live_out = anno.get(node, anno.LIVE_OUT)
        always = self.scope.always_live
        target = node.target
        state = _ordered_state(names & live_in, composites)
        visible = names & (live_in | live_out | always)
        inits, placeholders = self._undefined_inits(node, visible, live_in)
        body_statements = node.body
        bound = self.summaries.bound(body_statements)
        if (
            type(target) is gast.Name
            and target.id not in visible
            and target.id not in self.scope.nonlocals
        ):
            param = target.id
            iterate_names = target.id
        else:
            if self.itr_name is None:
                self.itr_name = self.ctx.namer.new("itr")
            param = self.itr_name
            if type(target) is gast.Tuple and all(type(e) is gast.Name for e in target.elts):
                iterate_names = ", ".join(e.id for e in target.elts)
            else:
                iterate_names = ast.unparse(gast.gast_to_ast(target))
            body_statements = templates.replace("target = itr", origin=node, target=target, itr=param) + body_statements
            bound |= anno.get(node, anno.DEFS)
        code = []
        extra_test = anno.get(node, anno.EXTRA_LOOP_TEST, None)
        if extra_test is not None:
            extra_name, code = self._extra_test(extra_test, node)
            extra_ref = templates.name(extra_name)
        else:
            extra_ref = templates.constant(None)
        body_name, body = self._body_function(
            "loop_body", body_statements, bound, visible, node, param=param,
            referenced=self.summaries.referenced(node.body) | anno.get(node, anno.DEFS),
            assigns=anno.get(node, anno.DEFS) if param == self.itr_name else (),
            placeholders=placeholders,
        )
        code += body
        getter, setter, definitions = self._state_functions(state, node)
        code += definitions
        opts = [("iterate_names", templates.constant(iterate_names))] + self._roles(state)
        call = inits + templates.replace(
            "ag__.for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names, opts)",
            origin=node, iter_=node.iter, extra_test=extra_ref, body=body_name, get_state=getter,
            set_state=setter, symbol_names=templates.str_tuple(state), opts=_opts_dict(opts),
        )
        return code, call


def _opts_dict(entries):
    """``{'key': value, ...}`` of an operator call's ``opts`` (keys as given, values AST nodes)."""
    return gast.Dict(keys=[templates.constant(k) for k, _ in entries], values=[v for _, v in entries])


def _ordered_state(names, composites) -> list:
    """Plain names first (sorted), then attribute chains: ``['i', 'x', 'self.total']``."""
    plain = {c for c in composites if not qual_names.is_composite(c)}
    return sorted(set(names) | plain) + sorted(set(composites) - plain)


def _state_tuple(state):
    """``(x, ag__.getattr_(self, 'total'))``: attribute chains read as ``Undefined`` when unset."""
    elements = []
    for symbol in state:
        if qual_names.is_composite(symbol):
            owner, _, attr = symbol.rpartition(".")
            elements.append(templates.replace_as_expression(
                "ag__.getattr_(owner, attr)", owner=templates.replace_as_expression(owner),
                attr=templates.constant(attr),
            ))
        else:
            elements.append(symbol)
    return templates.name_tuple(elements)


def _set_state_body(state, vars_):
    """``x, y = vars_``; with attribute chains ``x = vars_[0]`` and ``ag__.setattr_(self, 'total', vars_[1])``."""
    if not any(qual_names.is_composite(symbol) for symbol in state):
        return templates.replace("state = vars_", state=templates.name_tuple(state, store=True), vars_=vars_)
    statements = []
    for index, symbol in enumerate(state):
        value = templates.replace_as_expression("vars_[index]", vars_=vars_, index=templates.constant(index))
        if qual_names.is_composite(symbol):
            owner, _, attr = symbol.rpartition(".")
            statements += templates.replace(
                "ag__.setattr_(owner, attr, value)", owner=templates.replace_as_expression(owner),
                attr=templates.constant(attr), value=value,
            )
        else:
            statements += templates.replace("name = value", name=templates.name(symbol, store=True), value=value)
    return statements


def _hoist_declarations(function):
    """Moves the function's own ``nonlocal`` statements to its top (``global`` is rejected earlier)."""
    declarations = [n for n in ast_util.scope_statements(function.body) if type(n) is gast.Nonlocal]
    if not declarations:
        return
    nonlocals = sorted({name for d in declarations for name in d.names})

    def drop(statements):
        kept = [s for s in statements if type(s) is not gast.Nonlocal]
        if statements and not kept:
            kept = [gast.copy_location(gast.Pass(), statements[0])]
        return kept

    ast_util.transform_blocks(function, drop, into_functions=False)
    hoisted = templates.replace("nonlocal nonlocals", origin=declarations[0], nonlocals=nonlocals)
    start = ast_util.body_start(function)
    function.body[start:start] = hoisted


def _generated_references(statements, generated, defs, names):
    """Collects, in textual order, the ``def``s of generated closures and the names
    referring to them: those are only the arguments of operator calls
    (``ag__.if_stmt(test, if_body, ...)``, ``{'extra_test': extra_test}``),
    which are statements of their own, so only statements are walked."""
    for statement in statements:
        kind = type(statement)
        if kind is gast.FunctionDef:
            if statement.name in generated:
                defs.append(statement)
            _generated_references(statement.body, generated, defs, names)
        elif kind is gast.Expr:
            call = statement.value
            if type(call) is gast.Call:
                for arg in call.args:
                    arg_kind = type(arg)
                    if arg_kind is gast.Name:
                        if arg.id in generated:
                            names.append(arg)
                    elif arg_kind is gast.Dict:
                        names.extend(v for v in arg.values if type(v) is gast.Name and v.id in generated)
        elif kind not in ast_util.SCOPES:
            for owner, field in ast_util.child_blocks(statement):
                _generated_references(getattr(owner, field), generated, defs, names)


def _renumber(function, generated, used):
    """Renames the generated closures so that their numbers follow the text: the first
    ``def if_body`` from the top is ``if_body``, the next ``if_body_1``, ...

    Names are handed out while converting, innermost statements first, and
    hoisting moves definitions; renumbering makes the printed code read in
    order.  ``used``: every name taken in the module (the new names avoid
    those that are not ours).
    """
    if not generated:
        return
    defs, names = [], []
    _generated_references(function.body, generated, defs, names)
    order = [d.name for d in defs]
    if order == list(generated):
        return  # already in textual order
    if len(order) != len(generated):
        order += [name for name in generated if name not in set(order)]
    taken = used - set(generated)
    counters = {}
    mapping = {}
    for old in order:
        base = generated[old]
        counter = counters.get(base, 0)
        separator = "" if base.endswith("_") else "_"
        while True:
            new = base if counter == 0 else f"{base}{separator}{counter}"
            counter += 1
            if new not in taken:
                break
        counters[base] = counter
        mapping[old] = new
    used.update(mapping.values())
    for definition in defs:
        definition.name = mapping[definition.name]
    for name in names:
        name.id = mapping[name.id]


def transform(node, ctx):
    for function in reversed(ast_util.functions(node)):
        scope = anno.get(function, anno.SCOPE)
        _hoist_declarations(function)
        converter = _FunctionConverter(ctx, scope)
        converter.frames.append(_Frame(scope.locals, set(scope.params) | _directly_bound(function.body)))
        converter.frames[0].placeholders = frozenset()
        body = converter.block(function.body)
        start = ast_util.body_start(function)
        while start < len(body) and type(body[start]) is gast.Nonlocal:
            start += 1
        # Names checked on read get their placeholder once, at the top; their
        # placeholders before statements of the function itself are redundant.
        redundant = {id(s) for name in converter.unbound_reads for s in converter.top_level_inits.get(name, ())}
        if redundant:
            body = [s for s in body if id(s) not in redundant]
        inits = []
        for name in sorted(converter.unbound_reads):
            inits += templates.replace(_UNDEFINED, origin=function, name=name, symbol=templates.constant(name))
        body[start:start] = inits
        function.body = body
        _renumber(function, converter.generated, ctx.namer.used)
    return node
