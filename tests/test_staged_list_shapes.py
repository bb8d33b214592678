"""The ListAppend op of staged lists: element shapes set by the first element, relaxed statically, checked at run time."""

from __future__ import annotations

import json

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.core import opdef
from autograph.runtime.exec import interpreter as executor
from autograph.runtime.ops import array as array_ops
from rt_control_util import traced

F32 = np.float32


class _Spec:
    def __init__(self, dtype, shape):
        self.dtype, self.shape, self.name = np.dtype(dtype), shape, "t"


def _inferred(target_shape, item_shape):
    (_, shape), = opdef.get("ListAppend").infer([_Spec(F32, target_shape), _Spec(F32, item_shape)], {})
    return shape


def test_inference_empty_list_takes_the_element_shape():
    assert _inferred((0, 0), (3,)) == (1, 3)
    assert _inferred((0,), (2, 2)) == (1, 2, 2)


def test_inference_relaxes_differing_element_dimensions():
    assert _inferred((2, 3), (3,)) == (3, 3)
    assert _inferred((None, 3), (4,)) == (None, None)
    assert _inferred((2, 3), (3, 1)) is None  # another rank: unknown rank
    assert _inferred(None, (3,)) is None


def test_kernel_appends_checks_and_fills_an_empty_list():
    f = traced(lambda l, x: array_ops.list_append(l, x, "the staged list 'l'"), (F32, (None, None)), (F32, (None,)))
    np.testing.assert_array_equal(f(np.zeros((0, 0), F32), np.ones(3, F32)), np.ones((1, 3), F32))
    np.testing.assert_array_equal(f(np.zeros((1, 2), F32), np.ones(2, F32)), [[0, 0], [1, 1]])
    with pytest.raises(rt.ExecutionError, match=r"the staged list 'l' holds elements of shape \[2\] and an element "
                                                r"of shape \[3\] is appended"):
        f(np.zeros((1, 2), F32), np.ones(3, F32))


def fill_rows(m, n):
    rows = []
    for i in range(m):
        row = []
        for j in range(n):
            row.append(i + j)
        rows.append(rt.stack(row))
    return rt.stack(rows)


def test_graph_of_rows_of_an_unknown_length_survives_a_graph_def_round_trip():
    spec = rt.TensorSpec((), "int32")
    graph = ag.function(fill_rows).get_concrete_function(spec, spec).graph
    loaded = rt.Graph.from_graph_def(json.loads(json.dumps(graph.as_graph_def())))
    (out,) = executor.run_graph(loaded, [np.int32(2), np.int32(3)])
    np.testing.assert_array_equal(out, [[0, 1, 2], [1, 2, 3]])
