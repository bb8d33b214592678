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

A call is an effect unless what it calls is known not to have one, which
only the runtime can tell (``jnp.abs`` is a name here): the loop's callee
expressions are kept (``jnp.abs``, ``w.at[i].set``), and the backend that
restarts evaluates them and checks each.  So they must mean then what they
meant when called: a callee starting at a name the loop binds (``f = g``,
``x.sum`` with ``x`` a loop variable) is an effect.  An item or attribute store,
``del``, ``global``/``nonlocal``, an attribute other than an array's
(``shape``, ``dtype``, ...) outside a callee, a ``for`` (it may advance an
iterator), a comprehension, a lambda or a string format is an effect, or
may hide one.  The runtime checks the last part too: the loop's variables
must hold values that cannot have changed in place (``x += 1`` on a numpy
array would have).

``annotate(node)`` sets ``anno.EFFECT_FREE`` on every ``while`` in ``node``:
``None`` if it may have an effect, else the list of its callees (copies).
"""

from __future__ import annotations

import gast

from autograph.pyct import anno, templates

_ARRAY_ATTRIBUTES = frozenset({"shape", "dtype", "ndim", "size", "T", "real", "imag"})

_STATEMENTS = (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.If, gast.While, gast.Break, gast.Continue,
               gast.Pass, gast.Return)

_EXPRESSIONS = (gast.BinOp, gast.UnaryOp, gast.BoolOp, gast.Compare, gast.IfExp, gast.Constant, gast.Tuple,
                gast.List, gast.Set, gast.Dict, gast.Starred, gast.Slice, gast.NamedExpr)

_CONTEXTS_AND_OPERATORS = (gast.expr_context, gast.operator, gast.unaryop, gast.boolop, gast.cmpop)


class _Effects:
    """Walks code, collecting callees; ``free`` is False once something may have an effect."""

    def __init__(self):
        self.callees = []

    def free(self, node) -> bool:
        kind = type(node)
        if kind is gast.Name:
            return True
        if kind is gast.Attribute:
            return type(node.ctx) is gast.Load and node.attr in _ARRAY_ATTRIBUTES and self.free(node.value)
        if kind is gast.Subscript:
            return type(node.ctx) is gast.Load and self.free(node.value) and self.free(node.slice)
        if kind is gast.Call:
            if not self.callee(node.func):
                return False
            self.callees.append(templates.copy_tree(node.func))
            return all(self.free(a) for a in node.args) and all(self.free(k.value) for k in node.keywords)
        if kind is gast.Expr:  # a docstring, or a call made for its value (the callee is checked)
            return type(node.value) in (gast.Constant, gast.Call) and self.free(node.value)
        if not isinstance(node, _STATEMENTS + _EXPRESSIONS + _CONTEXTS_AND_OPERATORS):
            return False
        return all(self.free(child) for child in gast.iter_child_nodes(node))

    def callee(self, node) -> bool:
        """True for ``f``, ``jnp.linalg.norm``, ``x.at[i].set``: loads of names, attributes, items."""
        kind = type(node)
        if kind is gast.Name:
            return True
        if kind is gast.Attribute:
            return self.callee(node.value)
        return (kind is gast.Subscript and self.callee(node.value) and self.free(node.slice)
                and not any(type(n) is gast.Call for n in gast.walk(node.slice)))  # evaluated again to judge


def callees_if_effect_free(nodes):
    """The callees of ``nodes`` (statements and expressions) if, calls aside, running them can only
    bind names; else ``None``.  A callee must not start at a name ``nodes`` bind: what it is when
    the runtime judges it would not be what was called."""
    walker = _Effects()
    if not all(walker.free(node) for node in nodes):
        return None
    bound = {n.id for node in nodes for n in gast.walk(node) if type(n) is gast.Name and type(n.ctx) is gast.Store}
    return None if any(_root(callee) in bound for callee in walker.callees) else walker.callees


def _root(callee) -> str:
    while type(callee) is not gast.Name:
        callee = callee.value
    return callee.id


def annotate(node):
    for loop in gast.walk(node):
        if type(loop) is gast.While:
            anno.set(loop, anno.EFFECT_FREE, callees_if_effect_free([loop.test, *loop.body]))
    return node
