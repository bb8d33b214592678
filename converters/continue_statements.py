"""Lowers ``continue`` to guarded code (and a flag only where one is needed).

Before::

    for x in xs:
        if x < 0:
            continue
        total += x

After::

    for x in xs:
        if not x < 0:
            total += x

When the code after a ``continue`` cannot simply move into an ``else``
branch, a flag reset at the top of each iteration guards it::

    for x in xs:
        continue_ = False
        if x > 0:
            if x > 10:
                continue_ = True
            count += 1
        if not continue_:
            total += x
"""

from __future__ import annotations

import gast

from autograph.converters import lowering
from autograph.pyct import ast_util, templates


class _ContinueLowering(lowering.Lowering):
    def replace(self, node):
        return [self.flag_assignment(node)]


def _lower_loop(loop, ctx):
    lowering_ = _ContinueLowering(gast.Continue, None)
    if not any(lowering_.contains(s) for s in loop.body):
        return
    lowering_.flag = ctx.namer.new("continue_")
    loop.body, _ = lowering_.block(loop.body)
    lowering_.finish(loop)
    if lowering_.flag_used:
        loop.body = templates.replace("flag = False", origin=loop, flag=lowering_.flag) + loop.body


def transform(node, ctx):
    if ctx.lacks(gast.Continue):
        return node
    lowering.emitted(ctx)

    def lower(statements):
        for statement in statements:
            if type(statement) in ast_util.LOOPS:
                _lower_loop(statement, ctx)
        return statements

    ast_util.transform_blocks(node, lower)
    return node
