"""``del name``: after it the name is unbound for the control flow lowering, as if never assigned.

The analyses take ``del y`` as the end of ``y``'s definitions (reaching
definitions), so a tensor ``if``/loop after it gets the ``Undefined``
placeholder a never-assigned name gets; a ``del`` in a generated closure of
a name the closure shares with the function leaves the placeholder there.
``del d[k]`` and ``del o.attr`` bind nothing and are unchanged.  Each program
runs in plain Python, through ``ag.convert`` and in the three traced modes.
"""

from __future__ import annotations

import numpy as np
import pytest

import autograph as ag
from modes import check, modes

i32 = np.int32


def _errors(f, *args):
    """The error of plain Python (a ``NameError``) and of each mode: a ``NameError`` or a
    ``TracingError`` naming ``y``, as for a name never assigned on that path."""
    with pytest.raises(NameError):
        f(*args)
    with pytest.raises(NameError):
        ag.convert(f, always_converted=True)(*args)
    for mode, g in modes(f):
        with pytest.raises((NameError, ag.TracingError), match="'y'") as info:
            g(*args)
        assert not isinstance(info.value, NameError) or isinstance(info.value, UnboundLocalError), mode


# -- del, then a tensor if ------------------------------------------------------------


def deleted_then_both_branches(x):
    y = x
    del y
    if x > 0:
        y = x + 1
    else:
        y = x - 1
    return y


@pytest.mark.parametrize("x", [i32(1), i32(-1)])
def test_deleted_then_assigned_in_both_branches(x):
    check(deleted_then_both_branches, x)


def deleted_then_one_branch(x):
    y = x
    del y
    if x > 0:
        y = x + 1
    return y


def never_assigned_then_one_branch(x):
    if x > 0:
        y = x + 1
    return y


def test_deleted_then_assigned_in_one_branch_reads_as_a_never_assigned_name():
    assert ag.convert(deleted_then_one_branch)(1) == 2
    _errors(deleted_then_one_branch, i32(-1))
    _errors(never_assigned_then_one_branch, i32(-1))
    for mode, g in modes(deleted_then_one_branch):  # traced: both branches run, as for the never-assigned name
        with pytest.raises(ag.TracingError, match="'y'"):
            g(i32(1))


def deleted_then_one_branch_not_read(x):
    y = x
    del y
    if x > 0:
        y = x + 1
        x = y * 2
    return x


@pytest.mark.parametrize("x", [i32(1), i32(-1)])
def test_deleted_then_assigned_in_one_branch_not_read_after(x):
    check(deleted_then_one_branch_not_read, x)


# -- del in a branch of a tensor if ---------------------------------------------------


def deleted_in_a_branch_then_reassigned(x):
    y = x * 3
    if x > 0:
        del y
        z = x
    else:
        z = y
    y = z + 1
    return y


@pytest.mark.parametrize("x", [i32(2), i32(-2)])
def test_deleted_in_a_branch_then_reassigned(x):
    check(deleted_in_a_branch_then_reassigned, x)


def deleted_in_a_branch_then_read(x):
    y = x * 3
    if x > 0:
        del y
    return y


def test_deleted_in_a_branch_then_read():
    assert ag.convert(deleted_in_a_branch_then_read)(-2) == -6
    _errors(deleted_in_a_branch_then_read, i32(2))


def deleted_in_a_branch_then_assigned_in_both(x):
    y = x * 3
    if x > 0:
        del y
        y = x + 5
    else:
        y = y - 1
    return y


@pytest.mark.parametrize("x", [i32(2), i32(-2)])
def test_deleted_and_reassigned_in_a_branch(x):
    check(deleted_in_a_branch_then_assigned_in_both, x)


def deleted_twice(x):
    y = x
    if x > 0:
        del y
    del y
    return x


def test_a_second_del_raises_as_in_python():
    _errors(deleted_twice, i32(1))


# -- del in loops -----------------------------------------------------------------------


def deleted_in_a_while_body(x):
    s = x * 0
    t = x
    i = 0
    while i < x:
        t = s + i
        s = t * 2
        del t
        i += 1
    return s


@pytest.mark.parametrize("x", [i32(0), i32(3)])
def test_deleted_in_a_while_body_and_reassigned(x):
    check(deleted_in_a_while_body, x)


def deleted_at_the_top_of_a_for_body(x):
    y = x
    s = x * 0
    for i in range(x):
        del y
        y = s + i
        s = s + y
    return s


@pytest.mark.parametrize("x", [i32(0), i32(4)])
def test_deleted_at_the_top_of_a_for_body(x):
    check(deleted_at_the_top_of_a_for_body, x)


def deleted_then_a_loop_assigns(x):
    y = x
    del y
    s = x * 0
    for i in range(x):
        y = i * 2
        s = s + y
    return s


@pytest.mark.parametrize("x", [i32(0), i32(3)])
def test_deleted_then_a_tensor_loop_assigns_it(x):
    check(deleted_then_a_loop_assigns, x)


def deleted_loop_variable(x):
    s = x * 0
    i = s
    for i in range(x):
        s = s + i
    del i
    i = s
    return i


@pytest.mark.parametrize("x", [i32(0), i32(3)])
def test_deleted_loop_variable_after_a_tensor_for(x):
    check(deleted_loop_variable, x)


def deleted_loop_variable_unbound_before(x):
    s = x * 0
    for i in range(x):
        s = s + i
    del i
    return s


def test_deleted_loop_variable_unbound_before_a_tensor_for():
    """``del i`` needs ``i`` bound (Python raises after zero iterations): as a read of ``i`` after the
    loop, a tensor loop needs ``i`` before it."""
    assert ag.convert(deleted_loop_variable_unbound_before)(3) == 3
    with pytest.raises(UnboundLocalError):
        deleted_loop_variable_unbound_before(0)
    with pytest.raises(UnboundLocalError):
        ag.convert(deleted_loop_variable_unbound_before)(0)
    for mode, g in modes(deleted_loop_variable_unbound_before):
        with pytest.raises(ag.TracingError, match="'i' is not defined before the for loop"):
            g(i32(3))


def deleted_loop_variable_then_read(x):
    s = x * 0
    for y in range(x):
        s = s + y
    del y
    return y


def test_a_deleted_loop_variable_read_after():
    _errors(deleted_loop_variable_then_read, i32(3))


# -- del a, b; del of items and attributes ---------------------------------------------


def deleted_two(x):
    a = x
    b = x + 1
    del a, b
    if x > 0:
        a, b = x, x * 2
    else:
        a, b = -x, x * 3
    return a + b


@pytest.mark.parametrize("x", [i32(2), i32(-2)])
def test_del_of_two_names(x):
    check(deleted_two, x)


def deleted_item(x):
    d = {"a": x, "b": x + 1}
    del d["a"]
    if x > 0:
        d["b"] = d["b"] * 2
    return d["b"], "a" in d


@pytest.mark.parametrize("x", [i32(2), i32(-2)])
def test_del_of_an_item_is_not_a_definition(x):
    check(deleted_item, x)


class _Box:
    pass


def deleted_attribute(x):
    o = _Box()
    o.a = x
    o.b = x * 2
    del o.a
    if x > 0:
        o.b = o.b + 1
    return o.b, hasattr(o, "a")


@pytest.mark.parametrize("x", [i32(2), i32(-2)])
def test_del_of_an_attribute_is_not_a_definition(x):
    check(deleted_attribute, x)


def python_valued_del(n):
    y = n
    if n > 0:
        del y
        y = n * 10
    for k in range(n):
        del y
        y = k
    return y


@pytest.mark.parametrize("n", [0, 1, 3])
def test_python_values_keep_python_semantics(n):
    assert ag.convert(python_valued_del, always_converted=True)(n) == python_valued_del(n)
    for mode, g in modes(python_valued_del):
        assert g(n) == python_valued_del(n), mode


# -- a variable a nested function of the user's reads: the del stays a real del ----------------


def closure_reads_after_del(x):
    y = x
    g = lambda: y is None  # noqa: E731
    del y
    return g()


def test_a_closure_reading_a_deleted_variable_raises_name_error_in_every_mode():
    with pytest.raises(NameError):
        closure_reads_after_del(i32(1))
    for mode, g in modes(closure_reads_after_del):
        with pytest.raises(NameError):
            g(i32(1))


def closure_reads_after_del_and_branches(x):
    y = x
    g = lambda: y  # noqa: E731
    del y
    if x > 0:
        y = x + 1
    else:
        y = x - 1
    return y + g()


@pytest.mark.parametrize("x", [i32(2), i32(-2)])
def test_a_captured_variable_deleted_then_assigned_in_both_branches(x):
    check(closure_reads_after_del_and_branches, x)
