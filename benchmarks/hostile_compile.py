"""Compile-time cost of small hostile graph files (issue 17.1).

    python benchmarks/hostile_compile.py                 # every case, each in a subprocess
    python benchmarks/hostile_compile.py chain 12 jit    # one case in this process

Cases:

* ``chain DEPTH MODE``: an ``If`` whose two branches name the same library
  function, which holds such an ``If`` again, DEPTH levels down (a file of
  a few KB).  MODE is ``interp`` (``rt.run_graph``), ``hot`` (the chain in
  the body of a ``While`` running 40 iterations: the compiled tier),
  ``jit`` (``codegen.compile_graph``) or ``opt`` (``optimizer.optimize``).
  Prints the time and, for ``jit``/``hot``, the compiled source size.
* ``names N LENGTH [old]``: N chained ``Add`` ops on vectors named by a
  shared prefix of LENGTH characters plus a number, compiled by
  ``codegen.compile_graph``; with ``old``, names are uniqued the way the code
  generator did before issue 17.1 (retrying ``base_1``, ``base_2``, ... from 1
  for every name: quadratic when the names truncate to one base), for the
  before/after figure.

Each case runs in a subprocess with a timeout (``TIMEOUT`` seconds) when
the script runs them all.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
import time

import numpy as np

TIMEOUT = 60


def _spec(dtype):
    return [{"dtype": dtype, "shape": {"tuple": []}}]


def node(name, type, inputs, attrs=None, dtype="float32", outputs=None):
    return {"name": name, "type": type, "inputs": inputs, "control_inputs": [], "attrs": attrs or {},
            "outputs": _spec(dtype) if outputs is None else outputs, "location": None}


def placeholder(name, dtype="float32"):
    return node(name, "Placeholder", [], {"dtype": {"dtype": dtype}, "shape": {"tuple": []}}, dtype)


def const(name, value, dtype="float32"):
    array = {"array": {"dtype": dtype, "shape": [], "data": [value]}}
    return node(name, "Const", [], {"dtype": {"dtype": dtype}, "value": array}, dtype)


def function(name, nodes, inputs, outputs):
    return {"name": name, "outer": None, "nodes": nodes, "inputs": inputs, "outputs": outputs,
            "captures": [], "last_stateful": None}


def document(root, library):
    return {"format": "autograph.GraphDef", "version": 1, "graph": root, "library": library}


def _level(name, inner):
    nodes = [placeholder("x"), const("zero", 0.0), node("p", "Greater", ["x:0", "zero:0"], dtype="bool"),
             node("if", "If", ["p:0", "x:0"], {"then_branch": inner, "else_branch": inner})]
    return function(name, nodes, ["x:0"], ["if:0"])


def chain_library(depth):
    """``f0(x) = x + 1``; ``fk(x) = If(x > 0, f{k-1}, f{k-1})(x)``."""
    library = {"f0": function("f0", [placeholder("x"), const("one", 1.0), node("add", "Add", ["x:0", "one:0"])],
                              ["x:0"], ["add:0"])}
    for k in range(1, depth + 1):
        library[f"f{k}"] = _level(f"f{k}", f"f{k - 1}")
    return library


def chain(depth):
    """The shared-branch chain as a graph def: ``root(x) = f{depth}(x)``."""
    return document(_level("root", f"f{depth}"), chain_library(depth))


def hot_chain(depth, iterations=40):
    """``while i < n: x = f{depth}(x); i += 1`` (``n`` int32, ``x`` float32): past
    ``tiering.HOT_ITERATIONS`` the loop runs compiled."""
    library = chain_library(depth)
    loop_vars = [placeholder("i", "int32"), placeholder("x"), placeholder("n", "int32")]
    library["cond"] = function("cond", [*loop_vars, node("less", "Less", ["i:0", "n:0"], dtype="bool")],
                               ["i:0", "x:0", "n:0"], ["less:0"])
    true = const("true", True, "bool")
    body = [*loop_vars, const("one", 1, "int32"), node("next", "Add", ["i:0", "one:0"], dtype="int32"), true,
            node("if", "If", ["true:0", "x:0"], {"then_branch": f"f{depth}", "else_branch": f"f{depth}"})]
    library["body"] = function("body", body, ["i:0", "x:0", "n:0"], ["next:0", "if:0", "n:0"])
    outputs = [*_spec("int32"), *_spec("float32"), *_spec("int32")]
    root = [placeholder("x"), placeholder("n", "int32"), const("start", 0, "int32"),
            node("while", "While", ["start:0", "x:0", "n:0"], {"cond": "cond", "body": "body"}, outputs=outputs)]
    return document(function("root", root, ["x:0", "n:0"], ["while:1"]), library)


def named_chain(n, length):
    """``n`` chained ``Add`` ops on float32[2] whose names share a prefix of ``length`` characters
    (vectors: every op gets a variable; scalar chains are written as nested expressions)."""
    prefix = "a" * length
    vector = [{"dtype": "float32", "shape": {"tuple": [2]}}]
    x = node("x", "Placeholder", [], {"dtype": {"dtype": "float32"}, "shape": {"tuple": [2]}}, outputs=vector)
    nodes = [x, const("one", 1.0)]
    previous = "x:0"
    for i in range(n):
        nodes.append(node(f"{prefix}{i}", "Add", [previous, "one:0"], outputs=vector))
        previous = f"{prefix}{i}:0"
    return document(function("root", nodes, ["x:0"], [previous]), {})


def _old_fresh(namer, text):
    """The uniquing of the code generator before issue 17.1 (for the before/after figure)."""
    base = re.sub(r"[^0-9A-Za-z_]", "_", text)[:48] or "v"
    name = base
    for i in itertools.count(1):
        if name not in namer.taken:
            break
        name = f"{base}_{i}"
    namer.taken.add(name)
    return name


def run_case(args):
    from autograph import runtime as rt
    from autograph.runtime import optimizer
    from autograph.runtime.backends.numpy import codegen, identifiers
    from autograph.runtime.exec import tiering

    kind = args[0]
    if kind == "names":
        n, length = int(args[1]), int(args[2])
        graph = rt.Graph.from_graph_def(named_chain(n, length))
        if args[3:] == ["old"]:
            identifiers.Namer.fresh = _old_fresh
        start = time.perf_counter()
        fn, source = codegen.compile_graph(graph)
        elapsed = time.perf_counter() - start
        assert fn([np.zeros(2, np.float32)])[0].tolist() == [n, n]
        return f"names n={n} prefix={length} {' '.join(args[3:])}: compile {elapsed:.3f} s, {len(source)} chars"
    depth, mode = int(args[1]), args[2]
    doc = hot_chain(depth) if mode == "hot" else chain(depth)
    size = len(json.dumps(doc))
    graph = rt.Graph.from_graph_def(doc)
    start = time.perf_counter()
    extra = ""
    if mode == "interp":
        result = rt.run_graph(graph, [np.float32(1)])
    elif mode == "hot":
        result = rt.run_graph(graph, [np.float32(1), np.int32(40)])
        loops = [v for g in graph.library.values() for v in g.__dict__.get("_compiled_loops", {}).values()]
        compiled = [fn for _, fn in loops if fn is not None]
        extra = f", compiled tier used: {bool(compiled)}"
        if compiled:
            source = codegen.compile_loop(graph.library["cond"], graph.library["body"], True)[1]
            extra += f", loop source {len(source)} chars"
    elif mode == "jit":
        fn, source = codegen.compile_graph(graph)
        result = fn([np.float32(1)])
        extra = f", source {len(source)} chars, {source.count(chr(10))} lines"
    else:
        result = rt.run_graph(optimizer.optimize(graph), [np.float32(1)])
    elapsed = time.perf_counter() - start
    assert tiering.HOT_ITERATIONS < 40
    return f"chain depth={depth} {mode}: {elapsed:.3f} s (file {size} bytes){extra}; result {result}"


def main():
    if len(sys.argv) > 1:
        print(run_case(sys.argv[1:]))
        return
    cases = [["chain", str(d), m] for d in (12, 16, 24) for m in ("interp", "hot", "jit", "opt")]
    cases += [["names", "20000", length, *old] for old in ([], ["old"]) for length in ("4", "60")]
    for case in cases:
        try:
            done = subprocess.run([sys.executable, __file__, *case], capture_output=True, text=True, timeout=TIMEOUT)
            print(done.stdout.strip() or done.stderr.strip().splitlines()[-1])
        except subprocess.TimeoutExpired:
            print(f"{' '.join(case)}: did not finish in {TIMEOUT} s")


if __name__ == "__main__":
    main()
