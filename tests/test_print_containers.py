"""``print`` of lists, tuples and dicts holding tensors prints what Python prints, at every call.

Python's ``print([x, y])`` shows the ``repr`` of each element; a traced
function prints the same text with the values of each call, in every mode
(and on the JAX backend), where it used to print the symbolic tensors once
while tracing.  A ``Print`` op read from a graph file must give each of its
values a place and a known format.
"""

from __future__ import annotations

import collections
import json

import numpy as np
import pytest
from modes import MODES, load_program

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.errors import GraphDefError


def nested(x, n):
    i = 0
    t = x
    while i < n:
        i += 1
        t = t + 1
    print([x, x * 2], {"a": x, 1: [i, (t,)]}, (i,), "s", [np.arange(2, dtype=np.float32) * x], sep=";")
    print("plain", [1, 2], x, (x > 2, 0.5 * i), end="!\n")
    return t


def _printed(f, capsys, *args):
    f(*args)
    return capsys.readouterr().out


@pytest.mark.parametrize("mode", sorted(MODES))
def test_containers_of_tensors_print_as_python_prints_them(mode, capsys):
    g = ag.function(nested, **MODES[mode])
    for args in [(np.float32(1.5), np.int32(3)), (np.float32(2.5), np.int32(0))]:
        assert _printed(g, capsys, *args) == _printed(nested, capsys, *args)


def test_containers_print_on_the_jax_backend(capsys):
    pytest.importorskip("jax")
    g = ag.function(nested, backend="jax")
    args = (np.float32(-1.5), np.int32(2))
    assert _printed(g, capsys, *args) == _printed(nested, capsys, *args)


def test_a_one_element_tuple_and_a_weak_float_keep_pythons_spelling(capsys):
    def f(x):
        y = 0.1
        if x > 0:
            y = y * 3
        print((x,), [y], {"k": (x, y)})
        return x

    g = ag.function(f)
    for x in (np.float64(2.0), np.float64(-2.0)):
        assert _printed(g, capsys, x) == _printed(f, capsys, x)


@pytest.mark.parametrize("shown", [
    "collections.deque([x])",
    "[collections.OrderedDict(a=x)]",
    "{'k': Box(x)}",
    "Box(x)",
])
def test_objects_whose_text_shows_a_symbolic_tensor_are_refused_with_advice(shown):
    source = (
        "import collections\n"
        "class Box:\n"
        "    def __init__(self, v):\n"
        "        self.v = v\n"
        "    def __repr__(self):\n"
        "        return f'Box({self.v!r})'\n"
        "def f(x):\n"
        f"    print('at', {shown}, x)\n"
        "    return x\n"
    )
    f = load_program(source, tag="print-refused")
    for mode in MODES.values():
        with pytest.raises(TypeError, match=r"print-refused-\d+>:8: cannot print a \w+ holding tensors .* print\(a, b\)"):
            ag.function(f, **mode)(np.float32(1))


def test_a_print_of_python_values_holding_no_tensor_still_runs_once(capsys):
    def f(x):
        print(frozenset([1]), collections.deque([2]), range(3))
        return x

    with pytest.warns(ag.TracingWarning, match="runs once, while tracing"):
        g = ag.function(f)
        g(np.float32(1))
    g(np.float32(2))
    assert capsys.readouterr().out == "frozenset({1}) deque([2]) range(0, 3)\n"


def _print_node(graph_def):
    found = []

    def walk(o):
        if isinstance(o, dict):
            if o.get("type") == "Print":
                found.append(o)
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(graph_def)
    return found[0]


@pytest.mark.parametrize("change, message", [
    (lambda a: a.update(parts={"tuple": ["[", None, ", ", None, "]"]}), r"1 value\(s\) but 2 null part"),
    (lambda a: a.update(formats={"tuple": ["repr", "str"]}), r"formats must give one of str, repr, number"),
    (lambda a: a.update(formats={"tuple": ["eval"]}), r"formats must give one of"),
])
def test_a_print_from_a_file_gives_each_value_a_place_and_a_format(change, message):
    @rt.function
    def f(x):
        rt.print([x])
        return x

    graph_def = json.loads(json.dumps(f.get_concrete_function(np.float32(1)).graph.as_graph_def()))
    assert rt.run_graph(rt.Graph.from_graph_def(graph_def), [np.float32(2)])[0] == 2
    change(_print_node(graph_def)["attrs"])
    with pytest.raises(GraphDefError, match=message):
        rt.Graph.from_graph_def(graph_def)
