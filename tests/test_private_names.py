"""Converted methods read and write ``self.__x`` exactly as the original (name mangling)."""

from __future__ import annotations

import numpy as np

import autograph as ag
from autograph.converters import private_names


def test_enclosing_class_from_qualname():
    assert private_names.enclosing_class("Counter.bump") == "Counter"
    assert private_names.enclosing_class("Outer.Inner.m") == "Inner"
    assert private_names.enclosing_class("f.<locals>.Counter.bump") == "Counter"
    assert private_names.enclosing_class("Counter.bump.<locals>.helper") == "Counter"
    assert private_names.enclosing_class("f") is None
    assert private_names.enclosing_class("f.<locals>.g") is None


def test_mangle_follows_the_compiler():
    assert private_names.mangle("__k", "_Counter") == "_Counter__k"
    assert private_names.mangle("__init__", "Counter") == "__init__"
    assert private_names.mangle("_k", "Counter") == "_k"
    assert private_names.mangle("__k", "___") == "__k"


class Counter:
    def __init__(self):
        self.__count = 0

    def bump(self, by):
        __step = by
        while __step > 0:
            self.__count += 1
            __step -= 1
        return self.__count

    def __secret(self):
        return self.__count * 10

    def reveal(self):
        def helper():
            return self.__secret()

        return helper()


def test_converted_methods_read_and_write_private_attributes():
    c = Counter()
    assert ag.convert(c.bump, always_converted=True)(3) == 3 and c._Counter__count == 3
    assert ag.convert(Counter.reveal, always_converted=True)(c) == 30
    assert "self._Counter__count" in ag.to_code(Counter.bump)


def test_private_attribute_in_a_traced_method():
    class Scaler:
        def __init__(self):
            self.__factor = np.float32(2.0)

        @ag.function
        def apply(self, x):
            if x > 0:
                x = x * self.__factor
            return x

    assert Scaler().apply(np.float32(3.0)) == np.float32(6.0)


def test_functions_outside_classes_keep_their_names():
    def f(__x):
        return __x + 1

    assert ag.convert(f, always_converted=True)(1) == 2
