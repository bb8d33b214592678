"""Graph files written by someone else: loading and running one never runs code of its choosing.

Each attack found against the loader is a test here, followed by a mutation
fuzzer over valid graph defs: every mutation must either be refused with
one ``GraphDefError`` (an ``ag.AutoGraphError``) or load and run, giving an
``ExecutionError`` or a result, never a raw exception and never code
execution.
"""

from __future__ import annotations

import collections
import copy
import json
import random

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.backends.numpy import codegen
from autograph.runtime.core import serialize
from autograph.runtime.errors import AutoGraphError, GraphDefError, ResourceLimitError
from autograph.runtime.ops import variables


def loop_graph_def():
    """A While whose body holds an If whose else-branch holds a Sum (the shape of the first attack)."""

    @ag.function
    def f(n, x):
        i = 0
        acc = rt.reduce_sum(x)
        while i < n:
            if i > 100:
                acc = acc + rt.reduce_sum(x)
            else:
                acc = acc + rt.reduce_sum(x * 2.0)
            i += 1
        return acc

    graph = f.get_concrete_function(np.int32(20), np.ones(3, np.float32)).graph
    return json.loads(json.dumps(graph.as_graph_def()))


ARGS = [np.int32(20), np.ones(3, np.float32)]


def run(graph_def, **limits):
    return rt.run_graph(rt.Graph.from_graph_def(graph_def, **limits), ARGS)


def nodes(graph_def):
    for fdef in [graph_def["graph"], *graph_def["library"].values()]:
        yield from fdef["nodes"]


def test_error_class_is_an_autograph_error_and_a_value_error():
    assert issubclass(GraphDefError, ag.AutoGraphError) and issubclass(GraphDefError, ValueError)
    assert serialize.GraphDefError is GraphDefError and rt.GraphDefError is GraphDefError


def test_valid_loop_graph_loads_and_runs_past_the_hot_threshold():
    assert run(loop_graph_def()) == [np.float32(3 + 20 * 6)]


EVIL_KEY = "axis=None, keepdims=False); __import__('os').system('touch {canary}'); _ = dict(_w"


def test_attribute_key_injection_is_refused_at_load(tmp_path):
    canary = tmp_path / "pwned"
    graph_def = loop_graph_def()
    sums = [n for n in graph_def["library"]["if_false"]["nodes"] if n["type"] == "Sum"]
    sums[0]["attrs"][EVIL_KEY.format(canary=canary)] = None
    with pytest.raises(GraphDefError, match=r"node 'sum' of graph 'if_false'.*Sum has no attribute"):
        run(graph_def)
    assert not canary.exists()


def test_code_generators_never_write_attribute_text_into_source(tmp_path):
    """The class of bug, not the example: an attribute key planted in memory (no loader) stays data."""
    canary = tmp_path / "pwned"
    evil = EVIL_KEY.format(canary=canary)
    graph = rt.Graph.from_graph_def(loop_graph_def())
    (op,) = [o for o in graph.library["if_false"].operations if o.type == "Sum"]
    op.attrs[evil] = "'); __import__('os').system('touch " + str(canary) + "') #"
    op.name = "sum'); __import__('os').system('touch " + str(canary) + "') #"
    fn, source = codegen.compile_loop(graph.library["while_cond"], graph.library["while_body"], bounded=False)
    _assert_inert(source)
    # the planted attribute reaches the kernel as a keyword it does not take: an ordinary failure, as data
    with pytest.raises(ag.ExecutionError, match="Sum op .* unexpected keyword argument"):
        fn([np.float32(0), np.int32(0), np.int32(20), np.ones(3, np.float32)], None)
    _assert_inert(codegen.compile_graph(graph)[1])
    assert not canary.exists()


def _assert_inert(source):
    """No string constant, no call of an import or of ``system``: names are generated, values bound."""
    import ast

    for node in ast.walk(ast.parse(source)):
        assert not (isinstance(node, ast.Constant) and isinstance(node.value, str)), ast.unparse(node)
        assert not (isinstance(node, ast.Name) and node.id in ("__import__", "os", "eval", "exec")), node.id
        assert not (isinstance(node, ast.Attribute) and node.attr == "system")


def test_plain_string_handle_cannot_reach_a_live_variable():
    victim = rt.Variable(np.float32(1.0), name="weights")
    v = rt.Variable(np.float32(0.0), name="w")

    @rt.function
    def step(x):
        v.assign_add(x)
        return v.read_value()

    graph_def = json.loads(json.dumps(step.get_concrete_function(np.float32(0)).graph.as_graph_def()))
    assign = next(n for n in nodes(graph_def) if n["type"] == "AssignAddVariable")
    assign["attrs"]["handle"] = victim.handle.id
    with pytest.raises(GraphDefError, match=r"attrs.handle.*cannot refer to variables of the process"):
        rt.Graph.from_graph_def(graph_def)
    # a well-formed record naming the victim's handle and this process gets a variable of its own
    for node in nodes(graph_def):
        if "handle" in node["attrs"]:
            node["attrs"]["handle"] = {"variable": dict(variables.export_variable(v.handle), handle=victim.handle.id)}
    loaded = rt.Graph.from_graph_def(graph_def)
    assert rt.run_graph(loaded, [np.float32(5.0)]) == [np.float32(5.0)]
    assert victim.numpy() == np.float32(1.0) and v.numpy() == np.float32(0.0)


def test_edited_fill_shape_is_refused_before_allocating():
    @rt.function
    def f(x):
        return rt.fill(rt.constant([2, 3]) * rt.constant([1, 1]), x)

    graph_def = json.loads(json.dumps(f.get_concrete_function(np.float32(1)).graph.as_graph_def()))
    for node in nodes(graph_def):
        if node["type"] == "Const" and node["attrs"]["value"]["array"]["data"] == [2, 3]:
            node["attrs"]["value"]["array"]["data"] = [40000, 25000]
        if node["type"] == "Fill":
            node["outputs"][0]["shape"] = {"tuple": [None, None]}
    with pytest.raises(GraphDefError, match=r"node 'fill'.*1000000000 elements, more than max_elements"):
        rt.Graph.from_graph_def(graph_def)
    loaded = rt.Graph.from_graph_def(graph_def, max_elements=10**9)  # a caller who trusts the file may
    assert loaded.operations[-1].type == "Fill"


def test_recorded_shape_contradicting_inference_is_refused():
    graph_def = loop_graph_def()
    node = next(n for n in graph_def["graph"]["nodes"] if n["type"] == "Sum")
    node["outputs"][0]["shape"] = {"tuple": [7]}
    with pytest.raises(GraphDefError, match=r"node 'sum' of graph 'f': field 'outputs\[0\].shape' is \[7\]"):
        rt.Graph.from_graph_def(graph_def)


def test_sub_graph_cycles_and_depth_are_refused():
    graph_def = loop_graph_def()
    node = next(n for n in graph_def["library"]["while_body"]["nodes"] if n["type"] == "If")
    node["attrs"]["else_branch"] = "while_body"
    with pytest.raises(GraphDefError, match=r"call themselves \(.*while_body -> while_body\)"):
        rt.Graph.from_graph_def(graph_def)
    with pytest.raises(GraphDefError, match=r"nest more than max_depth=1"):
        rt.Graph.from_graph_def(loop_graph_def(), max_depth=1)


def test_while_iteration_limit():
    assert run(loop_graph_def(), max_iterations=20) == [np.float32(123)]
    for limit in (5, 19):  # interpreted, and in the compiled tier (past 16 iterations)
        with pytest.raises(ResourceLimitError, match=rf"the While ('while' )?over 'while_cond'/'while_body' would "
                                                     rf"make one run of the loaded graph exceed max_iterations={limit}"):
            run(loop_graph_def(), max_iterations=limit)


def test_py_function_is_refused_at_load_and_warned_at_save():
    f = rt.function(lambda x: rt.py_function(lambda a: a, [x], "float32"))
    graph = f.get_concrete_function(np.float32(0)).graph
    with pytest.warns(ag.AutoGraphWarning, match="from_graph_def will refuse"):
        graph_def = graph.as_graph_def()
    with pytest.raises(GraphDefError, match=r"PyFunc.*rt.py_function.*cannot be rebuilt"):
        rt.Graph.from_graph_def(graph_def)


def test_dot_output_escapes_names_from_a_file():
    graph_def = loop_graph_def()
    evil = 'x"]; evil [label="pwned'
    rename = {n["name"]: n for n in graph_def["graph"]["nodes"] if n["type"] == "Sum"}
    rename["sum"]["name"] = evil
    for node in graph_def["graph"]["nodes"]:
        node["inputs"] = [f"{evil}:0" if r == "sum:0" else r for r in node["inputs"]]
    dot = rt.Graph.from_graph_def(graph_def).to_dot()
    assert 'evil [label="pwned' not in dot
    assert '"f/x\\"]; evil [label=\\"pwned"' in dot


# -- the mutation fuzzer --------------------------------------------------------------

JUNK = [None, 0, -1, 10**30, 1.5, True, "", "x:0", "Sum", [], {}, [None], {"tuple": "x"}, {"dict": 1},
        {"array": {"dtype": "float32", "shape": [10**6, 10**6], "data": []}}, {"dtype": "object"},
        {"variable": "weights_0"}, {"tuple": [None] * 3}, "__import__('os').system('true')"]


def _paths(value, path=()):
    """Every (container path, key) in a JSON document."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield path, k
            yield from _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield path, i
            yield from _paths(v, path + (i,))


def _at(doc, path):
    for p in path:
        doc = doc[p]
    return doc


def mutations(graph_def, rng, count):
    """(class, mutated copy): deleted keys, values of the wrong type, swapped references."""
    paths = list(_paths(graph_def))
    for _ in range(count):
        path, key = rng.choice(paths)
        doc = copy.deepcopy(graph_def)
        parent = _at(doc, path)
        kind = rng.choice(["delete", "wrong type", "swap"])
        if kind == "delete":
            del parent[key]
        elif kind == "wrong type":
            parent[key] = copy.deepcopy(rng.choice(JUNK))
        else:
            other_path, other_key = rng.choice(paths)
            try:
                parent[key] = copy.deepcopy(_at(graph_def, other_path)[other_key])
            except (KeyError, IndexError, TypeError):
                parent[key] = None
        yield kind, doc


def test_mutation_fuzzer_never_gives_a_raw_exception(tmp_path, monkeypatch):
    import os
    import subprocess

    ran = []
    monkeypatch.setattr(os, "system", lambda *a: ran.append(a))
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: ran.append(a))
    rng = random.Random(9)
    outcomes = collections.Counter()
    base = loop_graph_def()
    expected = run(base)
    for kind, doc in mutations(base, rng, 1000):
        try:
            graph = rt.Graph.from_graph_def(doc)
        except GraphDefError:
            outcomes[kind, "refused"] += 1
            continue
        try:
            result = rt.run_graph(graph, ARGS)
        except AutoGraphError:
            outcomes[kind, "execution error"] += 1
            continue
        outcomes[kind, "same result" if _same(result, expected) else "other result"] += 1
    assert not ran
    assert sum(outcomes.values()) == 1000
    assert outcomes["delete", "refused"] > 100 and outcomes["wrong type", "refused"] > 100


def _same(result, expected) -> bool:
    return len(result) == len(expected) and all(
        np.shape(a) == np.shape(b) and np.array_equal(a, b) for a, b in zip(result, expected))


def test_cli_graph_reports_a_file_that_calls_sys_exit(tmp_path, capsys):
    from autograph import cli_graph

    script = tmp_path / "exits.py"
    script.write_text("import sys\n\ndef f(x):\n    return x\n\nsys.exit(3)\n")
    assert cli_graph.main([f"{script}:f", "--arg", "float32[]"]) == 1
    assert "called sys.exit(3)" in capsys.readouterr().err


def test_long_loop_bodies_compile_in_the_hot_tier():
    """202 chained scalar ops in a tensor while: no SyntaxError past 16 iterations, nor under jit."""
    def body_of(i, s):
        for _ in range(202):
            s = s * 1.0 + 0.0
        return i + 1, s

    def f(n):
        return rt.while_loop(lambda i, s: i < n, body_of, (np.int32(0), np.float32(1.0)))[1]

    for jit in (False, True):
        g = rt.function(f, jit_compile=jit)
        import warnings as w
        with w.catch_warnings():
            w.simplefilter("error")
            assert g(np.int32(40)) == np.float32(1.0)


def test_text_from_a_file_cannot_drive_the_terminal(capsys):
    @rt.function
    def f(x):
        rt.print("value:", x, end="\n")
        return x

    graph_def = json.loads(json.dumps(f.get_concrete_function(np.float32(2)).graph.as_graph_def()))
    node = next(n for n in nodes(graph_def) if n["type"] == "Print")
    node["attrs"]["parts"]["tuple"][0] = "\x1b]0;pwned\x07\x1b[2Jvalue:\u202e"
    node["attrs"]["end"] = "\x1b[31m\r\n"
    node["location"] = "evil.py:1\x1b[2K"
    graph = rt.Graph.from_graph_def(graph_def)
    capsys.readouterr()
    rt.run_graph(graph, [np.float32(2)])
    out = capsys.readouterr().out
    assert out == "\\x1b]0;pwned\\x07\\x1b[2Jvalue:\\u202e 2.0\\x1b[31m\\r\n"
    assert next(op.location for op in graph.operations if op.type == "Print") == "evil.py:1\\x1b[2K"
    f(np.float32(2))  # the user's own text is theirs: a traced rt.print("\t") prints a tab
    tab = rt.function(lambda x: rt.print("\t", x))
    capsys.readouterr()
    tab(np.float32(1))
    assert capsys.readouterr().out == "\t 1.0\n"


# -- depth is checked on the way down -------------------------------------------------------


def _placeholder(name, dtype):
    return {"name": name, "type": "Placeholder", "inputs": [], "control_inputs": [],
            "attrs": {"dtype": {"dtype": dtype}, "shape": {"tuple": []}},
            "outputs": [{"dtype": dtype, "shape": {"tuple": []}}]}


def _function(name, outer, nodes_, outputs):
    return {"name": name, "outer": outer, "nodes": nodes_, "inputs": ["p:0", "x:0"], "outputs": outputs,
            "captures": [], "last_stateful": None}


def nested_ifs(depth):
    """``If`` in ``If`` ... ``depth`` levels down, the innermost returning ``x + 1``."""
    def level(name, outer, callee):
        if callee is None:
            one = {"name": "one", "type": "Const", "inputs": [], "control_inputs": [],
                   "attrs": {"dtype": {"dtype": "float32"},
                             "value": {"array": {"dtype": "float32", "shape": [], "data": [1.0]}}},
                   "outputs": [{"dtype": "float32", "shape": {"tuple": []}}]}
            add = {"name": "add", "type": "Add", "inputs": ["x:0", "one:0"], "control_inputs": [], "attrs": {},
                   "outputs": [{"dtype": "float32", "shape": {"tuple": []}}]}
            return _function(name, outer, [_placeholder("p", "bool"), _placeholder("x", "float32"), one, add],
                             ["add:0"])
        call = {"name": "if", "type": "If", "inputs": ["p:0", "p:0", "x:0"], "control_inputs": [],
                "attrs": {"then_branch": callee, "else_branch": callee},
                "outputs": [{"dtype": "float32", "shape": {"tuple": []}}]}
        return _function(name, outer, [_placeholder("p", "bool"), _placeholder("x", "float32"), call], ["if:0"])

    names = ["main"] + [f"f{k}" for k in range(1, depth + 1)]
    library = {names[k]: level(names[k], names[k - 1], names[k + 1] if k < depth else None)
               for k in range(1, depth + 1)}
    return {"format": "autograph.GraphDef", "version": 1, "graph": level("main", None, names[1]),
            "library": library}


def test_deep_nesting_is_refused_before_any_walk_recurses():
    doc = nested_ifs(1000)
    assert len(json.dumps(doc)) > 400_000
    with pytest.raises(GraphDefError, match=r"node 'if' of graph 'f32': sub-graphs nest more than max_depth=32"):
        rt.Graph.from_graph_def(doc)
    with pytest.raises(GraphDefError, match=r"more than max_depth=100"):
        rt.Graph.from_graph_def(doc, max_depth=100)
    with pytest.raises(ValueError, match=r"LoadOptions\(max_depth=1000\): at most 100"):
        rt.Graph.from_graph_def(doc, max_depth=1000)


def test_every_walk_over_a_graph_nested_max_depth_deep_works():
    from autograph.runtime import optimizer

    graph = rt.Graph.from_graph_def(nested_ifs(100), max_depth=100)
    args = [np.bool_(True), np.float32(1)]
    graph.verify()
    assert graph.to_text().count("If(") == 100
    assert rt.run_graph(graph, args) == [np.float32(2)]
    assert rt.run_graph(optimizer.optimize(graph), args) == [np.float32(2)]
    assert codegen.compile_graph(graph)[0](args) == [np.float32(2)]


# -- every malformed field is a GraphDefError ---------------------------------------------------


def _slice_graph_def():
    f = rt.function(lambda x: x[1:])
    return json.loads(json.dumps(f.get_concrete_function(np.ones(3, np.float32)).graph.as_graph_def()))


def _variable_graph_def():
    v = rt.Variable(np.float32(1.0))
    f = rt.function(lambda x: v.read_value() + x)
    return json.loads(json.dumps(f.get_concrete_function(np.float32(0)).graph.as_graph_def()))


def _shape_graph_def():
    f = rt.function(lambda x: rt.cast(rt.size(x), "float32") + rt.cast(rt.shape(x)[0], "float32"))
    return json.loads(json.dumps(f.get_concrete_function(np.ones(3, np.float32)).graph.as_graph_def()))


def _cond_graph_def():
    f = rt.function(lambda p, v: rt.cond(p, lambda: v * 2.0, lambda: v))
    return json.loads(json.dumps(f.get_concrete_function(np.bool_(True), np.ones(3, np.float32)).graph.as_graph_def()))


def _identity_graph_def():
    f = rt.function(lambda x: rt.identity(x * 2.0))
    return json.loads(json.dumps(f.get_concrete_function(np.float32(0)).graph.as_graph_def()))


def _edit(doc, op_type, edit):
    edit(next(n for n in nodes(doc) if n["type"] == op_type))
    return doc


MALFORMED = {
    "unhashable slice tag": (
        lambda: _edit(_slice_graph_def(), "StridedSlice",
                      lambda n: n["attrs"]["spec"]["tuple"][0]["tuple"].__setitem__(0, ["slice"])),
        r"node 'strided_slice' of graph 'lambda': field 'attrs.spec' is not an index spec"),
    "variable dtype null": (
        lambda: _edit(_variable_graph_def(), "ReadVariable", lambda n: n["attrs"].__setitem__("dtype", None)),
        r"node 'read_Variable\w*' of graph 'lambda': field 'attrs.dtype' must be a dtype \{\"dtype\": name\}, "
        r"got None"),
    "Shape out_type null": (
        lambda: _edit(_shape_graph_def(), "Shape", lambda n: n["attrs"].__setitem__("out_type", None)),
        r"node 'shape' of graph 'lambda': field 'attrs.out_type' must be a dtype"),
    "Size out_type null": (
        lambda: _edit(_shape_graph_def(), "Size", lambda n: n["attrs"].__setitem__("out_type", None)),
        r"node 'size' of graph 'lambda': field 'attrs.out_type' must be a dtype"),
    "Identity with 3 inputs": (
        lambda: _edit(_identity_graph_def(), "Identity", lambda n: n.__setitem__("inputs", n["inputs"] * 3)),
        r"node 'identity\w*' of graph '\w+': a Identity takes 1 input\(s\), but field 'inputs' lists 3"),
    "Cast with 2 inputs": (
        lambda: _edit(_shape_graph_def(), "Cast", lambda n: n.__setitem__("inputs", n["inputs"] * 2)),
        r"node 'cast' of graph 'lambda': a Cast takes 1 input\(s\), but field 'inputs' lists 2"),
    "index None in a slice spec": (
        lambda: _edit(_slice_graph_def(), "StridedSlice",
                      lambda n: n["attrs"].__setitem__("spec", {"tuple": [{"tuple": ["index", None]}]})),
        r"node 'strided_slice' of graph 'lambda': field 'attrs.spec' is not an index spec"),
    "If predicate not a scalar": (
        lambda: _edit(_cond_graph_def(), "If", lambda n: n["inputs"].__setitem__(0, "v:0")),
        r"node 'if' of graph 'lambda': an If's predicate \(field 'inputs\[0\]'\), v:0, must be a scalar, not of "
        r"shape \[3\]"),
    "Size with no input": (
        lambda: _edit(_shape_graph_def(), "Size", lambda n: n.__setitem__("inputs", [])),
        r"node 'size' of graph 'lambda': a Size takes 1 input\(s\), but field 'inputs' lists 0"),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_fields_are_graph_def_errors(name):
    build, message = MALFORMED[name]
    with pytest.raises(GraphDefError, match=message):
        rt.Graph.from_graph_def(build())
