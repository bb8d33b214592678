"""Names a statement reads only after a walrus of the same statement bound them.

``c += (t := i + 1) * t`` reads ``t`` once ``(t := ...)`` bound it: ``t`` is
not live before the statement, and a loop around it need not carry it.
``activity`` subtracts these names from the statement's reads.

The expression is walked in Python's evaluation order.  A walrus counts only
where it is always evaluated (not in an operand ``and``/``or``/a chained
comparison/a conditional expression may skip, nor in a lambda or
comprehension); a read counts as covered only after such a walrus.
"""

from __future__ import annotations

import gast

_SCOPES = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def bound_before_read(expr) -> set:
    """The names ``expr`` binds with an always-evaluated walrus and reads only after it."""
    bound, early = set(), set()

    def visit(node, certain):
        kind = type(node)
        if kind is gast.NamedExpr:
            visit(node.value, certain)
            if certain:
                bound.add(node.target.id)
            return
        if kind is gast.Name:
            if type(node.ctx) is not gast.Store and node.id not in bound:
                early.add(node.id)
            return
        if kind is gast.BoolOp:
            parts = [(node.values[0], certain)] + [(v, False) for v in node.values[1:]]
        elif kind is gast.IfExp:
            parts = [(node.test, certain), (node.body, False), (node.orelse, False)]
        elif kind is gast.Compare:
            parts = [(node.left, certain), (node.comparators[0], certain)] + [(c, False) for c in node.comparators[1:]]
        elif kind is gast.Dict:  # key, value, key, value, ... as Python evaluates them
            parts = [(part, certain) for pair in zip(node.keys, node.values) for part in pair if part is not None]
        elif kind in _SCOPES:
            parts = [(child, False) for child in gast.iter_child_nodes(node)]
        else:
            parts = [(child, certain) for child in gast.iter_child_nodes(node)]
        for child, child_certain in parts:
            visit(child, child_certain)

    visit(expr, True)
    return bound - early
