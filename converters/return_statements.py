"""Lowers ``return`` inside control flow to one ``return`` at the end of the function.

Before::

    def f(x):
        if x < 0:
            return -x
        return x

After::

    def f(x):
        if x < 0:
            retval_ = -x
        else:
            retval_ = x
        return retval_

A ``return`` inside a loop sets a flag that stops the loop and guards the
code after it (``retval_`` starts as ``None`` if the function may end
without a ``return``, else as a placeholder never returned)::

    do_return = False
    retval_ = ag__.UndefinedReturnValue()
    for x in xs:
        if x > 0:
            retval_ = x
            do_return = True
    if not do_return:
        retval_ = -1
    return retval_

A ``while True:`` loop without a ``break`` ends only by returning, so a
function ending with one always returns (``retval_`` starts as the
placeholder).

Functions whose returns are not nested in other statements are unchanged.
"""

from __future__ import annotations

import gast

from autograph.converters import break_statements, lowering
from autograph.pyct import anno, ast_util, templates


class _ReturnLowering(lowering.Lowering):
    stop_at_loops = False

    def __init__(self, flag, retval):
        super().__init__(gast.Return, flag)
        self.retval = retval

    def replace(self, node):
        value = node.value if node.value is not None else templates.constant(None)
        statements = templates.replace("retval = value", origin=node, retval=self.retval, value=value)
        anno.set(statements[0], anno.RETURN_VALUE, True)
        return statements + [self.flag_assignment(node)]

    def lower_loop(self, loop):
        break_statements.add_loop_test(loop, self.flag_test())

    def loop_status(self, loop):
        # `while True:` without a break of its own ends only by a return (or an exception): the
        # code after it never runs, and the function cannot fall off its end there.
        endless = type(loop) is gast.While and type(loop.test) is gast.Constant and bool(loop.test.value)
        if endless and not loop.orelse and anno.get(loop, anno.EXTRA_LOOP_TEST, None) is None:
            return lowering.ALWAYS
        return lowering.MAYBE


def _needs_lowering(function) -> bool:
    """True if a ``return`` of ``function`` is nested inside another statement."""
    top_level = {id(statement) for statement in function.body}
    return any(
        type(node) is gast.Return and id(node) not in top_level for node in ast_util.scope_statements(function.body)
    )


def _strip_trailing_flags(statements, flag):
    """Removes flag assignments that end the function: nothing reads them after."""
    if not statements:
        return statements
    last = statements[-1]
    if anno.get(last, anno.GENERATED, None) == flag and len(statements) > 1:
        return statements[:-1]
    if type(last) is gast.If:
        last.body = _strip_trailing_flags(last.body, flag)
        last.orelse = _strip_trailing_flags(last.orelse, flag)
    return statements


def _lower_function(function, ctx):
    if not _needs_lowering(function):
        return
    lowering.emitted(ctx)
    lowering_ = _ReturnLowering(ctx.namer.new("do_return"), ctx.namer.new("retval_"))
    ctx.roles[lowering_.flag] = "return_flag"
    ctx.roles[lowering_.retval] = "return_value"
    start = ast_util.body_start(function)
    original_status = lowering_.status(function.body[start:])
    body, _ = lowering_.block(function.body[start:])
    function.body = function.body[:start] + _strip_trailing_flags(body, lowering_.flag)
    lowering_.finish(function)
    body = function.body[start:]
    prologue = []
    if lowering_.flag_used:
        prologue = templates.replace("flag = False", origin=function.body[start], flag=lowering_.flag)
    if original_status != lowering.ALWAYS:
        # The function may end without a return: its value is then None.
        prologue += templates.replace("retval = None", origin=function.body[start], retval=lowering_.retval)
    elif lowering_.flag_used:
        # Every path returns, so this value is never returned; a tensor loop
        # may still need an initial value of the right type (the runtime makes one).
        prologue += templates.replace(
            "retval = ag__.UndefinedReturnValue()", origin=function.body[start], retval=lowering_.retval
        )
    epilogue = templates.replace("return retval", origin=function.body[-1], retval=lowering_.retval)
    function.body = function.body[:start] + prologue + body + epilogue


def transform(node, ctx):
    for function in ast_util.functions(node):
        _lower_function(function, ctx)
    return node
