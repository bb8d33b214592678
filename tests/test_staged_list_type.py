"""A staged list is a type of its own (``runtime/ops/list_operators.py``: ``StagedList``).

What a traced function holds for a list appended to in a tensor loop or
branch is a ``StagedList``: a ``Tensor`` whose ``label`` says what messages
call it.  What is made from a list as a list (a slice, ``+``, ``*``,
``extend``, ``pop``, ``del``, a loop's or an ``if``'s output) is one too; an
item, a plain tensor and what numpy's operators make element by element are
not.  A tensor becomes a staged list in place, so the graph's own output is
the list.  Values are recorded while tracing by an unconverted helper.
"""

from __future__ import annotations

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.ops.list_operators import StagedList

SEEN = {}


class Seen:
    """What a traced value was while tracing (the value itself escapes the trace as an array)."""

    def __init__(self, value):
        self.type = type(value)
        self.label = getattr(value, "label", None)
        self.own = isinstance(value, Tensor) and value.op.outputs[value.value_index] is value
        self.op_type = value.op.type if isinstance(value, Tensor) else None
        self.missing = {}
        for name in ("sort", "cumprod", "label"):
            try:
                getattr(value, name)
            except AttributeError as e:
                self.missing[name] = str(e)


@ag.do_not_convert
def record(**values):
    SEEN.update({name: Seen(value) for name, value in values.items()})


def _trace(fn, *args):
    SEEN.clear()
    result = ag.function(fn)(*args)
    return result, dict(SEEN)


def appended(n):
    acc = []
    for i in range(n):
        acc.append(i * 2)
    record(acc=acc, item=acc[0], part=acc[1:], more=acc + [5], twice=acc * 2, plus=acc + np.int32(1))
    return acc


def test_a_list_appended_in_a_tensor_loop_is_a_staged_list():
    result, seen = _trace(appended, np.int32(3))
    assert [int(v) for v in result] == [0, 2, 4]
    acc = seen["acc"]
    assert acc.type is StagedList and issubclass(acc.type, Tensor)
    assert "'acc'" in acc.label and "for loop" in acc.label
    assert acc.own  # the graph's own tensor, not a copy


def test_what_is_made_from_a_staged_list_as_a_list_is_one():
    _, seen = _trace(appended, np.int32(3))
    for name in ("part", "more", "twice"):
        assert seen[name].type is StagedList, name
        assert seen[name].label == seen["acc"].label, name
    for name in ("item", "plus"):  # an element, and numpy's element-by-element meaning
        assert seen[name].type is Tensor, name


def test_a_plain_tensor_has_no_label():
    @ag.function
    def f(x):
        record(y=x + 1)
        return x + 1

    SEEN.clear()
    f(np.float32(1))
    assert SEEN["y"].type is Tensor
    assert SEEN["y"].missing["label"] == "'Tensor' object has no attribute 'label'"


def mutated(n):
    acc = [1, 2, 3]
    for i in range(n):
        acc.append(i)
    last = acc.pop()
    acc.extend([7])
    del acc[0]
    record(acc=acc, last=last)
    return acc, last


def test_pop_extend_and_del_give_staged_lists():
    (acc, last), seen = _trace(mutated, np.int32(2))
    assert [int(v) for v in acc] == [2, 3, 0, 7] and int(last) == 1
    assert seen["acc"].type is StagedList and seen["last"].type is Tensor
    assert "'acc'" in seen["acc"].label


def branched(x):
    acc = [1.0]
    if x > 0:
        acc.append(x)
    record(acc=acc)
    return acc


def test_an_if_output_that_is_a_list_on_one_path_is_a_staged_list():
    result, seen = _trace(branched, np.float32(2))
    assert [float(v) for v in result] == [1.0, 2.0]
    assert seen["acc"].type is StagedList
    assert seen["acc"].op_type == "If"


def test_a_list_method_the_staged_list_lacks_names_the_list():
    @ag.function
    def f(n):
        acc = []
        for i in range(n):
            acc.append(i)
        record(acc=acc)
        return acc

    SEEN.clear()
    f(np.int32(2))
    assert SEEN["acc"].missing["sort"].startswith("'Tensor' object has no attribute 'sort': the staged list 'acc'")
    assert "numpy's ndarray.cumprod" in SEEN["acc"].missing["cumprod"]
    assert "label" not in SEEN["acc"].missing


def test_mark_keeps_the_tensor_and_sets_its_label():
    with rt.Graph().as_default():
        t = rt.constant(np.zeros((2, 3), np.float32))
        same = StagedList.mark(t, "the staged list 'rows' of the test")
        assert same is t and type(t) is StagedList and t.label == "the staged list 'rows' of the test"
        unnamed = StagedList.mark(rt.constant(np.zeros((0,), np.int32)))
        assert unnamed.label == f"the staged list {unnamed.name}"


def _grows_a_dicts_list(n):
    d = {"a": []}
    for i in range(n):
        if i % 2 == 0:
            d["a"].append(i)
    return d


def _grows_a_nested_list(n):
    rows = [[], []]
    for i in range(n):
        rows[0].append(i)
    return rows


@pytest.mark.parametrize("f, label", [(_grows_a_dicts_list, r"d\['a'\]"), (_grows_a_nested_list, r"rows\[0\]")])
def test_a_list_held_in_a_dict_or_list_that_a_loop_grows_is_named_with_advice(f, label):
    for g in (ag.function(f), ag.function(f, jit_compile=True)):
        with pytest.raises(ag.TracingError, match=rf"the list '{label}' changes length in the body of the for loop "
                                                  rf"at .*:\d+.*`items = \[\]` before the loop.*`{label} = items`"):
            g(np.int32(5))
