"""Review of the converter work on walrus, staged raise, comprehensions and return roles.

Each case is a program a user could write whose traced result (or error) differed from
plain Python's, in every execution mode: the interpreter, ``optimize=False`` and
``jit_compile=True`` (``tf_behaviour_util.modes``), and ``ag.convert`` on Python values.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import autograph as ag
from tf_behaviour_util import check, i32, modes


def _raises_as_python(f, *args):
    """Every mode raises Python's exception: the same type, message (str) and attributes."""
    with pytest.raises(Exception) as expected:
        f(*args)
    want = expected.value
    runs = [("ag.convert", ag.convert(f, always_converted=True))] + list(modes(f))
    for name, g in runs:
        with pytest.raises(type(want)) as got:
            g(*args)
        assert type(got.value) is type(want), name
        assert str(got.value) == str(want), f"{name}: {got.value!r} vs {want!r}"
        assert _attributes(got.value) == _attributes(want), name


def _attributes(error):
    return {k: np.asarray(v).tolist() for k, v in vars(error).items() if not k.startswith("__")}


# -- staged raise: the exception the graph raises is the one the user's code made ------------

class CodedError(Exception):
    """An exception whose __init__ arguments are not its args."""

    def __init__(self, code, msg="bad"):
        super().__init__(f"{msg}: {code}")
        self.code = code


class ValueCarrier(Exception):
    """An exception carrying a tensor in its args and in an attribute, with a one-argument __init__."""

    def __init__(self, value):
        super().__init__("value out of range", value)
        self.value = value


def raise_coded(x):
    if x < 0:
        raise CodedError(3, msg="negative")
    return x


def raise_carrier(x):
    if x < 0:
        raise ValueCarrier(x * 2)
    return x


def raise_carrier_in_loop(n):
    s = np.int32(0)
    for i in range(n):
        s += i
        if s > 5:
            raise ValueCarrier(s)
    return s


@pytest.mark.parametrize("f, x", [(raise_coded, -1), (raise_carrier, -4)])
def test_staged_exception_is_the_one_made_while_tracing(f, x):
    _raises_as_python(f, i32(x))
    check(f, i32(-x))


def test_staged_exception_carries_tensor_attributes():
    _raises_as_python(raise_carrier_in_loop, i32(5))
    check(raise_carrier_in_loop, i32(3))
