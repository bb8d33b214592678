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
written: a bare ``raise``, and any ``raise`` inside a ``try`` or ``with``
block of the function (a handler or context manager there may catch it,
which a staged raise could not honour).
"""

from __future__ import annotations

import gast

from autograph import ast_util, templates

# The statements whose blocks are searched (not try/with: a raise there stays Python).
_NESTING = (gast.If, gast.While, gast.For)


def _lower(node):
    if node.cause is None:
        node.exc = templates.replace_as_expression("ag__.raise_(exc)", origin=node.exc, exc=node.exc)
    else:
        node.exc = templates.replace_as_expression("ag__.raise_(exc, cause)", origin=node.exc, exc=node.exc,
                                                   cause=node.cause)
        node.cause = None  # raise_ sets it (evaluated once, as written)
    return node


def _visit(statements):
    for index, statement in enumerate(statements):
        kind = type(statement)
        if kind is gast.Raise and statement.exc is not None:
            statements[index] = _lower(statement)
        elif kind in _NESTING:
            for owner, field in ast_util.child_blocks(statement):
                _visit(getattr(owner, field))


def transform(node, ctx):
    if ctx.lacks(gast.Raise):
        return node
    if ctx.kinds is not None:
        ctx.kinds |= {gast.Call, gast.Attribute, gast.Name}
    for function in ast_util.functions(node):
        _visit(function.body)
    return node
