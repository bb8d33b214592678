"""Python iterates a dict in the order its keys were inserted: a tensor if whose branches insert
them in other orders, or a tensor loop whose body reorders them, would give one order for every
path; refused, naming the dict, in every mode.  Keys set in one order on both paths keep it."""

from __future__ import annotations

import numpy as np
import pytest

from modes import check, check_raises


def orders_by_branch(x):
    d = {}
    if x > 0:
        d["a"] = 1
        d["b"] = 2
    else:
        d["b"] = 3
        d["a"] = 4
    return list(d.values())


def literal_orders(x):
    d = {"a": x, "b": x * 2} if x > 0 else {"b": x, "a": -x}
    return next(iter(d))


def reinserted_in_a_branch(x):
    d = {"a": x, "b": x}
    if x > 0:
        del d["a"]
        d["a"] = x + 1
    return list(d)


def reinserted_in_a_loop(x, n):
    d = {"a": x, "b": x}
    for _ in range(n):
        v = d.pop("a")
        d["a"] = v + 1
    return list(d)


@pytest.mark.parametrize("f, args, what", [
    (orders_by_branch, (np.float32(-1.0),), r"the dict 'd' has its keys in the order \['a', 'b'\] in the true "
                                            r"branch but \['b', 'a'\] in the false branch of the if"),
    (literal_orders, (np.float32(-2.0),), r"the dict 'value' has its keys in the order"),
    (reinserted_in_a_branch, (np.float32(1.0),), r"the dict 'd' has its keys in the order"),
    (reinserted_in_a_loop, (np.float32(1.0), np.int32(2)), r"the body of the for loop at .*test_dict_key_order.py:"
                                                           r"\d+ reorders the keys of the dict 'd'"),
])
def test_keys_in_an_order_that_depends_on_the_path_are_refused(f, args, what):
    f(*args)
    check_raises(f, *args, match=what)


def same_order_on_both_paths(x):
    d = {"a": 0.0, "b": 0.0}
    if x > 0:
        d["b"] = x
    else:
        d["a"] = -x
    return list(d.items())


@pytest.mark.parametrize("x", [np.float32(-1.0), np.float32(2.0)])
def test_keys_set_in_one_order_keep_it(x):
    check(same_order_on_both_paths, x)
