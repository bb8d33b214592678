"""Lowers ``raise E`` to ``raise ag__.raise_(E)``, which a tensor ``if`` can stage.

Before::

    def f(n):
        if n < 0:
            raise ValueError("n must be >= 0")
        return n * 2

After::

    def f(n):
        if n < 0:
            raise ag__.raise_(ValueError("n must be >= 0"))
        return n * 2

On the Python path ``ag__.raise_`` returns the exception and the user's own
line raises it (tracebacks end there); in a traced branch of a tensor ``if``
it records an op that raises the same exception when the graph runs that
branch (``runtime/operators/raises.py``), and ends the branch.
``raise E from C`` becomes ``raise ag__.raise_(E, C)`` (``raise_`` sets the
cause).  A ``raise`` at the top of a function is lowered too: the function
may be a helper called in a tensor branch (``if n < 0: fail(n)``).  Left as
written: a bare ``raise``.

A ``try`` with ``except`` clauses tells the runtime which exceptions its
handlers catch, and each handler first checks what it caught::

    try:
        with ag__.python_try(lambda: (ValueError,), 'try'):
            y = helper(x)
    except ValueError:
        ag__.caught()
        y = -1

A ``with`` statement hands each context manager to the runtime, which
learns what it may suppress (``contextlib.suppress``'s types, nothing for
``np.errstate``, anything for a manager it does not know)::

    with ag__.python_with(np.errstate(divide='ignore')) as state:
        y = helper(x)

A raise under a tensor condition that a handler (or context manager) around
the condition would catch cannot be staged (the handler runs only while
tracing): it is a ``TracingError``, as is any exception raised while tracing
a tensor branch or loop body that reaches such a handler (``caught``).
"""

from __future__ import annotations

import gast

from autograph.pyct import ast_util, templates

# The statements whose blocks are searched.
_NESTING = (gast.If, gast.While, gast.For, gast.Try, gast.With)


def _lower(node):
    if node.cause is None:
        node.exc = templates.replace_as_expression("ag__.raise_(exc)", origin=node.exc, exc=node.exc)
    else:
        node.exc = templates.replace_as_expression("ag__.raise_(exc, cause)", origin=node.exc, exc=node.exc,
                                                   cause=node.cause)
        node.cause = None  # raise_ sets it (evaluated once, as written)
    return node


def _handled(node):
    """``try`` with handlers: its body inside ``ag__.python_try(lambda: types)`` (``None`` if one
    handler catches everything), each handler starting with ``ag__.caught()``."""
    types = [h.type for h in node.handlers]
    caught = None if any(t is None for t in types) else gast.Tuple(
        elts=[templates.copy_tree(t) for t in types], ctx=gast.Load())
    node.body = templates.replace(
        """
        with ag__.python_try(types, 'try'):
            body
        """,
        origin=node, types=templates.constant(None) if caught is None else
        templates.replace_as_expression("lambda: caught", origin=node, caught=caught), body=node.body,
    )
    for handler in node.handlers:
        handler.body = templates.replace("ag__.caught()", origin=handler) + handler.body


def _visit(statements):
    for index, statement in enumerate(statements):
        kind = type(statement)
        if kind is gast.Raise and statement.exc is not None:
            statements[index] = _lower(statement)
        elif kind in _NESTING:
            for owner, field in ast_util.child_blocks(statement):
                _visit(getattr(owner, field))
            if kind is gast.Try and statement.handlers:
                _handled(statement)
            elif kind is gast.With:  # its context managers may suppress what the body raises
                for item in statement.items:
                    item.context_expr = templates.replace_as_expression(
                        "ag__.python_with(manager)", origin=item.context_expr, manager=item.context_expr)


def transform(node, ctx):
    if ctx.lacks(gast.Raise, gast.Try, gast.With):
        return node
    if ctx.kinds is not None:
        ctx.kinds |= {gast.Call, gast.Attribute, gast.Name, gast.With, gast.Lambda, gast.Tuple, gast.Expr,
                      gast.Constant}
    for function in ast_util.functions(node):
        _visit(function.body)
    return node
