"""The closures of a lowered ``if``/``while``/``for``: bodies, loop tests, state functions.

What every statement lowering shares: a body closure's ``nonlocal``
declarations and where its ``def`` goes (before the enclosing loop when it
uses nothing local to the loop body); the ``get_state``/``set_state`` pair
over the statement's state, shared by statements of one scope with the same
state; the ``Undefined`` placeholders a ``nonlocal`` needs; the ``opts``
dict of the operator call.  The rules are stated in ``control_flow``'s
docstring.
"""

from __future__ import annotations

import ast

import gast

from autograph.converters import control_flow_symbols as symbols
from autograph.pyct import anno, qual_names, templates

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

TEST_CLOSURE = """
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

UNDEFINED = "name = ag__.Undefined(symbol)"


class Frame:
    """A function being generated (the converted function or a body closure).

    ``owned``: the names local to it; ``bound``: the names its own
    statements assign (so a ``nonlocal`` in a closure nested in it finds a
    binding); ``assigned``: those bound by the statements converted so far
    (an owned name not yet assigned has no value in the closure, whatever
    reaches the statement from outside it); ``states``: the get_state/set_state pairs (and extra loop
    tests) already defined in it, by key; ``placeholders``: the names it
    gave an ``Undefined`` placeholder; ``preloop`` (loop bodies only): the
    closures of its statements hoisted before the loop.
    """

    __slots__ = ("owned", "bound", "assigned", "states", "placeholders", "is_loop", "preloop")

    def __init__(self, owned, bound, is_loop=False, assigned=()):
        self.owned = frozenset(owned)
        self.bound = set(bound)
        self.assigned = set(assigned)  # the owned names the statements converted so far bind
        self.states = {}
        self.placeholders = set()
        self.is_loop = is_loop
        self.preloop = []


class ClosureBuilder:
    """Builds the closures of the statements of one function, for ``control_flow``'s converter.

    The state (``frames``, one per function being generated; the names handed
    out; the ``Undefined`` placeholders) is shared by the ``if`` and loop
    lowerings (``control_flow_if``, ``control_flow_loops``).  A subclass
    supplies ``block(statements)``, which converts a body's statements.
    """

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
        self.summaries = symbols.Summaries()
        # Names of the generated closures -> their base name (`if_body_2` -> `if_body`).
        self.generated = {}

    def new_def(self, base):
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

    def place(self, definitions, referenced):
        """Where closure ``definitions`` go: before the enclosing loop if possible, else here.

        Returns what to emit right before the statement's operator call.
        """
        loop = self._target_loop(referenced)
        if loop is not None:
            loop.preloop.extend(definitions)
            return []
        return definitions

    def shared(self, key, roots, define):
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

    def body_function(
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
        name = self.new_def(base)
        nonlocals = sorted(bound & visible)
        owned = bound - visible
        if param is not None:
            owned = owned | {param}
        if referenced is None:  # before converting: conversion replaces nested blocks
            referenced = self.summaries.referenced(statements)
        given = set(assigns) | ({param} if param is not None else set())  # bound before the statements run
        frame = Frame(owned, symbols.directly_bound(statements) | given, is_loop=base == "loop_body", assigned=given)
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
        return name, self.place(code, referenced - owned)

    def state_functions(self, state, origin):
        """``(get_state, set_state, definitions)`` for ``state`` (``ag__.no_state`` if none)."""
        if not state:
            none = templates.replace_as_expression("ag__.no_state")
            return none, templates.copy_tree(none), []
        roots = {qual_names.root(symbol) for symbol in state}

        def define():
            definitions, get_name, set_name = self._define_state_functions(state, origin)
            return (get_name, set_name), definitions

        names, definitions = self.shared(tuple(state), roots, define)
        return templates.name(names[0]), templates.name(names[1]), definitions

    def extra_test(self, test, origin):
        """``(name, definitions)`` of the closure testing a for loop's jump flags (``not break_``)."""
        flags = frozenset(n.id for n in gast.walk(test) if type(n) is gast.Name)
        key = ("extra_test", ast.dump(gast.gast_to_ast(test)))

        def define():
            name = self.new_def("extra_test")
            return name, templates.replace(TEST_CLOSURE, origin=origin, name=name, nonlocals=[], test=test)

        return self.shared(key, flags, define)

    def _define_state_functions(self, state, origin):
        get_name = self.new_def("get_state")
        set_name = self.new_def("set_state")
        plain = {s for s in state if not qual_names.is_composite(s)}
        nonlocals = sorted(plain)
        getter = templates.replace(_GET_STATE, origin=origin, get_state=get_name, state=_state_tuple(state))
        vars_ = self._vars()
        setter = templates.replace(
            _SET_STATE, origin=origin, set_state=set_name, vars_=vars_, nonlocals=nonlocals,
            body=_set_state_body(state, vars_),
        )
        return getter + setter, get_name, set_name

    def state_roles(self, state):
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

    def _owner(self, name):
        """The innermost frame where ``name`` is local, or None."""
        return next((frame for frame in reversed(self.frames) if name in frame.owned), None)

    def _unassigned_in_closure(self, name) -> bool:
        """True if ``name`` is local to a body closure that has not assigned it yet: a definition
        reaching the statement from outside the closure is not its value there."""
        owner = self._owner(name)
        return owner is not None and owner is not self.frames[0] and name not in owner.assigned

    def _owned_by_loop_body(self, name) -> bool:
        """True if the innermost closure where ``name`` is local is a loop body."""
        owner = self._owner(name)
        return owner is not None and owner.is_loop

    def undefined_inits(self, node, visible, live_in):
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
            ) and not self._unassigned_in_closure(name):
                # Bound here already -- unless it is local to a loop body and only a
                # previous iteration may have defined it: each call of the body starts unbound.
                continue
            if name not in defined and name in frame.placeholders:
                continue  # still the placeholder an enclosing statement gave it
            frame.bound.add(name)
            init = templates.replace(UNDEFINED, origin=node, name=name, symbol=templates.constant(name))
            if len(self.frames) == 1:
                self.top_level_inits.setdefault(name, []).extend(init)
            inits += init
            placeholders.add(name)
        return inits, frozenset(placeholders)


def opts_dict(entries):
    """``{'key': value, ...}`` of an operator call's ``opts`` (keys as given, values AST nodes)."""
    return gast.Dict(keys=[templates.constant(k) for k, _ in entries], values=[v for _, v in entries])


def ordered_state(names, composites) -> list:
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
