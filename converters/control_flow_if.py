"""Lowers an ``if`` statement to an ``ag__.if_stmt`` call over branch closures (part of ``control_flow``).

Before::

    def f(x, limit):
        y = x
        if x > limit:
            tmp = limit * 2
            y = tmp - limit
        return y

After (``tmp`` is dead after the ``if``: local to the branch)::

    def f(x, limit):
        y = x

        def if_body():
            nonlocal y
            tmp = limit * 2
            y = tmp - limit

        def get_state():
            return (y,)

        def set_state(vars_):
            nonlocal y
            y, = vars_
        ag__.if_stmt(x > limit, if_body, ag__.no_op, get_state, set_state, ('y',), 1)
        return y

The state lists the ``nouts`` outputs (the names bound in a branch and live
after the ``if``, then the attribute chains and containers it changes), then
the names a branch uses that are dead after it, so that a traced else
branch starts where the true branch did.  Without an ``else`` the false branch
is ``ag__.no_op``.
"""

from __future__ import annotations

import gast

from autograph.converters import control_flow_closures as closures
from autograph.converters import control_flow_symbols as symbols
from autograph.pyct import anno, templates


def if_stmt(converter, node):
    """``(definitions, call)`` of ``node``: its closures, then its placeholders and operator call."""
    names, composites = symbols.changed(node, converter.scope)
    live_out = anno.get(node, anno.LIVE_OUT)
    live_in = anno.get(node, anno.LIVE_IN)
    always = converter.scope.always_live
    outputs = closures.ordered_state(names & live_out, composites)
    visible = names & (live_out | live_in | always)
    # The names a branch reads or writes in the enclosing scope but that are dead
    # after the if: state too (not outputs), so each branch starts from the same values.
    state = outputs + sorted(visible - set(outputs))
    inits, placeholders = converter.undefined_inits(node, visible, live_in)
    body_name, code = converter.body_function(
        "if_body", node.body, converter.summaries.bound(node.body), visible, node, placeholders=placeholders
    )
    if node.orelse:
        else_name, orelse = converter.body_function(
            "else_body", node.orelse, converter.summaries.bound(node.orelse), visible, node, placeholders=placeholders
        )
        code += orelse
        else_ref = templates.name(else_name)
    else:
        else_ref = templates.replace_as_expression("ag__.no_op")
    getter, setter, definitions = converter.state_functions(state, node)
    code += definitions
    template = "ag__.if_stmt(test, body, orelse, get_state, set_state, symbol_names, nouts)"
    roles = converter.state_roles(state)
    if roles:
        # a tuple of pairs, not an opts dict: Python builds a dict display at every call (each iteration
        # of a loop around the if), a tuple of constants is one constant
        template = "ag__.if_stmt(test, body, orelse, get_state, set_state, symbol_names, nouts, roles)"
    call = inits + templates.replace(
        template, origin=node, test=node.test, body=body_name, orelse=else_ref, get_state=getter,
        set_state=setter, symbol_names=templates.str_tuple(state), nouts=templates.constant(len(outputs)),
        roles=gast.Tuple(elts=[gast.Tuple(elts=[templates.constant(r), n], ctx=gast.Load()) for r, n in roles],
                         ctx=gast.Load()),
    )
    return code, call
