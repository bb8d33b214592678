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
  attribute chains it assigns (``self.total``);
* ``nonlocal`` in a body: the names it binds whose enclosing value matters
  (live after, read before written, or captured by a closure); the other
  names it binds stay local to the body;
* ``x = ag__.Undefined('x')`` before the statement for such a name unless
  it may already be bound *and* its value is live on entry (reaching
  definitions): the placeholder gives the enclosing function a binding,
  and a clear error if the value is used where the original would fail.

A ``for`` target that is a plain name not live after the loop is the body's
parameter (``def loop_body(i):``); otherwise the body assigns it from
``itr``.  ``global``/``nonlocal`` statements of the user are hoisted to the
top of the function (they apply to the whole function anyway) and repeated
in the bodies that assign those names.
"""

from __future__ import annotations

import ast

import gast

from autograph import anno, ast_util, qual_names, templates

_BODY = """
def name():
    nonlocal nonlocals
    global globals_
    body
"""

_FOR_BODY = """
def name(param):
    nonlocal nonlocals
    global globals_
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
    global globals_
    state = vars_
"""

_UNDEFINED = "name = ag__.Undefined(symbol)"


def _bound_in(statements) -> set:
    """Names bound anywhere in ``statements`` (from the activity annotations)."""
    bound = set()
    for statement in statements:
        modified = anno.get(statement, anno.MODIFIED, None)
        if modified is not None:
            bound.update(m for m in modified if not qual_names.is_composite(m))
            continue
        bound.update(anno.get(statement, anno.DEFS, ()))
        for owner, field in ast_util.child_blocks(statement):
            if type(statement) not in ast_util.SCOPES:
                bound |= _bound_in(getattr(owner, field))
        for handler in getattr(statement, "handlers", ()):
            bound.update(anno.get(handler, anno.DEFS, ()))
    return bound


class _FunctionConverter:
    __slots__ = ("ctx", "scope", "vars_name", "itr_name")

    def __init__(self, ctx, scope):
        self.ctx = ctx
        self.scope = scope
        self.vars_name = None
        self.itr_name = None

    # -- helpers ----------------------------------------------------------------

    def _vars(self):
        if self.vars_name is None:
            self.vars_name = self.ctx.namer.new("vars_")
        return self.vars_name

    def _declarations(self, names):
        """Splits ``names`` a closure assigns into (nonlocal, global) lists."""
        names = sorted(names)
        globals_ = [n for n in names if n in self.scope.globals]
        nonlocals = [n for n in names if n not in self.scope.globals]
        return nonlocals, globals_

    def _body_function(self, base, statements, bound, visible, origin, param=None):
        name = self.ctx.namer.new(base)
        nonlocals, globals_ = self._declarations(bound & visible)
        template = _BODY if param is None else _FOR_BODY
        extra = {} if param is None else {"param": param}
        code = templates.replace(
            template, origin=origin, name=name, nonlocals=nonlocals, globals_=globals_,
            body=self.block(statements), **extra,
        )
        return name, code

    def _state_functions(self, state, origin):
        """``get_state``/``set_state`` definitions and their names (``ag__.no_state`` if none)."""
        if not state:
            none = templates.replace_as_expression("ag__.no_state")
            return [], none, templates.copy_tree(none)
        get_name = self.ctx.namer.new("get_state")
        set_name = self.ctx.namer.new("set_state")
        plain = {s for s in state if not qual_names.is_composite(s)}
        nonlocals, globals_ = self._declarations(plain)
        getter = templates.replace(
            _GET_STATE, origin=origin, get_state=get_name, state=_state_tuple(state, store=False)
        )
        setter = templates.replace(
            _SET_STATE, origin=origin, set_state=set_name, vars_=self._vars(), nonlocals=nonlocals,
            globals_=globals_, state=_state_tuple(state, store=True),
        )
        return getter + setter, templates.name(get_name), templates.name(set_name)

    def _undefined_inits(self, node, visible, live_in):
        defined = anno.get(node, anno.DEFINED_IN)
        inits = []
        for name in sorted(visible):
            if name in self.scope.globals or name in self.scope.nonlocals:
                continue
            if name in live_in and name in defined:
                continue
            inits += templates.replace(_UNDEFINED, origin=node, name=name, symbol=templates.constant(name))
        return inits

    def _symbols(self, node):
        modified = anno.get(node, anno.MODIFIED)
        names = {m for m in modified if not qual_names.is_composite(m)}
        attributes = {m for m in modified if qual_names.is_composite(m) and qual_names.root(m) not in names}
        return names, attributes

    # -- statements -------------------------------------------------------------

    def block(self, statements):
        out = []
        for statement in statements:
            kind = type(statement)
            if kind is gast.If:
                out.extend(self.if_stmt(statement))
            elif kind is gast.While:
                out.extend(self.while_stmt(statement))
            elif kind is gast.For:
                out.extend(self.for_stmt(statement))
            else:
                if kind not in ast_util.SCOPES:
                    for owner, field in ast_util.child_blocks(statement):
                        setattr(owner, field, self.block(getattr(owner, field)))
                out.append(statement)
        return out

    def if_stmt(self, node):
        names, attributes = self._symbols(node)
        live_out = anno.get(node, anno.LIVE_OUT)
        live_in = anno.get(node, anno.LIVE_IN)
        always = self.scope.always_live
        state = sorted(names & live_out) + sorted(attributes)
        visible = names & (live_out | live_in | always)
        code = []
        body_name, body = self._body_function("if_body", node.body, _bound_in(node.body), visible, node)
        code += body
        if node.orelse:
            else_name, orelse = self._body_function("else_body", node.orelse, _bound_in(node.orelse), visible, node)
            code += orelse
            else_ref = templates.name(else_name)
        else:
            else_ref = templates.replace_as_expression("ag__.no_op")
        state_code, getter, setter = self._state_functions(state, node)
        code += state_code
        code += self._undefined_inits(node, visible, live_in)
        code += templates.replace(
            "ag__.if_stmt(test, body, orelse, get_state, set_state, symbol_names, nouts)",
            origin=node, test=node.test, body=body_name, orelse=else_ref, get_state=getter,
            set_state=setter, symbol_names=templates.str_tuple(state), nouts=templates.constant(len(state)),
        )
        return code

    def while_stmt(self, node):
        if node.orelse:
            raise AssertionError("loop else clauses are lowered by break_statements")
        names, attributes = self._symbols(node)
        live_in = anno.get(node, anno.LIVE_IN)
        live_out = anno.get(node, anno.LIVE_OUT)
        state = sorted(names & live_in) + sorted(attributes)
        visible = names & (live_in | live_out | self.scope.always_live)
        test_name = self.ctx.namer.new("loop_test")
        test_nonlocals, _ = self._declarations(anno.get(node, anno.DEFS))
        code = templates.replace(_TEST, origin=node, name=test_name, nonlocals=test_nonlocals, test=node.test)
        body_name, body = self._body_function("loop_body", node.body, _bound_in(node.body), visible, node)
        code += body
        state_code, getter, setter = self._state_functions(state, node)
        code += state_code
        code += self._undefined_inits(node, visible, live_in)
        code += templates.replace(
            "ag__.while_stmt(test, body, get_state, set_state, symbol_names, {})",
            origin=node, test=test_name, body=body_name, get_state=getter, set_state=setter,
            symbol_names=templates.str_tuple(state),
        )
        return code

    def for_stmt(self, node):
        if node.orelse:
            raise AssertionError("loop else clauses are lowered by break_statements")
        names, attributes = self._symbols(node)
        live_in = anno.get(node, anno.LIVE_IN)
        live_out = anno.get(node, anno.LIVE_OUT)
        always = self.scope.always_live
        target = node.target
        state = sorted(names & live_in) + sorted(attributes)
        visible = names & (live_in | live_out | always)
        body_statements = node.body
        bound = _bound_in(body_statements)
        if (
            type(target) is gast.Name
            and target.id not in visible
            and target.id not in self.scope.globals
            and target.id not in self.scope.nonlocals
        ):
            param = target.id
            iterate_names = target.id
        else:
            if self.itr_name is None:
                self.itr_name = self.ctx.namer.new("itr")
            param = self.itr_name
            iterate_names = ast.unparse(gast.gast_to_ast(target))
            body_statements = templates.replace("target = itr", origin=node, target=target, itr=param) + body_statements
            bound |= anno.get(node, anno.DEFS)
        code = []
        extra_test = anno.get(node, anno.EXTRA_LOOP_TEST, None)
        if extra_test is not None:
            test_name = self.ctx.namer.new("extra_test")
            code += templates.replace(_TEST, origin=node, name=test_name, nonlocals=[], test=extra_test)
            extra_ref = templates.name(test_name)
        else:
            extra_ref = templates.constant(None)
        body_name, body = self._body_function("loop_body", body_statements, bound, visible, node, param=param)
        code += body
        state_code, getter, setter = self._state_functions(state, node)
        code += state_code
        code += self._undefined_inits(node, visible, live_in)
        code += templates.replace(
            "ag__.for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names, {'iterate_names': names})",
            origin=node, iter_=node.iter, extra_test=extra_ref, body=body_name, get_state=getter,
            set_state=setter, symbol_names=templates.str_tuple(state), names=templates.constant(iterate_names),
        )
        return code


def _state_tuple(state, store):
    elements = []
    for symbol in state:
        if qual_names.is_composite(symbol):
            element = templates.replace_as_expression(symbol)
            if store:
                templates.set_store_ctx(element)
            elements.append(element)
        else:
            elements.append(symbol)
    return templates.name_tuple(elements, store=store)


def _hoist_declarations(function):
    """Moves the function's own ``global``/``nonlocal`` statements to its top."""
    declarations = [n for n in ast_util.walk_scope(function) if type(n) in (gast.Global, gast.Nonlocal)]
    if not declarations:
        return
    globals_ = sorted({name for d in declarations if type(d) is gast.Global for name in d.names})
    nonlocals = sorted({name for d in declarations if type(d) is gast.Nonlocal for name in d.names})

    def drop(statements):
        kept = [s for s in statements if type(s) not in (gast.Global, gast.Nonlocal)]
        if statements and not kept:
            kept = [gast.copy_location(gast.Pass(), statements[0])]
        return kept

    ast_util.transform_blocks(function, drop, into_functions=False)
    function.body = [s for s in function.body if type(s) not in (gast.Global, gast.Nonlocal)] or function.body
    hoisted = templates.replace(
        """
        global globals_
        nonlocal nonlocals
        """,
        origin=declarations[0], globals_=globals_, nonlocals=nonlocals,
    )
    start = ast_util.body_start(function)
    function.body[start:start] = hoisted


def transform(node, ctx):
    for function in reversed(ast_util.functions(node)):
        scope = anno.get(function, anno.SCOPE)
        _hoist_declarations(function)
        converter = _FunctionConverter(ctx, scope)
        function.body = converter.block(function.body)
    return node
