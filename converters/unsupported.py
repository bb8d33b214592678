"""Rejects what cannot be converted, before any pass changes the code.

Raises ``ConversionError`` naming the construct and the user's line for:
``yield``/``yield from`` and ``await`` in the converted function, ``async
def``, ``global`` (rebinding module globals from converted code: the graph
could not see the update), ``return``/``break``/``continue`` inside a ``finally`` block (their
lowering would stop them from swallowing the exception being raised), and
user names spelled like the operators module, ``ag__``.

Nested generator or ``async`` functions are not an error: they are marked
``SKIP`` and stay exactly as written (plain Python, unconverted).  So are
nested classes, whose methods are converted when called.  Zero-argument
``super()`` becomes ``super(__class__, self)``, which also works from the
closures the control flow converter creates.

Before::

    def method(self, x):
        if x:
            return super().method(x)

After::

    def method(self, x):
        if x:
            return super(__class__, self).method(x)
"""

from __future__ import annotations

import gast

from autograph.converters import lists, logical_expressions
from autograph.pyct import anno, ast_util, naming, templates
from autograph.pyct.context import AG_NAME

_JUMPS = (gast.Return, gast.Break, gast.Continue)
# The node types _check_function refuses (or looks into): a function with none of them, and
# without the name ag__, needs no check.
_CHECKED = frozenset({gast.Yield, gast.YieldFrom, gast.Await, gast.AsyncFor, gast.AsyncWith, gast.Try, gast.Global})
_FIX_GENERATOR = (
    "Generators cannot be converted; call the generator from converted code instead (it runs as plain "
    "Python), or mark the function with @ag.do_not_convert."
)
_FIX_ASYNC = "Async functions cannot be converted; mark the function with @ag.do_not_convert."
_FIX_GLOBAL = (
    "Return the new value and assign the global outside the converted function, keep the value in a "
    "mutable object (list, dict, attribute), or mark the function with @ag.do_not_convert."
)


def _is_generator(function) -> bool:
    return any(type(n) in (gast.Yield, gast.YieldFrom, gast.Await) for n in ast_util.walk_scope(function))


def _check_function(function, ctx):
    for node in ast_util.walk_scope(function):
        kind = type(node)
        if kind in (gast.Yield, gast.YieldFrom):
            raise ctx.error(node, "'yield' (a generator function)", _FIX_GENERATOR)
        if kind in (gast.Await, gast.AsyncFor, gast.AsyncWith):
            raise ctx.error(node, "'await'/'async' syntax", _FIX_ASYNC)
        if kind is gast.Try and node.finalbody:
            _check_finally(node.finalbody, ctx)
        if kind is gast.Global:
            raise ctx.error(node, f"'global {', '.join(node.names)}' (rebinding a module global)", _FIX_GLOBAL)
        if kind is gast.Name and node.id == AG_NAME:
            fix = f"'{AG_NAME}' is reserved for autograph's operators; rename the variable."
            raise ctx.error(node, f"the name '{AG_NAME}'", fix)


def _check_finally(statements, ctx):
    """A jump in a ``finally`` block swallows the exception being raised: lowering it would not."""
    for statement in statements:
        inner_nodes = [statement] if type(statement) in ast_util.SCOPES else [statement, *ast_util.walk_scope(statement)]
        for inner in inner_nodes:
            if type(inner) in _JUMPS:
                word = type(inner).__name__.lower()
                raise ctx.error(inner, f"'{word}' inside a 'finally' block", f"Move the '{word}' after the try statement.")


def _rewrite_super(function):
    params = function.args.posonlyargs + function.args.args
    if not params:
        return
    self_name = params[0].id

    def visit(node):
        if (
            type(node) is gast.Call
            and type(node.func) is gast.Name
            and node.func.id == "super"
            and not node.args
            and not node.keywords
        ):
            return gast.copy_location(
                templates.replace_as_expression("super(__class__, self_)", origin=node, self_=self_name), node
            )
        return node

    for statement in function.body:
        if type(statement) in ast_util.SCOPES:
            continue
        for node in [statement, *ast_util.walk_scope(statement)]:
            ast_util.map_children(node, visit)


def transform(node, ctx):
    if type(node) is gast.AsyncFunctionDef:
        raise ctx.error(node, "'async def'", _FIX_ASYNC)
    nested, mentions_super, reserved = [], False, False
    kinds = set()
    names = ctx.namer.used if ctx.names_pending else None
    for inner in ast_util.walk(node):
        kind = type(inner)
        kinds.add(kind)
        if names is not None:
            naming.add_names(inner, names)
        if kind is gast.UnaryOp and type(inner.op) is gast.Not:
            kinds.add("not")
        elif kind is gast.Compare and len(inner.ops) > 1:
            kinds.add("chain")
        elif kind is gast.Compare and logical_expressions.is_bool_identity(inner):
            kinds.add("is_bool")
        elif kind in ast_util.LOOPS and inner.orelse:
            kinds.add("loop_else")
        elif kind is gast.Attribute:
            if inner.attr in lists.METHODS:
                kinds.add("list_method")
            elif inner.attr == "shape":
                kinds.add("shape")  # converters/shapes.py
            elif inner.attr == "dtype" and type(inner.ctx) is gast.Store:
                kinds.add("dtype_store")  # converters/shapes.py
        if kind in ast_util.FUNCTIONS and inner is not node:
            nested.append(inner)
        elif kind is gast.Name:
            if inner.id == "super":
                mentions_super = True
            elif inner.id == AG_NAME:
                reserved = True
    for inner in nested:
        if type(inner) is gast.AsyncFunctionDef or _is_generator(inner):
            anno.set(inner, ast_util.SKIP, True)
    functions = ast_util.functions(node) if nested or type(node) is gast.Lambda else [node]
    anno.set(node, ast_util.FUNCTIONS_CACHE, functions)
    if reserved or not kinds.isdisjoint(_CHECKED):
        for function in functions:
            _check_function(function, ctx)
    if mentions_super and type(node) is not gast.Lambda:
        _rewrite_super(node)
    ctx.kinds = kinds
    ctx.names_pending = False
    return node
