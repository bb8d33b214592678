"""Names of nested scopes are not the converted function's names: traced vs Python.

A class body is a scope of its own: what it binds (``i = 3``, a method's
parameter ``i``) are class attributes and parameters, never the function's
``i``, whether the class comes before, inside or after a tensor loop over
``i``; what it reads (its body, bases, keywords, decorators, its methods'
defaults) is read from the function where the class statement runs, and its
methods' free names are the function's (captured: a tensor ``if`` or loop
must carry them).  Comprehensions, lambdas and nested ``def``s keep their
targets and parameters too; a ``global`` in a nested scope is the module's.
Each case is Python-total and checked in every mode (``modes.check``).
"""

from __future__ import annotations

import numpy as np

from modes import check

i32 = np.int32
calls = 0  # a module global a nested class's method updates


# -- 1. What a class body binds is not the function's


def class_attribute_named_like_loop_variable(n):
    class Cfg:
        i = 3
    last = 0
    for i in range(n):
        last = last + Cfg.i
    return last


def test_class_attribute_named_like_loop_variable():
    check(class_attribute_named_like_loop_variable, i32(3))
    check(class_attribute_named_like_loop_variable, i32(0))


def method_parameter_named_like_loop_variable(n):
    class Acc:
        def add(self, total, i):
            return total + i
    acc = Acc()
    total = 0
    for i in range(n):
        total = acc.add(total, 2)
    return total


def test_method_parameter_named_like_loop_variable():
    check(method_parameter_named_like_loop_variable, i32(3))


def class_after_loop(x, n):
    total = x
    for i in range(n):
        total = total + 1

    class Result:
        i = 7
        scale = 2
    if total > 4:
        total = total * Result.scale
    return total


def test_class_after_loop():
    check(class_after_loop, i32(2), i32(3))
    check(class_after_loop, i32(2), i32(1))


def class_in_loop_body(x, n):
    s = x
    for i in range(n):
        class Step:
            i = 10
            inc = 2
            double = lambda self, i: i * 2  # noqa: E731 - a lambda's parameter is its own too
        s = Step().double(s) - s + Step.inc
    return s


def test_class_in_loop_body():
    check(class_in_loop_body, i32(2), i32(3))


def class_body_comprehension_and_del(x, n):
    class Table:
        squares = [i * i for i in range(4)]
        i = 2
        j = i * 3
        del i
    s = x
    for i in range(n):
        s = s + Table.squares[2] + Table.j
    return s


def test_class_body_comprehension_and_del():
    check(class_body_comprehension_and_del, i32(2), i32(3))


def nested_function_defines_class(x, n):
    def make():
        class K:
            i = 4
        return K
    s = x
    for i in range(n):
        s = s + make().i
    return s


def test_nested_function_defines_class():
    check(nested_function_defines_class, i32(2), i32(3))


# -- 2. What a class body reads is the function's, where the class statement runs


def class_body_reads_branch_result(x, n):
    if x > 0:
        scale = x * 2
    else:
        scale = -x
    offset = 1

    class Cfg:
        i = 0
        factor = scale + i  # the function's scale: an output of the tensor if
        shift = offset + factor
    s = x
    for i in range(n):
        s = s + Cfg.shift
    return s


def test_class_body_reads_branch_result():
    check(class_body_reads_branch_result, i32(2), i32(3))
    check(class_body_reads_branch_result, i32(-2), i32(3))


def class_bases_keywords_and_decorator(x, n):
    base = object
    tag = 5

    def register(cls):
        cls.tag = tag
        return cls

    @register
    class Step(base):
        k = 2
    s = x
    for k in range(n):
        s = s + Step.tag + Step.k
    return s


def test_class_bases_keywords_and_decorator():
    check(class_bases_keywords_and_decorator, i32(2), i32(3))


def method_default_taken_when_class_runs(x, n):
    step = 4

    class Adder:
        def add(self, v, step=step):
            return v + step
    a = Adder()
    step = 100
    s = x
    for v in range(n):
        s = a.add(s)
    if s > 10:
        s = s + step
    return s


def test_method_default_taken_when_class_runs():
    check(method_default_taken_when_class_runs, i32(2), i32(3))
    check(method_default_taken_when_class_runs, i32(0), i32(1))


# -- 3. Free names of a class's methods and comprehensions are the function's (captured)


def method_reads_variable_a_tensor_if_rebinds(x, n):
    scale = 2

    class Scaler:
        scale = 10  # a class attribute: the method below reads the function's scale
        def apply(self, v, i=1):
            return v * scale * i
    sc = Scaler()
    if x > 0:
        scale = 3
    else:
        scale = 5
    s = sc.apply(x)
    for i in range(n):
        s = s + 1
    return s


def test_method_reads_variable_a_tensor_if_rebinds():
    check(method_reads_variable_a_tensor_if_rebinds, i32(2), i32(3))
    check(method_reads_variable_a_tensor_if_rebinds, i32(-2), i32(3))


def class_comprehension_reads_function_variable(x, n):
    if x > 0:
        scale = 2
    else:
        scale = 3

    class Table:
        scale = 100  # not what the comprehension sees
        rows = [scale * r for r in range(3)]
        i = 0
    s = x
    for i in range(n):
        s = s + Table.rows[2]
    return s


def test_class_comprehension_reads_function_variable():
    check(class_comprehension_reads_function_variable, i32(2), i32(3))
    check(class_comprehension_reads_function_variable, i32(-2), i32(3))


def class_body_nonlocal(x, n):
    count = 0

    class Counter:
        nonlocal count
        count = count + 1
        i = count

        def tick(self, i=1):
            nonlocal count
            count = count + i
    c = Counter()
    c.tick()
    s = x
    for i in range(n):
        s = s + count
    if s > 10:
        s = s - count
    return s


def test_class_body_nonlocal():
    check(class_body_nonlocal, i32(2), i32(3))
    check(class_body_nonlocal, i32(2), i32(1))


def method_declares_global(n):
    class Counter:
        def tick(self):
            global calls
            calls += 1
            return calls
    Counter().tick()
    s = 0
    for calls in range(n):  # the function's own calls: not the global the method updates
        s = s + 1
    return s


def test_method_declares_global():
    check(method_declares_global, i32(3))


# -- 4. Expressions in a class body run as written (no converted closure misses the class's names)


def class_body_logical_and_conditional(x, n):
    class Cfg:
        a = 1
        b = a and 2
        c = a if a > 0 else 4
        d = not a
        e = 0 < a < 2
        total = sum(v for v in range(a + 2))  # its first iterable sees the class's a
    s = x
    for a in range(n):
        s = s + Cfg.b + Cfg.c + Cfg.total
    return s, Cfg.d, Cfg.e


def test_class_body_logical_and_conditional():
    check(class_body_logical_and_conditional, i32(2), i32(3))


# -- 5. A comprehension reads its first iterable where it stands; its targets are its own


def comprehension_first_iterable_is_read(x, n):
    row = [1, 2]
    s = x
    for k in range(n):
        row = [row + d for row in row for d in (1,)]  # the outer row is read, then shadowed
        s = s + row[0]
    return s


def test_comprehension_first_iterable_is_read():
    check(comprehension_first_iterable_is_read, i32(2), i32(3))
