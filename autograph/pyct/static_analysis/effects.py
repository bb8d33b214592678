"""Which ``while`` loops can be run again from their start: their test and body have no effect
but on the loop's own variables.

A loop whose test becomes a traced value only after some Python iterations
(``while True:`` with a ``break`` decided by a tensor) is staged from where
that happened: the iterations before it are traced inline, in front of the
staged loop.  A backend that can stage it from the start instead gets one
loop, as a person would write it -- if running those iterations again is
harmless.  That holds when the code binds names and nothing else:

    while True:                        # effect free: names, arithmetic,
        total = total + x * k          # comparisons, reads of items and
        k += 1                         # array attributes, jumps
        if total > limit or k > 100:
            break

A call, an attribute other than an array's (``shape``, ``dtype``, ...), an
item or attribute store, ``del``, ``global``/``nonlocal``, a ``for`` (it may
advance an iterator), a comprehension, a lambda or a string format is an
effect, or may hide one.  The runtime checks the other half when it
restarts: the loop's variables must hold values that cannot have changed in
place (``x += 1`` on a numpy array would have).

``annotate(node)`` sets ``anno.EFFECT_FREE`` on every ``while`` in ``node``.
"""

from __future__ import annotations

import gast

from autograph.pyct import anno

_ARRAY_ATTRIBUTES = frozenset({"shape", "dtype", "ndim", "size", "T", "real", "imag"})

_STATEMENTS = (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.If, gast.While, gast.Break, gast.Continue,
               gast.Pass, gast.Return)

_EXPRESSIONS = (gast.BinOp, gast.UnaryOp, gast.BoolOp, gast.Compare, gast.IfExp, gast.Constant, gast.Tuple,
                gast.List, gast.Set, gast.Dict, gast.Starred, gast.Slice, gast.NamedExpr)

_CONTEXTS_AND_OPERATORS = (gast.expr_context, gast.operator, gast.unaryop, gast.boolop, gast.cmpop)


def _free(node) -> bool:
    kind = type(node)
    if kind is gast.Name:
        return True
    if kind is gast.Attribute:
        return type(node.ctx) is gast.Load and node.attr in _ARRAY_ATTRIBUTES and _free(node.value)
    if kind is gast.Subscript:
        return type(node.ctx) is gast.Load and _free(node.value) and _free(node.slice)
    if kind is gast.Expr:  # a docstring; any other expression statement is there for its effect
        return type(node.value) is gast.Constant
    if not isinstance(node, _STATEMENTS + _EXPRESSIONS + _CONTEXTS_AND_OPERATORS):
        return False
    return all(_free(child) for child in gast.iter_child_nodes(node))


def effect_free(nodes) -> bool:
    """True if running ``nodes`` (statements and expressions) can only bind names."""
    return all(_free(node) for node in nodes)


def annotate(node):
    for loop in gast.walk(node):
        if type(loop) is gast.While:
            anno.set(loop, anno.EFFECT_FREE, effect_free([loop.test, *loop.body]))
    return node
