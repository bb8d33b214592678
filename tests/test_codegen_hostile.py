"""The code generator (and the optimizer) against small hostile graphs: no exponential work,
no identifier a graph name can make collide with the generator's own.

* A library function named by both branches of an ``If``, a dozen levels down, is compiled
  once and called: compiled size is linear in the depth (it was 2^depth lines), through
  ``jit_compile``'s ``compile_graph``, the compiled tier of a hot ``While`` and the
  optimizer (which keeps the function shared).
* Identifiers made from graph names never shadow a builtin the code uses (``Exception``),
  never are a name Python refuses (``__debug__``) or one the generator writes (``e``,
  ``_fail``, ``np``), whatever the names: a fuzz over keywords, builtins, dunders, the
  generator's own names, unicode and long shared prefixes; jit results equal the
  interpreter's, and errors are the same errors.
"""

from __future__ import annotations

import ast
import builtins
import json
import keyword
import random

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime import optimizer
from autograph.runtime.backends.numpy import codegen, identifiers
from autograph.runtime.optimizer import graph_util

# -- building the documents ---------------------------------------------------


def _node(name, type, inputs, attrs=None, dtype="float32", outputs=None):
    spec = [{"dtype": dtype, "shape": {"tuple": []}}]
    return {"name": name, "type": type, "inputs": inputs, "control_inputs": [], "attrs": attrs or {},
            "outputs": spec if outputs is None else outputs, "location": None}


def _placeholder(name, dtype="float32"):
    return _node(name, "Placeholder", [], {"dtype": {"dtype": dtype}, "shape": {"tuple": []}}, dtype)


def _const(name, value, dtype="float32"):
    array = {"array": {"dtype": dtype, "shape": [], "data": [value]}}
    return _node(name, "Const", [], {"dtype": {"dtype": dtype}, "value": array}, dtype)


def _function(name, nodes, inputs, outputs):
    return {"name": name, "outer": None, "nodes": nodes, "inputs": inputs, "outputs": outputs,
            "captures": [], "last_stateful": None}


def _level(name, inner):
    """``name(x) = If(x > 0, inner, inner)(x)``: both branches are the same function."""
    nodes = [_placeholder("x"), _const("zero", 0.0), _node("p", "Greater", ["x:0", "zero:0"], dtype="bool"),
             _node("if", "If", ["p:0", "x:0"], {"then_branch": inner, "else_branch": inner})]
    return _function(name, nodes, ["x:0"], ["if:0"])


def _library(depth):
    add = [_placeholder("x"), _const("one", 1.0), _node("add", "Add", ["x:0", "one:0"])]
    library = {"f0": _function("f0", add, ["x:0"], ["add:0"])}
    for k in range(1, depth + 1):
        library[f"f{k}"] = _level(f"f{k}", f"f{k - 1}")
    return library


def shared_chain(depth):
    """A graph def of a few KB that is 2^depth ops when every call is inlined."""
    return {"format": "autograph.GraphDef", "version": 1, "graph": _level("root", f"f{depth}"),
            "library": _library(depth)}


def hot_shared_chain(depth):
    """``while i < n: x = f{depth}(x); i += 1``: run for 40 iterations, it reaches the compiled tier."""
    library = _library(depth)
    loop_vars = [_placeholder("i", "int32"), _placeholder("x"), _placeholder("n", "int32")]
    library["cond"] = _function("cond", [*loop_vars, _node("less", "Less", ["i:0", "n:0"], dtype="bool")],
                                ["i:0", "x:0", "n:0"], ["less:0"])
    body = [*loop_vars, _const("one", 1, "int32"), _node("next", "Add", ["i:0", "one:0"], dtype="int32"),
            _const("true", True, "bool"),
            _node("if", "If", ["true:0", "x:0"], {"then_branch": f"f{depth}", "else_branch": f"f{depth}"})]
    library["body"] = _function("body", body, ["i:0", "x:0", "n:0"], ["next:0", "if:0", "n:0"])
    scalar = [{"dtype": d, "shape": {"tuple": []}} for d in ("int32", "float32", "int32")]
    root = [_placeholder("x"), _placeholder("n", "int32"), _const("start", 0, "int32"),
            _node("while", "While", ["start:0", "x:0", "n:0"], {"cond": "cond", "body": "body"}, outputs=scalar)]
    return {"format": "autograph.GraphDef", "version": 1,
            "graph": _function("root", root, ["x:0", "n:0"], ["while:1"]), "library": library}


DEPTHS = (12, 16, 24)


# -- 17.1: no exponential work ---------------------------------------------------


def test_the_chain_is_a_small_file():
    assert len(json.dumps(shared_chain(24))) < 30_000


def test_jit_compiles_each_shared_function_once_and_source_grows_linearly():
    lines = {}
    for depth in DEPTHS:
        graph = rt.Graph.from_graph_def(shared_chain(depth))
        fn, source = codegen.compile_graph(graph)
        assert source.count("\ndef ") + source.startswith("def ") == depth + 2  # f1..f_depth, f0, the main one
        assert fn([np.float32(1)]) == rt.run_graph(graph, [np.float32(1)]) == [np.float32(2)]
        assert fn([np.float32(-1)]) == [np.float32(0)]
        lines[depth] = source.count("\n")
    per_level = (lines[16] - lines[12]) / 4
    assert per_level < 20
    assert lines[24] == lines[16] + 8 * per_level


def test_the_compiled_tier_of_a_hot_loop_compiles_the_chain_once():
    sizes = {}
    for depth in DEPTHS:
        graph = rt.Graph.from_graph_def(hot_shared_chain(depth))
        assert rt.run_graph(graph, [np.float32(1), np.int32(40)]) == [np.float32(41)]
        fn, source = codegen.compile_loop(graph.library["cond"], graph.library["body"], True)
        assert fn([np.int32(0), np.float32(1), np.int32(40)], 1000) == [np.int32(40), np.float32(41), np.int32(40)]
        sizes[depth] = source.count("\n")
    assert sizes[24] - sizes[16] == 2 * (sizes[16] - sizes[12])


def test_optimizer_keeps_shared_functions_shared():
    for depth in DEPTHS:
        graph = rt.Graph.from_graph_def(shared_chain(depth))
        optimized = optimizer.optimize(graph, check=True)
        assert len(graph_util.graphs_postorder(optimized)) == depth + 2
        assert graph_util.count_ops(optimized) <= graph_util.count_ops(graph)
        for x in (1.0, -1.0):
            assert rt.run_graph(optimized, [np.float32(x)]) == rt.run_graph(graph, [np.float32(x)])
        shared = [g for g in graph_util.graphs_postorder(optimized) if graph_util.is_shared(g)]
        assert len(shared) == depth + 1


def test_a_shared_function_with_a_constant_predicate_is_not_inlined_into_one_caller():
    doc = shared_chain(3)
    for fdef in doc["library"].values():  # every predicate constant: ``If(True, f, f)``
        for node in fdef["nodes"]:
            if node["name"] == "p":
                node.update(_const("p", True, "bool"))
    graph = rt.Graph.from_graph_def(doc)
    optimized = optimizer.optimize(graph, check=True)
    assert rt.run_graph(optimized, [np.float32(-5)]) == rt.run_graph(graph, [np.float32(-5)]) == [np.float32(-4)]
    assert codegen.compile_graph(optimized)[0]([np.float32(-5)]) == [np.float32(-4)]


def test_uniquing_many_names_with_a_long_shared_prefix():
    prefix = "a" * 60
    nodes = [_placeholder("x"), _const("one", 1.0)]
    previous = "x:0"
    for i in range(3000):
        nodes.append(_node(f"{prefix}{i}", "Add", [previous, "one:0"]))
        previous = f"{prefix}{i}:0"
    for node in nodes[:1] + nodes[2:]:  # vectors: each op gets a variable (scalar chains are inlined)
        node["outputs"][0]["shape"] = {"tuple": [2]}
    nodes[0]["attrs"]["shape"] = {"tuple": [2]}
    doc = {"format": "autograph.GraphDef", "version": 1, "graph": _function("root", nodes, ["x:0"], [previous]),
           "library": {}}
    fn, source = codegen.compile_graph(rt.Graph.from_graph_def(doc))
    assert fn([np.zeros(2, np.float32)])[0].tolist() == [3000, 3000]
    base = prefix[: identifiers.MAX_BASE]
    assigned = [t.id for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Assign)
                for t in node.targets if isinstance(t, ast.Name)]
    temporaries = [name for name in assigned if name.startswith(base)]
    assert len(temporaries) == 3000 and len(set(temporaries)) == 3000 and temporaries[-1] == f"{base}_2999"
    assert all(len(name) <= identifiers.MAX_BASE + 6 for name in temporaries)


def test_namer_gives_each_name_once_and_keeps_counting_per_base():
    namer = identifiers.Namer()
    assert [namer.fresh("x") for _ in range(3)] == ["x", "x_1", "x_2"]
    assert namer.fresh("x_3") == "x_3"
    assert namer.fresh("x") == "x_4"  # x_3 was taken by a name of its own
    assert namer.next_suffix["x"] == 5  # the next try for base 'x': no rescan from 1


@pytest.mark.parametrize("name, expected", [
    ("Exception", "Exception_"), ("__debug__", "__debug___"), ("sum", "sum_"), ("class", "class_"),
    ("match", "match_"), ("e", "e_"), ("_fail", "_fail_"), ("np", "np_"), ("__builtins__", "__builtins___"),
    ("__x__", "__x___"), ("9lives", "v9lives"), ("π", "__"), ("", "v"), ("a.b-c", "a_b_c"),
])
def test_reserved_and_foreign_names_are_mangled(name, expected):
    assert identifiers.Namer().fresh(name) == expected


# -- 17.6: names from a graph cannot confuse the generated code ------------------------


def _program(x, n, k):
    total = rt.reduce_sum(x, axis=0)
    i = 0
    while i < n:
        if total > 100.0:
            total = total - rt.reduce_max(x)
        else:
            total = total + rt.reduce_sum(x * 2.0)
        i += 1
    return total + rt.gather(x, k), i


_SIGNATURE = (rt.TensorSpec((3,), "float32"), rt.TensorSpec((), "int32"), rt.TensorSpec((), "int32"))


def _program_graph_def():
    graph = ag.function(_program).get_concrete_function(*_SIGNATURE).graph
    return json.loads(json.dumps(graph.as_graph_def()))


HOSTILE = sorted(
    set(keyword.kwlist) | set(keyword.softkwlist)
    | {"Exception", "BaseException", "abs", "sum", "max", "range", "len", "print", "object", "type", "id"}
    | {"__debug__", "__builtins__", "__name__", "__class__", "__import__", "__dict__", "__", "_", "__init__"}
    | {"np", "args", "e", "_fail", "_k_Sum", "_k_GatherV2", "_const", "_k_sum", "f_jit", "limit", "var0",
       "invariant0", "iterations", "_f_root", "while_iterations"}
    | {"π", "变量", "x\u200b", "é", "🙂", "0", "1abc", "", " ", "a b", "a.b", "a-b", "'", '"', "\\", "a\nb"}
    | {"a" * 60 + str(i) for i in range(5)} | {"_" * 60, "e" * 200}
)


def _rename(graph, rng):
    """Gives every op and sub-graph of ``graph`` a name from ``HOSTILE`` (in memory)."""
    for g in graph_util.graphs_postorder(graph):
        g.name = rng.choice(HOSTILE)
        for op in g.operations:
            op.name = rng.choice(HOSTILE)


def _outcome(run, args):
    try:
        return [np.asarray(v).tolist() for v in run(args)]
    except Exception as e:  # noqa: BLE001 - compared: the same error in both modes
        assert not isinstance(e, (TypeError, UnboundLocalError, NameError, SyntaxError)), e
        return type(e)


ARGS = [
    [np.array([1, 2, 3], np.float32), np.int32(3), np.int32(1)],
    [np.array([50, 60, 70], np.float32), np.int32(40), np.int32(2)],  # the While is hot: compiled tier
    [np.array([1, 2, 3], np.float32), np.int32(2), np.int32(99)],  # the gather fails
]


@pytest.mark.parametrize("seed", range(40))
def test_hostile_name_fuzz_jit_equals_the_interpreter(seed):
    rng = random.Random(seed)
    graph = rt.Graph.from_graph_def(_program_graph_def())
    _rename(graph, rng)
    fn, source = codegen.compile_graph(graph)
    for args in ARGS:
        assert _outcome(fn, args) == _outcome(lambda a: rt.run_graph(graph, a), args)
    chain = rt.Graph.from_graph_def(hot_shared_chain(4))
    _rename(chain, rng)
    fn, _ = codegen.compile_graph(chain)
    assert fn([np.float32(1), np.int32(40)]) == rt.run_graph(chain, [np.float32(1), np.int32(40)]) == [np.float32(41)]


def test_an_op_named_exception_fails_with_the_real_error():
    graph = rt.Graph.from_graph_def(_program_graph_def())
    names = iter(["Exception", "e", "_fail", "__debug__", "BaseException", "args", "np"])
    for op in graph.operations:
        if op.type == "GatherV2":
            op.name = "Exception"
        elif op.type != "Placeholder":
            op.name = next(names, "__debug__")
    fn, source = codegen.compile_graph(graph)
    assert "except Exception as e:" in source and "Exception =" not in source and "__debug__ =" not in source
    with pytest.raises(ag.ExecutionError, match=r"GatherV2 op 'Exception' created at .*test_codegen_hostile.py"):
        fn(ARGS[2])
    with pytest.raises(ag.ExecutionError, match=r"GatherV2 op 'Exception'"):
        rt.run_graph(graph, ARGS[2])


def test_no_builtin_the_code_reads_is_assigned():
    graph = rt.Graph.from_graph_def(_program_graph_def())
    for op in graph.operations:
        op.name = "abs"
    source = codegen.compile_graph(graph)[1]
    assigned = {line.split(" = ")[0].strip() for line in source.splitlines() if " = " in line}
    assert not {name for target in assigned for name in target.split(", ")} & set(dir(builtins))
