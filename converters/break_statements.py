"""Lowers ``break`` (and the ``else`` clause of loops) to a flag tested by the loop.

Before::

    while i < n:
        if x[i] == target:
            break
        i += 1
    else:
        i = -1

After::

    break_ = False
    while i < n:            # extra loop test: not break_
        if x[i] == target:
            break_ = True
        else:
            i += 1
    if not break_:
        i = -1

The loop gets the flag test as its *extra loop test* (annotation
``EXTRA_LOOP_TEST``, which the control flow converter passes to
``for_stmt`` / ``while_stmt``), checked before each iteration, before the
loop's own test; the loop's own test stays as written.  A loop ``else`` runs iff the loop did not
break: without a ``break`` it simply follows the loop.
"""

from __future__ import annotations

import gast

from autograph.converters import lowering
from autograph.pyct import anno, ast_util, templates


class _BreakLowering(lowering.Lowering):
    def replace(self, node):
        return [self.flag_assignment(node)]


def add_loop_test(loop, test):
    """Makes ``loop`` also require ``test`` (checked first) to run an iteration."""
    extra = anno.get(loop, anno.EXTRA_LOOP_TEST, None)
    anno.set(loop, anno.EXTRA_LOOP_TEST, test if extra is None else ast_util.conjoin(test, extra))


def _lower_loop(loop, ctx):
    after = loop.orelse
    loop.orelse = []
    lowering_ = _BreakLowering(gast.Break, None)
    if not any(lowering_.contains(s) for s in loop.body):
        return [loop] + after
    lowering_.flag = ctx.namer.new("break_")
    loop.body, _ = lowering_.block(loop.body)
    add_loop_test(loop, lowering_.flag_test())
    lowering_.finish(loop)
    before = templates.replace("flag = False", origin=loop, flag=lowering_.flag)
    if after:
        after = templates.replace(
            """
            if not flag:
                orelse
            """,
            origin=after[0],
            flag=lowering_.flag,
            orelse=after,
        )
    return before + [loop] + after


def transform(node, ctx):
    if ctx.lacks(gast.Break, "loop_else"):
        return node
    lowering.emitted(ctx)

    def lower(statements):
        if not any(type(s) in ast_util.LOOPS for s in statements):
            return statements
        out = []
        for statement in statements:
            if type(statement) in ast_util.LOOPS:
                out.extend(_lower_loop(statement, ctx))
            else:
                out.append(statement)
        return out

    ast_util.transform_blocks(node, lower)
    return node
