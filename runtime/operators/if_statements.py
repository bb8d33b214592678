"""``if_stmt``: the operator an ``if`` statement lowers to, its Python path beside its graph path.

``if_stmt(cond, body, orelse, get_state, set_state, symbol_names, nouts, roles)``
runs ``body()`` or ``orelse()`` with Python's truth of ``cond``; for any other
value it asks the overload registry (``operators/dispatch.py``).  The numpy
runtime's ``Tensor`` registers ``staged_if_stmt`` here: both branches traced
into sub-graphs, one ``If`` op, the outputs bound by ``set_state``
(``tracing.branches.build_cond`` holds the rules: dtypes, shapes, Python
values, undefined variables, staged lists).
"""

from __future__ import annotations

from autograph.runtime.core.location import construct_at
from autograph.runtime.operators import (
    aliases, container_identity, dispatch, outside_writes, raises, recursion, statement_state,
)
from autograph.runtime.operators.iterables import is_tensor
from autograph.runtime.tracing.branches import build_cond


def no_op():
    """The ``orelse`` of an ``if`` that has no ``else`` branch."""


def no_state(vars_=None):
    """``get_state`` and ``set_state`` of a statement that has no state."""
    return ()


def if_stmt(cond, body, orelse, get_state, set_state, symbol_names, nouts, roles=()):
    """Runs ``body()`` if ``cond`` is true, else ``orelse()``.  ``roles``: the state variables with a
    role, as ``(role, name)`` pairs (one constant in generated code: an ``if`` in a loop builds
    nothing); a handler gets them as its ``opts`` dict."""
    if cond is True:
        body()
    elif cond is False:
        if orelse is not no_op:
            orelse()
    else:
        staged = dispatch.handler_for("if_stmt", cond)
        if staged is not None:
            return staged(cond, body, orelse, get_state, set_state, symbol_names, nouts, dict(roles) or None)
        if cond:
            body()
        else:
            orelse()


def staged_if_stmt(cond, body, orelse, get_state, set_state, symbol_names, nouts, opts=None):
    """Graph path of ``if``: both branches traced, one ``If`` op, outputs bound by ``set_state``.

    The state is the ``nouts`` outputs followed by the names the branches
    use but that are dead after the ``if``: every branch starts from the
    same state, and afterwards the outputs take the ``If``'s results while
    the rest gets its values from before back.  Attributes and items that
    calls in the branches change are added to the state (``outside_writes``).
    """
    return outside_writes.as_state(
        lambda get, put, names, outs: _if_graph(cond, body, orelse, get, put, names, outs, opts),
        get_state, set_state, symbol_names, nouts)


def _if_graph(cond, body, orelse, get_state, set_state, symbol_names, nouts, opts):
    where = construct_at("the if")
    init = tuple(get_state())
    names = statement_state.labels(symbol_names, init, opts)
    outside = outside_writes.Snapshot(symbol_names or (), where)

    dead = []  # the branches that reached a staged raise (operators/raises.py)
    ended = {}  # branch index -> (origins, outputs): which of its copies each list and dict is after it

    def branch(fn, index):
        def run():
            given = statement_state.fresh(init)
            watch = container_identity.Watch(given, nouts)
            set_state(given)
            aliases.refuse_unseen(init, names, symbol_names or (), (fn,), where)
            try:
                with raises.branch():
                    outside.call(outside.locking(fn), undo=False)  # (undone below, unless the branch is dead)
            except raises.DeadBranch:
                outside.check(where)
                dead.append(fn)
                return raises.no_values(nouts)  # the outputs are the other branch's
            except BaseException:
                outside.restore()  # a retraced loop around it must not read this trace's tensors
                raise
            outside.check(where)
            state = statement_state.read_state(get_state, where)
            container_identity.refuse_dead_changes(init, state, nouts, names, where)
            out = statement_state.after_return(state[:nouts], names)
            ended[index] = watch.ended(out, init, names, where), out
            return out

        return run

    with recursion.guard(body, where), aliases.copies_of_state():
        outputs = build_cond(cond, branch(body, 0), branch(orelse, 1), labels=names[:nouts], where=where, stage_lists=True)
    if len(dead) == 2:
        outputs = raises.both_branches_raise(init[:nouts])
    origins = container_identity.if_origins([ended[i] for i in (0, 1) if i in ended], init, names, where,
                                          statement_state.ROLES)
    statement_state.bind(set_state, init, tuple(outputs) + init[nouts:], names, where, origins)


dispatch.register("if_stmt", is_tensor, staged_if_stmt, backend="numpy")
