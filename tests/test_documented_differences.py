"""The differences from Python that README documents ("Where a graph differs from Python") stay as documented."""

from __future__ import annotations

import json

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt

MODES = [{}, {"optimize": False}, {"jit_compile": True}]


@pytest.mark.parametrize("options", MODES)
def test_python_state_read_by_the_function_is_frozen_at_trace_time(options):
    config = {"scale": 2}

    def scaled(x):
        return x * config["scale"]

    traced = ag.function(scaled, **options)
    assert traced(np.int32(3)) == 6
    config["scale"] = 10
    assert scaled(np.int32(3)) == 30
    assert traced(np.int32(3)) == 6


def _reads_out_of_range(v, i):
    unused = v ** -1  # noqa: F841 - the documented case: nobody uses it (numpy: ValueError for integers)
    return v[i] * 2


SPEC = [rt.TensorSpec((None,), "int64"), rt.TensorSpec((), "int64")]


@pytest.mark.parametrize("options", MODES)
def test_an_unused_op_is_pruned_so_its_failure_does_not_surface(options):
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        _reads_out_of_range(np.array([1, 2, 3]), np.int64(1))
    traced = ag.function(_reads_out_of_range, input_signature=SPEC, **options)
    assert traced(np.array([1, 2, 3]), np.int64(1)) == 4


@pytest.mark.parametrize("options", MODES)
def test_arrays_passed_in_are_values(options):
    def bump(y):
        y += 1
        y[0] = 7
        return y

    a = np.array([1, 2])
    alias = a
    np.testing.assert_array_equal(ag.function(bump, **options)(a), [7, 3])
    np.testing.assert_array_equal(a, [1, 2])
    assert alias is a


def test_print_with_tensor_arguments_prints_at_every_call(capsys):
    @ag.function
    def show(x):
        print("x is", x)
        print("tracing")
        return x + 1

    show(np.int32(1))
    show(np.int32(2))
    out = capsys.readouterr().out
    assert out.count("tracing") == 1
    assert "x is 1" in out and "x is 2" in out


def test_a_saved_graph_runs_again_from_its_document():
    traced = ag.function(_reads_out_of_range, input_signature=SPEC)
    doc = json.loads(json.dumps(traced.get_concrete_function().graph.as_graph_def()))
    graph = rt.Graph.from_graph_def(doc)
    assert rt.run_graph(graph, [np.array([1, 2, 3]), np.int64(2)]) == [6]


@pytest.mark.parametrize("options", MODES)
def test_an_index_out_of_range_fails_even_when_unused(options):
    def reads(v, i):
        unused = v[10]  # noqa: F841 - checked when the graph runs (CheckIndex), as Python checks it
        return v[i] * 2

    with pytest.raises(IndexError, match=r"`unused = v\[10\]` at .*:\d+: index 10 is out of bounds"):
        ag.function(reads, input_signature=SPEC, **options)(np.array([1, 2, 3]), np.int64(1))
