"""Retracing has one owner (tracing/retrace.py) and traced loops share one slot code (tracing/loop_slots.py).

The same loop body over a tensor (a ``While``) and over a dataset (a
``DatasetReduce``) gives the same values and dtypes, because both classify
their loop values with ``loop_slots``; ``retrace.settle`` refuses a loop
that never settles and drops the library functions of thrown-away rounds;
the interpreter does not import the tiering module that runs its plans.
"""

import ast
import pathlib

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.core.graph import Graph
from autograph.runtime.data import Dataset
from autograph.runtime.exec import interpreter, tiering
from autograph.runtime.tracing import loop_slots, retrace

XS = np.array([3, 8, 1, 9], dtype=np.int32)
ROOT = pathlib.Path(__file__).resolve().parent.parent


def count(seq):
    n = 0
    for _ in seq:
        n += 1
    return n


def widen_to_float(seq):
    t = 0.0
    for x in seq:
        t = t + x
    return t


def set_once(seq):
    k = 0
    for _ in seq:
        k = 5
    return k


def last_flag(seq):
    seen = False
    for x in seq:
        seen = x > 2
    return seen


def growing_rows(seq):
    row = np.zeros((0,), np.int32)
    for x in seq:
        row = rt.concat([row, rt.reshape(x, (1,))], 0)
    return row


@pytest.mark.parametrize("fn", [count, widen_to_float, set_once, last_flag, growing_rows])
def test_a_tensor_loop_and_a_dataset_loop_give_what_python_gives(fn):
    expected = np.asarray(fn(XS))
    for seq in (XS, Dataset.from_tensor_slices(XS)):
        got = np.asarray(ag.function(fn)(seq))
        assert got.dtype == expected.dtype, (fn.__name__, seq)
        np.testing.assert_array_equal(got, expected)


def assigned_in_loop(seq):
    for x in seq:
        late = x
    return late  # noqa: F821 - unbound if the loop runs zero times


@pytest.mark.parametrize("seq, why", [(XS, "a tensor loop may run zero times"),
                                      (Dataset.from_tensor_slices(XS), "the dataset may be empty")])
def test_a_variable_first_assigned_in_the_loop_is_refused_naming_it(seq, why):
    with pytest.raises(ag.TracingError, match=rf"'late' is not defined before .*{why}"):
        ag.function(assigned_in_loop)(seq)


def test_settle_refuses_a_loop_that_never_settles_and_drops_its_functions():
    outer = Graph("outer")
    rounds = []

    def trace_round(before):
        assert set(outer.library) == before  # the last round's function was dropped
        rounds.append(before)
        outer.add_function(Graph("body", outer=outer), "body")
        return None, True

    with pytest.raises(ag.TracingError, match=r"the loop variables of the loop did not settle .* after 10 "
                                              r"traces of the body\. Cast them\."):
        retrace.settle(trace_round, outer, "the loop variables of the loop", "Cast them.")
    assert len(rounds) == retrace.MAX_TRACES
    assert outer.library == {}


def test_settle_returns_the_first_round_that_changes_nothing():
    outer = Graph("outer")
    answers = iter([("first", True), ("second", False), ("third", False)])
    assert retrace.settle(lambda before: next(answers), outer, "x", "y") == "second"


def test_a_python_number_becomes_a_weak_loop_variable_and_widens():
    slot = loop_slots.Slot("n", 0)
    assert slot.kind == "open" and not slot.is_loop_var
    assert loop_slots.classify(slot, 0, 0, "the loop", stage_lists=False) is False
    assert slot.kind == "pass"
    slot = loop_slots.Slot("n", 0)
    assert loop_slots.classify(slot, 0, 1.5, "the loop", stage_lists=False) is True
    assert (slot.kind, slot.weak, slot.dtype, slot.shape) == ("weak", True, np.float64, ())


def test_the_interpreter_does_not_import_tiering():
    tree = ast.parse((ROOT / "runtime" / "exec" / "interpreter.py").read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            imported.update(f"{node.module}.{alias.name}" for alias in node.names)
            imported.add(node.module)
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    assert not [name for name in imported if "tiering" in name]
    assert interpreter.RULES["While"] is tiering.while_rule
