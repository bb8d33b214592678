"""Python path of ``assert_``: the operator an ``assert`` statement lowers to.

``assert test, msg`` becomes ``ag__.assert_(test, lambda: msg)``: the
message stays lazy, as in Python, and the raised ``AssertionError`` has the
same arguments as the original's.
"""

from __future__ import annotations

from autograph.runtime.core.tensor import Tensor


def assert_(cond, message=None):
    """Raises ``AssertionError(message())`` if ``cond`` is false."""
    if cond is True:
        return
    if isinstance(cond, Tensor):
        from autograph.runtime.operators import graph_paths
        return graph_paths.assert_(cond, message)
    if not cond:
        if message is None:
            raise AssertionError
        raise AssertionError(message())
