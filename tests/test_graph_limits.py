"""Limits of loaded graphs that hold while they run (``runtime/exec/limits.py``).

Each attack is a small graph file that the loader's static checks cannot
size: the size is computed at run time (an op with a control input is never
folded; a loop output; a variable stored in the file).  Every way of
running a graph must stop it with ``ResourceLimitError`` before the large
tensor exists: the interpreter, the parallel runner, the compiled tier of
hot loops and ``jit_compile``.  The iteration budget bounds the total work
of one run, over all loops.
"""

from __future__ import annotations

import copy
import gc
import json

import numpy as np
import pytest

from autograph import runtime as rt
from autograph.runtime.backends.numpy import codegen
from autograph.runtime.core import serialize
from autograph.runtime.errors import ResourceLimitError
from autograph.runtime.exec import limits, parallel


def graph_def_of(fn, *args):
    graph = rt.function(fn).get_concrete_function(*args).graph
    return json.loads(json.dumps(graph.as_graph_def()))


def nodes(graph_def):
    for fdef in [graph_def["graph"], *graph_def["library"].values()]:
        yield from fdef["nodes"]


def node_of(graph_def, op_type):
    return next(n for n in nodes(graph_def) if n["type"] == op_type)


def const_with(graph_def, data):
    return next(n for n in nodes(graph_def) if n["type"] == "Const" and n["attrs"]["value"]["array"]["data"] == data)


# -- the bypasses: sizes the loader cannot know ---------------------------------------------


def fill_behind_control_input(rows=40_000, cols=10_000):
    """``fill(dims, x)`` with ``dims = [2, 3] * [1, 1]`` edited to ``rows x cols``; the Mul has a
    control input, so the loader does not fold it (1.6 GB of float32 by default)."""
    graph_def = graph_def_of(lambda x: rt.fill(rt.constant([2, 3]) * rt.constant([1, 1]), x), np.float32(1))
    const_with(graph_def, [2, 3])["attrs"]["value"]["array"]["data"] = [rows, cols]
    node_of(graph_def, "Mul")["control_inputs"] = ["x"]
    node_of(graph_def, "Fill")["outputs"][0]["shape"] = {"tuple": [None, None]}
    return graph_def, [np.float32(1)]


def range_behind_control_input(limit=400_000_000):
    graph_def = graph_def_of(lambda x: rt.range(rt.constant(5) * rt.constant(1)) + x, np.int32(0))
    const_with(graph_def, [5])["attrs"]["value"]["array"]["data"] = [limit]
    node_of(graph_def, "Mul")["control_inputs"] = ["x"]
    for op_type in ("Range", "Add"):
        node_of(graph_def, op_type)["outputs"][0]["shape"] = {"tuple": [None]}
    return graph_def, [np.int32(0)]


def fill_of_loop_output(doublings=14):
    """A While doubles ``n`` (16,384 after 14 iterations); ``fill([n, n])`` is 1 GB of float32."""

    def f(x):
        i, n = rt.while_loop(lambda i, n: i < doublings, lambda i, n: (i + 1, n * 2), (x, x + 1))
        return rt.fill(rt.stack([n, n]), 1.0)

    return graph_def_of(f, np.int32(0)), [np.int32(0)]


def fill_of_stored_variable(rows=40_000, cols=10_000):
    dims = rt.Variable(np.array([2, 3], np.int32))
    graph_def = graph_def_of(lambda x: rt.fill(dims.read_value(), x), np.float32(1))
    for node in nodes(graph_def):
        if "handle" in node["attrs"]:
            node["attrs"]["handle"]["variable"]["value"] = [rows, cols]
    node_of(graph_def, "Fill")["outputs"][0]["shape"] = {"tuple": [None, None]}
    return graph_def, [np.float32(1)]


def broadcast_of_loop_outputs(doublings=14):
    """``reshape(range(n), [n, 1]) + range(n)``: a broadcast to n x n from two vectors."""

    def f(x):
        i, n = rt.while_loop(lambda i, n: i < doublings, lambda i, n: (i + 1, n * 2), (x, x + 1))
        column = rt.reshape(rt.range(n), rt.stack([n, 1]))
        return rt.reduce_sum(column + rt.range(n))

    return graph_def_of(f, np.int32(0)), [np.int32(0)]


def list_grown_in_a_loop():
    """A loop concatenates its value to itself: it doubles every iteration."""

    def f(x):
        return rt.while_loop(lambda i, v: i < 40, lambda i, v: (i + 1, rt.concat([v, v], 0)), (np.int32(0), x),
                             shape_invariants=[(), (None,)])[1]

    return graph_def_of(f, np.ones(4, np.float32)), [np.ones(4, np.float32)]


def tile_of_an_unknown_shape():
    """``tile(x, multiples)`` of an ``x`` whose length is known only at run time, multiples edited."""
    f = rt.function(lambda x: rt.tile(x, (2, 3)), input_signature=[rt.TensorSpec((None,), "float32")])
    graph_def = json.loads(json.dumps(f.get_concrete_function().graph.as_graph_def()))
    node_of(graph_def, "Tile")["attrs"]["multiples"] = {"tuple": [40_000, 10_000]}
    node_of(graph_def, "Tile")["outputs"][0]["shape"] = {"tuple": [40_000, None]}
    return graph_def, [np.ones(1, np.float32)]


BYPASSES = {
    "tile of an unknown shape": (tile_of_an_unknown_shape, r"Tile op 'tile' of graph 'lambda'"),
    "fill behind a control input": (fill_behind_control_input, r"Fill op 'fill' of graph 'lambda'"),
    "range behind a control input": (range_behind_control_input, r"Range op 'range' of graph 'lambda'"),
    "fill of a loop output": (fill_of_loop_output, r"Fill op 'fill' of graph 'f'"),
    "fill of a stored variable": (fill_of_stored_variable, r"Fill op 'fill' of graph 'lambda'"),
    "broadcast of loop outputs": (broadcast_of_loop_outputs, r"Add op 'add_1' of graph 'f'"),
    "concat grown in a loop": (list_grown_in_a_loop, r"ConcatV2 op 'concat' of graph 'while_body'"),
}


def _run_modes(graph, args):
    """Every way a loaded graph runs."""
    yield "interpreter", lambda: rt.run_graph(graph, args)
    yield "parallel runner", lambda: parallel.dataflow(graph).adaptive.parallel(args)  # its threaded mode
    yield "jit", lambda: codegen.compile_graph(graph)[0](args)


@pytest.mark.parametrize("name", sorted(BYPASSES))
def test_sizes_computed_at_run_time_are_checked_before_allocating(name):
    build, where = BYPASSES[name]
    graph_def, args = build()
    assert len(json.dumps(graph_def)) < 12_000  # a small file
    graph = rt.Graph.from_graph_def(graph_def)  # the loader cannot see the size
    for mode, run in _run_modes(graph, args):
        with pytest.raises(ResourceLimitError, match=where + r".*more than max_elements=16777216") as info:
            run()
        assert "LoadOptions(max_elements=...)" in str(info.value), mode


def test_the_same_files_run_when_the_sizes_are_small():
    graph_def, args = fill_behind_control_input(rows=3, cols=4)
    assert rt.run_graph(rt.Graph.from_graph_def(graph_def), args)[0].shape == (3, 4)
    graph_def, args = fill_of_loop_output(doublings=3)
    assert rt.run_graph(rt.Graph.from_graph_def(graph_def), args)[0].shape == (8, 8)
    graph_def, args = list_grown_in_a_loop()
    graph = rt.Graph.from_graph_def(graph_def, max_elements=1 << 20)
    with pytest.raises(ResourceLimitError, match=r"ConcatV2.* 2097152 elements, more than max_elements=1048576"):
        rt.run_graph(graph, args)  # 4 * 2**40 elements after 40 iterations: the caller's limit holds
    graph = rt.Graph.from_graph_def(broadcast_of_loop_outputs(doublings=3)[0])
    assert rt.run_graph(graph, [np.int32(0)]) == [np.int32(2 * 8 * 28)]


def test_a_limit_given_at_load_holds_at_run_time():
    graph_def, args = fill_of_loop_output(doublings=5)  # 32 x 32
    assert rt.run_graph(rt.Graph.from_graph_def(graph_def, max_elements=1024), args)[0].size == 1024
    with pytest.raises(ResourceLimitError, match=r"1024 elements, more than max_elements=1023"):
        rt.run_graph(rt.Graph.from_graph_def(graph_def, max_elements=1023), args)


def test_traced_graphs_get_no_checks():
    @rt.function
    def f(n):
        return rt.fill(rt.stack([n, n]), 1.0)

    graph = f.get_concrete_function(np.int32(2)).graph
    assert all(limits.guard(op) is None for op in graph.operations)
    assert limits.budget(graph) is None and limits.scoped(len, graph) is len


def test_variable_records_obey_max_elements():
    v = rt.Variable(np.zeros(300_000, np.float32))
    graph_def = graph_def_of(lambda x: v.read_value() + x, np.float32(0))
    with pytest.raises(serialize.GraphDefError, match=r"attrs.handle \(shape of the variable record\)' has shape "
                                                      r"\[300000\]: 300000 elements, more than max_elements=1000"):
        rt.Graph.from_graph_def(graph_def, max_elements=1000)
    assert rt.Graph.from_graph_def(graph_def, max_elements=300_000) is not None


# -- the iteration budget ----------------------------------------------------------------------


def unbounded_loop():
    """``while True``: a loop whose condition is a constant true."""

    def f(x):
        return rt.while_loop(lambda i: i >= 0, lambda i: i + 1, (x,))[0]

    graph_def = graph_def_of(f, np.int32(0))
    return graph_def, [np.int32(0)]


def nested_loops(n=2000):
    """Three nested loops of ``n`` iterations each (8e9 iterations at 2,000)."""

    def inner(i, acc):
        return i + 1, acc + 1

    def middle(j, acc):
        return j + 1, rt.while_loop(lambda i, a: i < n, inner, (np.int32(0), acc))[1]

    def outer(k, acc):
        return k + 1, rt.while_loop(lambda j, a: j < n, middle, (np.int32(0), acc))[1]

    def f(x):
        return rt.while_loop(lambda k, a: k < n, outer, (np.int32(0), x))[1]

    return graph_def_of(f, np.int64(0)), [np.int64(0)]


def test_loaded_loops_are_bounded_by_default():
    assert serialize.LoadOptions().max_iterations == 1_000_000
    graph_def, args = unbounded_loop()
    graph = rt.Graph.from_graph_def(graph_def, max_iterations=50_000)
    for mode, run in _run_modes(graph, args):
        with pytest.raises(ResourceLimitError, match=r"the While .*over 'while_cond'/'while_body' would make one "
                                                     r"run of the loaded graph exceed max_iterations=50000"):
            run()
    unbounded = rt.Graph.from_graph_def(graph_def, max_iterations=None)  # a trusted file may run as it likes
    assert limits.budget(unbounded.library["while_body"]) is None


def test_the_budget_counts_every_loop_of_one_run():
    graph_def, args = nested_loops(n=2000)
    graph = rt.Graph.from_graph_def(graph_def, max_iterations=5000)
    for mode, run in _run_modes(graph, args):
        with pytest.raises(ResourceLimitError, match=r"exceed max_iterations=5000"):
            run()
    small, args = nested_loops(n=10)  # 1,110 iterations in all
    graph = rt.Graph.from_graph_def(small, max_iterations=1110)
    for mode, run in _run_modes(graph, args):
        assert run() == [np.int64(1000)], mode
        assert run() == [np.int64(1000)], mode  # a new run, a new budget
    with pytest.raises(ResourceLimitError, match=r"max_iterations=1109"):
        rt.run_graph(rt.Graph.from_graph_def(small, max_iterations=1109), args)


@pytest.mark.parametrize("field,value", [("max_iterations", -1), ("max_depth", 101), ("max_elements", 1.5),
                                         ("max_nodes", None)])
def test_load_options_are_checked(field, value):
    with pytest.raises(ValueError, match=rf"LoadOptions\({field}={value!r}\)"):
        serialize.LoadOptions(**{field: value})


# -- nothing kept per graph forever -------------------------------------------------------------


def _live_generators() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, np.random.Generator))


def test_random_streams_die_with_their_graphs():
    from autograph.runtime.ops import random_ops

    def run_new_graphs(count):
        for i in range(count):
            f = rt.function(lambda x: rt.random.uniform((2,)) + x)
            f(np.float32(i))
            loaded = rt.Graph.from_graph_def(f.get_concrete_function(np.float32(0)).graph.as_graph_def())
            rt.run_graph(loaded, [np.float32(0)])

    run_new_graphs(5)
    table, live = len(random_ops._rng.streams), _live_generators()
    run_new_graphs(200)
    assert len(random_ops._rng.streams) == table
    assert _live_generators() <= live


def test_eager_calls_seeded_by_the_counter_keep_no_stream():
    from autograph.runtime.ops import random_ops

    rt.random.set_seed(5)
    first = [rt.random.uniform((2,)) for _ in range(3)]
    assert len(random_ops._rng.streams) == 0
    rt.random.set_seed(5)
    assert all(np.array_equal(a, rt.random.uniform((2,))) for a in first)  # reproducible all the same
    a, b = rt.random.uniform((2,), seed=1), rt.random.uniform((2,), seed=1)
    assert not np.array_equal(a, b) and len(random_ops._rng.streams) == 1  # an op seed's stream continues
    rt.random.set_seed(None)


def test_a_stream_continues_across_the_graphs_sharing_its_op():
    rt.random.set_seed(3)
    f = rt.function(lambda x: rt.random.uniform((3,)) + x)
    first, second = f(np.float32(0)), f(np.float32(0))
    rt.random.set_seed(3)
    g = rt.function(lambda x: rt.random.uniform((3,)) + x)
    assert np.array_equal(g(np.float32(0)), first) and np.array_equal(g(np.float32(0)), second)
    copied = copy.deepcopy(g.get_concrete_function(np.float32(0)).graph)  # a copy continues the stream
    (op,) = [o for o in copied.operations if o.type == "RandomUniform"]
    assert not np.array_equal(rt.run_graph(copied, [np.float32(0)])[0], second)
    rt.random.set_seed(None)
