"""Lowers ``while`` and ``for`` loops to ``ag__.while_stmt`` and ``ag__.for_stmt`` calls (part of ``control_flow``).

Before::

    def f(n):
        i = 0
        total = 0
        while i < n:
            total += i
            i += 1
        for j in range(n):
            total += j * j
        return total

After::

    def f(n):
        i = 0
        total = 0

        def loop_test():
            return i < n

        def loop_body():
            nonlocal i, total
            total += i
            i += 1

        def get_state():
            return (i, total)

        def set_state(vars_):
            nonlocal i, total
            i, total = vars_
        ag__.while_stmt(loop_test, loop_body, get_state, set_state, ('i', 'total'), {})

        def loop_body_1(j):
            nonlocal total
            total += j * j

        def get_state_1():
            return (total,)

        def set_state_1(vars_):
            nonlocal total
            total, = vars_
        ag__.for_stmt(ag__.range(n), None, loop_body_1, get_state_1, set_state_1, ('total',), {'iterate_names': 'j'})
        return total

A loop's state is what its body changes that is live at the loop head.  The
jump flags of a lowered ``break``/``return`` (``anno.EXTRA_LOOP_TEST``) become
an ``extra_test`` closure: the ``for_stmt`` argument, the ``while_stmt``
``opts`` entry.  A ``for`` target that is a plain name not live after the
loop is the body's parameter; otherwise the body assigns it from ``itr``.
Loop ``else`` clauses are lowered earlier, by ``break_statements``.
"""

from __future__ import annotations

import ast

import gast

from autograph.converters import control_flow_closures as closures
from autograph.converters import control_flow_symbols as symbols
from autograph.pyct import anno, templates


def _loop_state(converter, node):
    """``(state, visible, inits, placeholders)`` of a loop: its state is what it changes that is live
    at the loop head; ``visible``, the names it binds whose enclosing value matters."""
    if node.orelse:
        raise AssertionError("loop else clauses are lowered by break_statements")
    names, composites = symbols.changed(node, converter.scope)
    live_in = anno.get(node, anno.LIVE_IN)
    live_out = anno.get(node, anno.LIVE_OUT)
    state = closures.ordered_state(names & live_in, composites)
    visible = names & (live_in | live_out | converter.scope.always_live)
    inits, placeholders = converter.undefined_inits(node, visible, live_in)
    return state, visible, inits, placeholders


def while_stmt(converter, node):
    """``(definitions, call)`` of the ``while`` loop ``node``."""
    state, visible, inits, placeholders = _loop_state(converter, node)
    code = []
    extra_test = anno.get(node, anno.EXTRA_LOOP_TEST, None)
    if extra_test is not None:
        extra_name, code = converter.extra_test(extra_test, node)
    test_name = converter.new_def("loop_test")
    test_nonlocals = sorted(anno.get(node, anno.DEFS))
    test_code = templates.replace(
        closures.TEST_CLOSURE, origin=node, name=test_name, nonlocals=test_nonlocals, test=node.test
    )
    code += converter.place(test_code, set(anno.get(node, anno.USES)) | set(anno.get(node, anno.DEFS)))
    body_name, body = converter.body_function(
        "loop_body", node.body, converter.summaries.bound(node.body), visible, node, placeholders=placeholders
    )
    code += body
    getter, setter, definitions = converter.state_functions(state, node)
    code += definitions
    opts = [("extra_test", templates.name(extra_name))] if extra_test is not None else []
    call = inits + templates.replace(
        "ag__.while_stmt(test, body, get_state, set_state, symbol_names, opts)", origin=node, test=test_name,
        body=body_name, get_state=getter, set_state=setter, symbol_names=templates.str_tuple(state),
        opts=closures.opts_dict(opts + converter.state_roles(state)),
    )
    return code, call


def for_stmt(converter, node):
    """``(definitions, call)`` of the ``for`` loop ``node``."""
    state, visible, inits, placeholders = _loop_state(converter, node)
    target = node.target
    body_statements = node.body
    bound = converter.summaries.bound(body_statements)
    if (
        type(target) is gast.Name
        and target.id not in visible
        and target.id not in converter.scope.nonlocals
    ):
        param = target.id
        iterate_names = target.id
    else:
        if converter.itr_name is None:
            converter.itr_name = converter.ctx.namer.new("itr")
        param = converter.itr_name
        if type(target) is gast.Tuple and all(type(e) is gast.Name for e in target.elts):
            iterate_names = ", ".join(e.id for e in target.elts)
        else:
            iterate_names = ast.unparse(gast.gast_to_ast(target))
        body_statements = templates.replace("target = itr", origin=node, target=target, itr=param) + body_statements
        bound |= anno.get(node, anno.DEFS)
    code = []
    extra_test = anno.get(node, anno.EXTRA_LOOP_TEST, None)
    if extra_test is not None:
        extra_name, code = converter.extra_test(extra_test, node)
        extra_ref = templates.name(extra_name)
    else:
        extra_ref = templates.constant(None)
    body_name, body = converter.body_function(
        "loop_body", body_statements, bound, visible, node, param=param,
        referenced=converter.summaries.referenced(node.body) | anno.get(node, anno.DEFS),
        assigns=anno.get(node, anno.DEFS) if param == converter.itr_name else (),
        placeholders=placeholders,
    )
    code += body
    getter, setter, definitions = converter.state_functions(state, node)
    code += definitions
    opts = [("iterate_names", templates.constant(iterate_names))] + converter.state_roles(state)
    call = inits + templates.replace(
        "ag__.for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names, opts)",
        origin=node, iter_=node.iter, extra_test=extra_ref, body=body_name, get_state=getter,
        set_state=setter, symbol_names=templates.str_tuple(state), opts=closures.opts_dict(opts),
    )
    return code, call
