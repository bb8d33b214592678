"""``assert_``: the operator an ``assert`` statement lowers to, its Python path beside its graph path.

``assert test, msg`` becomes ``ag__.assert_(test, lambda: msg)``: the
message stays lazy, as in Python, and the raised ``AssertionError`` has the
same arguments as the original's.  For a condition that is not plain Python
the overload registry (``operators/dispatch.py``) gives the handler; the
numpy runtime's ``Tensor`` registers ``staged_assert`` here: a stateful
``Assert`` op, checked at every run of the graph.
"""

from __future__ import annotations

from autograph.runtime import ops
from autograph.runtime.core import dtypes
from autograph.runtime.core.location import user_location
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.operators import dispatch
from autograph.runtime.operators.iterables import is_tensor
from autograph.runtime.ops import apply


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
    """``assert cond, message()`` for a tensor ``cond``: a stateful ``Assert`` checked at every run."""
    location = user_location() or "<unknown>"
    text = message() if message is not None else None
    if isinstance(text, Tensor):
        text = f"assertion failed at {location} (message tensor {text.name})"
    elif text is None:
        text = f"assertion failed at {location}"
    else:
        text = str(text)
    if cond.dtype != dtypes.bool_:
        cond = ops.not_equal(cond, 0)
    apply.apply_op("Assert", [cond], {"message": text})
    return None


dispatch.register("assert_", is_tensor, staged_assert, backend="numpy")
