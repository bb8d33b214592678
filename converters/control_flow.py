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
            y, = vars_
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
  is wrapped in ``ag__.defined(x)``, which raises that error too;
* ``del x`` of a local becomes ``x = ag__.Undefined('x')`` (checked first
  with ``ag__.defined(x)`` where ``x`` may be unbound): after it ``x`` is
  what reaching definitions says it is, a name no definition reaches, and a
  ``get_state`` reading it (``if c: del x``) reads the placeholder.

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

The pass is this module (the walk over each function's blocks, the checked
reads, the renumbering) and four beside it: ``control_flow_if`` and
``control_flow_loops`` lower each statement, ``control_flow_closures`` builds
the closures they share (bodies, state functions, placeholders, placement),
``control_flow_symbols`` reads what a statement binds and changes from the
activity annotations.
"""

from __future__ import annotations

import gast

from autograph.converters import control_flow_closures as closures
from autograph.converters import control_flow_if, control_flow_loops
from autograph.converters import control_flow_symbols as symbols
from autograph.pyct import anno, ast_util, templates

# Expressions whose names are not read where they stand.
_OPAQUE_EXPRESSIONS = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)

# The statements lowered to operator calls, each with its lowering: (converter, node) -> (definitions, call).
_LOWERINGS = {
    gast.If: control_flow_if.if_stmt,
    gast.While: control_flow_loops.while_stmt,
    gast.For: control_flow_loops.for_stmt,
}


class _FunctionConverter(closures.ClosureBuilder):
    """Converts the blocks of one function: its ``if``/``while``/``for`` statements become closures
    and operator calls; the other statements stay, their nested blocks converted."""

    __slots__ = ()

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
            lowering = _LOWERINGS.get(kind)
            if lowering is not None:
                definitions, call = lowering(self, statement)
                out.extend(definitions)
                out.extend(call)
            elif kind is gast.Delete:
                out.extend(_unbind(statement, self.scope.locals - self.scope.captured))
            else:
                if kind not in ast_util.SCOPES:
                    for owner, field in ast_util.child_blocks(statement):
                        shared = dict(frame.states)
                        setattr(owner, field, self.block(getattr(owner, field)))
                        frame.states = shared
                out.append(statement)
            if frame is not self.frames[0]:  # (a body closure: its own names have no value before it binds them)
                frame.assigned |= self.summaries.bound([statement]) & frame.owned
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
        elif kind is gast.Delete:
            check(statement)  # `del d[k]`: reads d
            deleted = [n.id for n in _flat_targets(statement.targets) if type(n) is gast.Name and n.id in maybe_unbound]
            unbound_reads.update(deleted)
            # `del x` fails where x is unbound: check x first.
            return [s for name in deleted for s in templates.replace("ag__.defined(name)", origin=statement, name=name)]
        elif kind not in (gast.Try, gast.ClassDef) and kind not in ast_util.FUNCTIONS:
            check(statement)
        return []


def _flat_targets(targets):
    """The targets of a ``del``, its tuples and lists flattened: ``del a, (b, d[k])`` -> a, b, d[k]."""
    for target in targets:
        if type(target) in (gast.Tuple, gast.List):
            yield from _flat_targets(target.elts)
        else:
            yield target


def _unbind(statement, local_names):
    """``del x`` of a local: ``x = ag__.Undefined('x')``, in the order of its targets; ``del d[k]`` stays."""
    targets = list(_flat_targets(statement.targets))
    if not any(type(t) is gast.Name and t.id in local_names for t in targets):
        return [statement]
    out = []
    for target in targets:
        if type(target) is gast.Name and target.id in local_names:
            out += templates.replace(
                closures.UNDEFINED, origin=statement, name=target.id, symbol=templates.constant(target.id)
            )
        else:
            out.append(gast.copy_location(gast.Delete(targets=[target]), statement))
    return out


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
        converter.frames.append(closures.Frame(scope.locals, set(scope.params) | symbols.directly_bound(function.body)))
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
            inits += templates.replace(closures.UNDEFINED, origin=function, name=name, symbol=templates.constant(name))
        body[start:start] = inits
        function.body = body
        _renumber(function, converter.generated, ctx.namer.used)
    return node
