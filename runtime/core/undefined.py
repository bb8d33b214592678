"""``Undefined``: the value of a variable that is not defined on every path.

Converted code binds ``x = ag__.Undefined('x')`` before a statement that
may or may not define ``x``.  Any use of the placeholder (attribute access,
call, arithmetic, comparison, truth value, iteration, formatting, ...)
raises ``UnboundLocalError`` naming the variable and the user's line, which
is what the original function raises when it reads ``x`` on such a path.
``repr`` stays usable so debuggers and error messages can show the value.
"""

from __future__ import annotations

import os
import sys

from autograph.runtime import errors
from autograph.runtime.core.graph import current_graph
from autograph.runtime.errors import TracingError

_HERE = os.path.dirname(os.path.abspath(__file__))


def _user_location() -> str:
    """``file:line`` of the innermost frame outside the operators package."""
    frame = sys._getframe(2)
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _HERE:
        frame = frame.f_back
    if frame is None:
        return errors.at(None, None)
    return errors.at(frame.f_code.co_filename, frame.f_lineno)


class Undefined:
    """Stands for the variable ``symbol_name`` on a path where it is unbound."""

    __slots__ = ("symbol_name",)

    def __init__(self, symbol_name):
        object.__setattr__(self, "symbol_name", symbol_name)

    def __repr__(self):
        return f"Undefined({self.symbol_name!r})"

    def _fail(self, *args, **kwargs):
        name = object.__getattribute__(self, "symbol_name")
        if current_graph() is not None:
            raise TracingError(
                f"'{name}' is used at {_user_location()} before it has a value on every path: while "
                "tracing, both branches of a tensor if and the body of a tensor loop run, whatever the "
                f"values. Assign '{name}' a value before the if/while/for that defines it."
            )
        raise UnboundLocalError(
            f"local variable '{name}' is not defined on every path reaching its use at "
            f"{_user_location()}: it is assigned only in some branches or loop iterations. "
            f"Assign '{name}' a value before the if/while/for that defines it."
        )

    def __getattr__(self, attr):
        self._fail()


_DUNDERS = (
    "__call__ __bool__ __len__ __iter__ __next__ __contains__ __getitem__ __setitem__ __delitem__ "
    "__str__ __format__ __bytes__ __hash__ __index__ __int__ __float__ __complex__ __round__ "
    "__trunc__ __floor__ __ceil__ __neg__ __pos__ __abs__ __invert__ "
    "__eq__ __ne__ __lt__ __le__ __gt__ __ge__ __enter__ __exit__ __setattr__ __delattr__ "
    "__add__ __sub__ __mul__ __matmul__ __truediv__ __floordiv__ __mod__ __divmod__ __pow__ "
    "__lshift__ __rshift__ __and__ __xor__ __or__ "
    "__radd__ __rsub__ __rmul__ __rmatmul__ __rtruediv__ __rfloordiv__ __rmod__ __rdivmod__ "
    "__rpow__ __rlshift__ __rrshift__ __rand__ __rxor__ __ror__ "
    "__iadd__ __isub__ __imul__ __imatmul__ __itruediv__ __ifloordiv__ __imod__ __ipow__ "
    "__ilshift__ __irshift__ __iand__ __ixor__ __ior__"
).split()

for _name in _DUNDERS:
    setattr(Undefined, _name, Undefined._fail)
del _name


def is_undefined(value) -> bool:
    """True if ``value`` is an ``Undefined`` placeholder."""
    return type(value) is Undefined


def defined(value):
    """``value``, unless it is an ``Undefined`` placeholder: then raises its error.

    Generated code wraps a returned variable that may be unbound with it, so
    returning it fails as the original function would.
    """
    if type(value) is Undefined:
        value._fail()
    return value


class UndefinedReturnValue:
    """The initial value of ``retval_`` in a function that returns on every path.

    The return lowering starts ``retval_`` with it when every path of the
    original function ends in a ``return``: it is always replaced before the
    function returns, so on the Python path nobody ever sees it.  The graph
    path fills it with zeros of the dtype the
    other branch or the loop body gives ``retval_``, where an ``Undefined``
    would be an error.
    """

    __slots__ = ()

    def __repr__(self):
        return "UndefinedReturnValue()"
