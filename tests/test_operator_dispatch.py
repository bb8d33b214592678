"""The overload registry of the operators (``runtime/operators/dispatch.py``): a backend other than
numpy registers handlers for its own values, without changing the operators' modules.

The toy backend's values are ``Toy`` conditions, whose Python truth is refused: every operator
must hand them to the registered handler, in converted code as well as when called directly.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import autograph as ag
from autograph.runtime import operators
from autograph.runtime.operators import dispatch


class Toy:
    """A condition of the toy backend: Python cannot take its truth value."""

    def __init__(self, value):
        self.value = value

    def __bool__(self):
        raise AssertionError("the Python path took the truth value of a Toy")


def _is_toy(value) -> bool:
    return isinstance(value, Toy)


calls: list = []


def toy_if(cond, body, orelse, get_state, set_state, symbol_names, nouts, opts=None):
    calls.append(("if_stmt", symbol_names))
    (body if cond.value else orelse)()


def toy_while(test, body, get_state, set_state, symbol_names, opts):
    calls.append(("while_stmt", tuple(get_state())))
    while True:
        cond = test()
        if not (cond.value if isinstance(cond, Toy) else cond):
            return
        body()


def toy_and(a, b):
    calls.append(("and_", a.value))
    return Toy(a.value and b().value)


@contextlib.contextmanager
def toy_backend(*overloads):
    calls.clear()
    for operator, handler in overloads:
        dispatch.register(operator, _is_toy, handler, backend="toy")
    try:
        yield
    finally:
        for operator, _ in overloads:
            dispatch.unregister(operator, "toy")


def clip(c, x):
    if c:
        x = x + 1
    else:
        x = x - 1
    return x


def count_down(n):
    i = 0
    while Toy(n > i) if i >= 2 else n > i:  # Python bools first, then the toy backend's
        i += 1
    return i


def both(a, b):
    return a and b


def test_the_toy_backend_runs_if_while_and_in_converted_code():
    with toy_backend(("if_stmt", toy_if), ("while_stmt", toy_while), ("and_", toy_and)):
        assert ag.convert(clip, always_converted=True)(Toy(True), 1) == 2
        assert ag.convert(clip, always_converted=True)(Toy(False), 1) == 0
        assert calls == [("if_stmt", ("x",)), ("if_stmt", ("x",))]
        calls.clear()
        # the handler continues the loop from the state the Python iterations reached
        assert ag.convert(count_down, always_converted=True)(5) == 5
        assert calls == [("while_stmt", (2,))]
        calls.clear()
        result = ag.convert(both, always_converted=True)(Toy(True), Toy(False))
        assert isinstance(result, Toy) and result.value is False
        assert calls == [("and_", True)]


def test_without_the_backend_the_python_path_takes_the_truth_value():
    with toy_backend(("if_stmt", toy_if)):
        pass
    assert "toy" not in dispatch.backends("if_stmt")
    with pytest.raises(AssertionError, match="truth value of a Toy"):
        operators.if_stmt(Toy(True), lambda: None, operators.no_op, operators.no_state, operators.no_state, (), 0)


def test_a_toy_iterable_and_builtin():
    def toy_for(iter_, extra_test, body, get_state, set_state, symbol_names, opts):
        calls.append(("for_stmt", opts["iterate_names"]))
        for item in range(iter_.value):
            body(item)

    def toy_len(value):
        return value.value * 10

    def total(xs):
        s = 0
        for v in xs:
            s += v
        return s, len(xs)

    with toy_backend(("for_stmt", toy_for), ("len", toy_len)):
        assert ag.convert(total, always_converted=True)(Toy(4)) == (6, 40)
        assert calls == [("for_stmt", "v")]
        assert operators.len([1, 2]) == 2


def test_unregistering_an_unknown_overload_is_an_error():
    with pytest.raises(KeyError, match="'toy' has no overload of 'if_stmt'"):
        dispatch.unregister("if_stmt", "toy")


# Every operator the registry's docstring lists, by the name its handler is registered under.
OPERATORS = (
    "if_stmt", "while_stmt", "for_stmt", "if_exp", "and_", "or_", "not_", "assert_",
    "list_append", "list_extend", "list_pop", "aug_setitem", "del_item",
    "range", "len", "print", "int", "float", "bool", "abs", "max", "min", "reversed", "isinstance", "type",
    "enumerate", "zip", "sum", "any", "all",
)


@pytest.mark.parametrize("operator", OPERATORS)
def test_the_numpy_tensor_is_a_registered_backend_of_every_operator(operator):
    assert "numpy" in dispatch.backends(operator)


def test_python_values_never_reach_a_handler():
    seen = []

    def detect(value):
        seen.append(type(value))
        return False

    dispatch.register("if_stmt", detect, toy_if, backend="toy")
    try:
        for cond in (True, False):
            operators.if_stmt(cond, lambda: None, operators.no_op, operators.no_state, operators.no_state, (), 0)
        assert seen == []  # bools decide before any lookup
        for cond in (1, np.bool_(True), 1, np.bool_(False)):
            operators.if_stmt(cond, lambda: None, operators.no_op, operators.no_state, operators.no_state, (), 0)
        assert seen == [int, np.bool_]  # then one detect per type, cached
    finally:
        dispatch.unregister("if_stmt", "toy")
