"""``assert_``: the operator an ``assert`` statement lowers to, its Python path beside its graph path.

``assert test, msg`` becomes ``ag__.assert_(test, lambda: msg)``: the
message stays lazy, as in Python, and the raised ``AssertionError`` has the
same arguments as the original's.  For a condition that is not plain Python
the overload registry (``operators/dispatch.py``) gives the handler; the
numpy runtime's ``Tensor`` registers ``staged_assert`` here: a stateful
``Assert`` op, checked at every run of the graph on numpy's truth value of
the condition (an array of several elements is numpy's ``ValueError``); a
message holding tensors (``("bad", n)``) is computed in the false branch of
an ``If`` (only when the assert fails, as in Python) and raised with their
values by a ``py_function`` (such a graph saves but does not load).
"""

from __future__ import annotations

from autograph.runtime.core import nest
from autograph.runtime.core.location import construct_at, user_location
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.operators import dispatch, raises, tensor_builtins
from autograph.runtime.operators.iterables import is_tensor
from autograph.runtime.ops import apply, effects
from autograph.runtime.tracing.branches import build_cond


def assert_(cond, message=None):
    """Raises ``AssertionError(message())`` if ``cond`` is false."""
    if cond is True:
        return
    staged = dispatch.handler_for("assert_", cond)
    if staged is not None:
        return staged(cond, message)
    if not cond:
        if message is None:
            raise AssertionError
        raise AssertionError(message())


def staged_assert(cond, message=None):
    """``assert cond, message()`` for a tensor ``cond``: checked at every run of the graph with
    numpy's truth value (an array of more than one element is numpy's ``ValueError``, as in Python).
    A message holding tensors (``assert n > 0, ("bad", n)``) raises with their values."""
    location = user_location() or "<unknown>"
    cond = tensor_builtins.bool_(cond, "the assert")
    text = message() if message is not None else None
    if any(isinstance(v, Tensor) for v in nest.flatten(text)):
        _assert_with_values(cond, message)
        return None
    text = f"assertion failed at {location}" if text is None else str(text)
    apply.apply_op("Assert", [cond], {"message": text})
    return None


def _assert_with_values(cond, message):
    """An ``If`` whose false branch computes ``message()`` (only then, as Python evaluates it: a
    passing assert computes nothing of it, so warns of nothing) and raises ``AssertionError`` with
    its tensors' values (a py_function: such a graph saves but does not load)."""
    def failing():
        text = message()
        held = [v for v in nest.flatten(text) if isinstance(v, Tensor)]

        def raise_when_run(*values):
            by_id = dict(zip(map(id, held), values))
            raise AssertionError(nest.map_structure(
                lambda v: raises.as_held(by_id[id(v)]) if isinstance(v, Tensor) else v, text))

        effects.py_function(raise_when_run, held, None, name="assert")
        return []

    build_cond(cond, lambda: [], failing, labels=[], where=construct_at("the assert"))


dispatch.register("assert_", is_tensor, staged_assert, backend="numpy")
