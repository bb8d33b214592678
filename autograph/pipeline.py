"""The conversion pipeline, declared once: an ordered list of named passes.

``run(node, ctx)`` applies them in order; ``run(node, ctx, stop_after=name)``
stops after the named pass (``autograph show --after NAME``).  A pass is
``transform(node, ctx) -> node``; analyses annotate, converters rewrite.
"""

from __future__ import annotations

import gast

from autograph.pyct.static_analysis import activity, liveness, reaching_definitions
from autograph.converters import (
    asserts,
    break_statements,
    call_trees,
    comprehensions,
    conditional_expressions,
    continue_statements,
    control_flow,
    lists,
    logical_expressions,
    private_names,
    raise_statements,
    return_statements,
    shapes,
    slices,
    unsupported,
    walrus,
)


def _analyze(node, ctx):
    """Activity, liveness and reaching definitions, in that order."""
    activity.analyze(node)
    if type(node) is not gast.Lambda:
        liveness.analyze(node)
        reaching_definitions.analyze(node)
    return node


def _activity(node, ctx):
    # Read by the next three passes only (the scopes' local names); each skips a function that
    # lacks what it rewrites (a call, a subscript, a list method), and then so does this.
    if not ctx.lacks(gast.Call, gast.Subscript, "list_method"):
        activity.analyze(node)
    return node


def _call_trees(node, ctx):
    # Jump lowerings add no calls, and the ones asserts add are not wrapped: a function without
    # a call of its own has none to convert.  Reads of `x.shape` become `ag__.shape_of(x)` first
    # (whatever `recursive` says; calls to ag__ are left alone).
    lowers_calls = ctx.options.recursive and not ctx.lacks(gast.Call)
    node = shapes.transform(node, ctx)
    return call_trees.transform(node, ctx) if lowers_calls else node


PASSES = (
    # Rejects what cannot be converted (yield, await, ...) before anything changes.
    ("unsupported", unsupported.transform),
    # Before any rewrite: every later pass (and the state names it emits) sees
    # the names the class body compiled (`self.__k` is `self._Counter__k`).
    ("private_names", private_names.transform),
    # Before the jump lowerings (and so before any pass adds blocks): the raises it rewrites
    # (raise ag__.raise_(E)) are the user's, nested in the user's if/while/for.
    ("raise_statements", raise_statements.transform),
    # Jumps go first, so that control flow only ever sees structured blocks.
    # break also lowers loop `else` clauses; it runs before continue so that a
    # `continue` moved out of an inner loop's else is lowered with its own loop.
    ("break_statements", break_statements.transform),
    ("continue_statements", continue_statements.transform),
    # After break and continue (its re-evaluated loop test is guarded by the break flag, and runs
    # after a continue); before return, whose flag then guards it too, and before the expression
    # lowerings, which leave a walrus under and/or/if-else alone.
    ("walrus", walrus.transform),
    # After break: a return inside a loop extends the loop test break added.
    ("return_statements", return_statements.transform),
    # Before call_trees, so the calls these emit to ag__ are not wrapped.
    ("asserts", asserts.transform),
    # Before activity (it makes lambdas of comprehensions) and call_trees (whose calls in them
    # are then converted, and which leaves the ag__ calls it emits alone).
    ("comprehensions", comprehensions.transform),
    # lists and slices read which names are local: activity on the lowered code.
    ("activity", _activity),
    ("lists", lists.transform),
    ("slices", slices.transform),
    # Before control flow, so the operator calls it emits are not wrapped.
    ("call_trees", _call_trees),
    # After the jump converters, so the extra loop tests they built
    # (`not break_`) and the guards (`if not do_return:`) are converted too;
    # before control flow, so they rewrite the user's statements rather than
    # the larger generated code.  Their lambdas are marked IN_PLACE: the
    # analyses read through them.
    ("conditional_expressions", conditional_expressions.transform),
    ("logical_expressions", logical_expressions.transform),
    # control_flow reads these annotations; they must describe the final statements.
    ("analysis", _analyze),
    ("control_flow", control_flow.transform),
)

PASS_NAMES = tuple(name for name, _ in PASSES)


def run(node, ctx, stop_after=None):
    """Runs the passes in order on ``node``; stops after ``stop_after`` if given."""
    if stop_after is not None and stop_after not in PASS_NAMES:
        raise ValueError(f"unknown pass {stop_after!r}; passes are: {', '.join(PASS_NAMES)}")
    for name, transform in PASSES:
        node = transform(node, ctx)
        if name == stop_after:
            break
    return node
