"""The per-op document fuzzer: every registered op type, random arity, attributes and dtypes.

Each document is a small graph file holding one op of the type under test,
fed by placeholders and constants of random dtypes and shapes, with random
attributes (mostly of the right kind, sometimes not) and, for ``If`` and
``While``, small library functions.  Its declared outputs are what shape
inference says (sometimes edited).  Every document must be refused with a
``GraphDefError``, or load and give the same outcome in the three execution
modes -- the interpreter, the optimized graph, ``jit_compile`` -- : the same
values of the declared dtypes and shapes and the same printed text, or an
error in all three (``ag.AutoGraphError``, or the ``AssertionError`` of a
failing ``Assert``, an error the graph's Python semantics raise, such as ``PyBool``'s
``ValueError``).  Never a raw exception, never one mode disagreeing.

The CI run is derandomized and bounded (``DOCUMENTS_PER_OP`` per op type);
``AUTOGRAPH_GRAPH_FUZZ=<documents per op type>`` runs a longer one, with
``AUTOGRAPH_GRAPH_FUZZ_SEED`` choosing the seed.
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import os
import random
import warnings

import numpy as np
import pytest

from autograph import runtime as rt
from autograph.runtime import optimizer
from autograph.runtime.backends.numpy import codegen
from autograph.runtime.core import graph_def_schema, opdef
from autograph.runtime.errors import USER_ERROR_ATTR, AutoGraphError, GraphDefError

DOCUMENTS_PER_OP = 5
DTYPES = ["bool", "int8", "int32", "int64", "uint8", "float16", "float32", "float64"]
SHAPES = [[], [3], [2, 3], [1, 3], [0], [3, 1]]
JUNK = [None, 0, -1, 2, 10**20, 1.5, True, "", "x", [], {"tuple": []}, {"tuple": [0, 1]}, {"dict": {}},
        {"dtype": "float32"}, {"tuple": [None, "a"]}, {"tuple": [{"tuple": ["index", 0]}]}]
TEXTS = ["", " ", "\n", "a,b", "\x1b[2J", "\u202e", "%s {0}"]


def _encoded_shape(dims):
    return {"tuple": list(dims)}


def _values(rng, dtype, dims):
    size = int(np.prod(dims)) if dims else 1
    kind = np.dtype(dtype).kind
    if kind == "b":
        data = [rng.random() < 0.5 for _ in range(size)]
    elif kind in "iu":
        low = 0 if kind == "u" else -3
        data = [rng.randint(low, 4) for _ in range(size)]
    else:
        data = [rng.choice([-1.5, 0.0, 0.5, 2.0, 3.0]) for _ in range(size)]
    return data


def _array(rng, dtype=None, dims=None):
    dtype = dtype or rng.choice(DTYPES)
    dims = list(rng.choice(SHAPES)) if dims is None else dims
    return {"array": {"dtype": dtype, "shape": dims, "data": _values(rng, dtype, dims)}}


def _spec(rng):
    items = []
    for _ in range(rng.randint(0, 3)):
        kind = rng.choice(["index", "slice", "newaxis", "ellipsis", "bogus"])
        part = lambda: rng.choice([None, 0, 1, -1, 2, "$1", "$2"])  # noqa: E731
        item = {"index": [kind, part()], "slice": [kind, part(), part(), rng.choice([None, 1, 2, -1])],
                "newaxis": [kind], "ellipsis": [kind], "bogus": [[kind]]}[kind]
        items.append({"tuple": item})
    return {"tuple": items}


def _variable(rng):
    dtype, dims = rng.choice(DTYPES), list(rng.choice(SHAPES))
    data = np.array(_values(rng, dtype, dims), dtype=dtype).reshape(dims).tolist()
    return {"variable": {"handle": f"v{rng.randint(0, 1)}", "name": "v", "dtype": dtype, "shape": dims,
                         "value": data}}


def _attr_value(rng, op_type, name, functions):
    """A random value for attribute ``name``: usually of its kind, sometimes junk."""
    if rng.random() < 0.1:
        return rng.choice(JUNK)
    if name in ("dtype", "out_type"):
        return None if rng.random() < 0.1 else {"dtype": rng.choice(DTYPES)}
    pools = {
        "shape": lambda: None if rng.random() < 0.2 else _encoded_shape(rng.choice(SHAPES)),
        "value": lambda: _array(rng),
        "axis": lambda: rng.choice([None, 0, 1, -1, 2, {"tuple": [0, 1]}]),
        "keepdims": lambda: rng.random() < 0.5, "weak": lambda: rng.random() < 0.3,
        "message": lambda: rng.choice(TEXTS), "sep": lambda: rng.choice(TEXTS), "end": lambda: rng.choice(TEXTS),
        "label": lambda: "list", "where": lambda: "f.py:1",
        "parts": lambda: {"tuple": [rng.choice([None, None, "a", "\x1b[1m"]) for _ in range(rng.randint(0, 3))]},
        "seed": lambda: rng.choice([None, 1, 7]), "seed2": lambda: rng.choice([None, 0, 3]),
        "stream": lambda: "stdout" if op_type == "Print" else "s",
        "spec": lambda: _spec(rng), "handle": lambda: _variable(rng),
        "maximum_iterations": lambda: rng.choice([None, 0, 2, 5]),
        "decimals": lambda: rng.choice([0, 1, -1]), "perm": lambda: rng.choice([None, {"tuple": [1, 0]}]),
        "error": lambda: rng.choice(["ValueError", "IndexError", "Bogus"]), "python_value": lambda: rng.random() < 0.5,
        "operator": lambda: rng.choice(["=", "+=", "*=", "bogus"]),
        "key": lambda: {"tuple": [{"tuple": ["index", rng.choice([0, 1, "$1"])]}]},
    }
    if name in ("then_branch", "else_branch", "cond", "body"):
        return rng.choice(functions)
    return pools.get(name, lambda: rng.choice(JUNK))()


# -- the document --------------------------------------------------------------------------


def _node(name, op_type, inputs, attrs, outputs, control=()):
    return {"name": name, "type": op_type, "inputs": list(inputs), "control_inputs": list(control),
            "attrs": attrs, "outputs": outputs, "location": f"fuzz.py:{name}"}


def _placeholder(name, dtype, dims):
    return _node(name, "Placeholder", [], {"dtype": {"dtype": dtype}, "shape": _encoded_shape(dims)},
                 [{"dtype": dtype, "shape": _encoded_shape(dims)}])


def _fdef(name, outer, nodes, inputs, outputs, last_stateful=None):
    return {"name": name, "outer": outer, "nodes": nodes, "inputs": inputs, "outputs": outputs, "captures": [],
            "last_stateful": last_stateful}


def _library(rng, signature):
    """Small functions over placeholders of ``signature`` ([(dtype, dims)]): a copy of the inputs,
    the inputs changed by one op, a condition (``cond_false``, ``cond_less``) for a While."""
    params = [_placeholder(f"p{i}", d, s) for i, (d, s) in enumerate(signature)]
    refs = [f"p{i}:0" for i in range(len(signature))]
    library = {"same": _fdef("same", "main", params, refs, refs)}
    changed = list(refs)
    extra = []
    numeric = [i for i, (d, s) in enumerate(signature) if np.dtype(d).kind in "iuf"]
    if numeric:
        i = numeric[0]
        d, s = signature[i]
        extra = [_node("one", "Const", [], {"dtype": {"dtype": d}, "value": _array(rng, d, [])},
                       [{"dtype": d, "shape": _encoded_shape([])}]),
                 _node("step", "Add", [refs[i], "one:0"], {}, [{"dtype": d, "shape": _encoded_shape(s)}])]
        changed[i] = "step:0"
    library["changed"] = _fdef("changed", "main", params + extra, refs, changed)
    false = _node("no", "Const", [], {"dtype": {"dtype": "bool"}, "value": _array(rng, "bool", [])},
                  [{"dtype": "bool", "shape": _encoded_shape([])}])
    library["cond_const"] = _fdef("cond_const", "main", params + [false], refs, ["no:0"])
    scalar = [i for i in numeric if signature[i][1] == []]
    if scalar:
        d = signature[scalar[0]][0]
        bound = _node("bound", "Const", [], {"dtype": {"dtype": d}, "value": _array(rng, d, [])},
                      [{"dtype": d, "shape": _encoded_shape([])}])
        less = _node("less", "Less", [refs[scalar[0]], "bound:0"], {}, [{"dtype": "bool", "shape": _encoded_shape([])}])
        library["cond_less"] = _fdef("cond_less", "main", params + [bound, less], refs, ["less:0"])
    return library


# op type -> the kinds of inputs it takes (the constants c1: int32 dims, c2: int32 scalar,
# c3: float32 scalar), used for most of its documents: random inputs rarely fit these
_HINTS = {"Fill": ["dims", "fscalar"], "Range": ["iscalar"] * 3, "RandomUniform": ["dims", "fscalar", "fscalar"],
          "RandomNormal": ["dims", "fscalar", "fscalar"], "Reshape": ["any", "dims"], "SumToShape": ["any", "dims"],
          "ScatterAdd": ["any", "any", "dims"], "GatherV2": ["any", "dims"]}
_HINT_REFS = {"dims": "c1:0", "iscalar": "c2:0", "fscalar": "c3:0"}


def document(rng, op_type):
    """``(graph def, args)``: one ``op_type`` node over random placeholders and constants."""
    nodes, args, pool = [], [], []  # pool: (ref, dtype, dims)
    for i in range(rng.randint(1, 3)):
        dtype, dims = rng.choice(DTYPES), list(rng.choice(SHAPES))
        nodes.append(_placeholder(f"x{i}", dtype, dims))
        args.append(np.array(_values(rng, dtype, dims), dtype=dtype).reshape(dims))
        pool.append((f"x{i}:0", dtype, dims))
    for i, (dtype, dims) in enumerate([(rng.choice(DTYPES), None), ("int32", [2]), ("int32", []), ("float32", [])]):
        if i and rng.random() < 0.5 and op_type not in _HINTS:
            continue  # the shape-like and scalar constants that Fill, Range, random ops... take
        value = _array(rng, dtype, dims)["array"]
        nodes.append(_node(f"c{i}", "Const", [], {"dtype": {"dtype": value["dtype"]}, "value": {"array": value}},
                           [{"dtype": value["dtype"], "shape": _encoded_shape(value["shape"])}]))
        pool.append((f"c{i}:0", value["dtype"], value["shape"]))
    if op_type == "If" and rng.random() < 0.8:  # a bool predicate first, most of the time
        nodes.append(_node("pred", "Const", [], {"dtype": {"dtype": "bool"}, "value": _array(rng, "bool", [])},
                           [{"dtype": "bool", "shape": _encoded_shape([])}]))
        chosen = [("pred:0", "bool", [])] + [rng.choice(pool) for _ in range(rng.randint(0, 2))]
    else:
        low, high = graph_def_schema.arity(op_type) if op_type in opdef.REGISTRY else (0, 3)
        high = low + 2 if high is None else high
        count = rng.randint(max(0, low - 1), high + 1) if rng.random() < 0.2 else rng.randint(low, high)
        chosen = [rng.choice(pool) for _ in range(count)]
        if op_type in _HINTS and rng.random() < 0.7:
            by_ref = {ref: (ref, d, s) for ref, d, s in pool}
            chosen = [by_ref[_HINT_REFS[h]] if h in _HINT_REFS else rng.choice(pool) for h in _HINTS[op_type]]
    signature = [(d, s) for _, d, s in (chosen[1:] if op_type == "If" else chosen)]
    library = _library(rng, signature) if op_type in ("If", "While") else {}
    required, optional = graph_def_schema.attribute_names(op_type)
    names = sorted(required) + [n for n in sorted(optional) if rng.random() < 0.5]
    if names and rng.random() < 0.05:
        names.remove(rng.choice(names))
    attrs = {n: _attr_value(rng, op_type, n, sorted(library) or ["same"]) for n in names}
    if op_type == "Const" and isinstance(attrs.get("value"), dict) and "array" in attrs["value"] \
            and rng.random() < 0.8:
        attrs["dtype"] = {"dtype": attrs["value"]["array"]["dtype"]}
    if op_type == "While" and rng.random() < 0.8:
        attrs["cond"] = rng.choice([f for f in ("cond_const", "cond_less") if f in library])
        attrs["body"] = rng.choice(["same", "changed"])
    record = attrs.get("handle")
    if isinstance(record, dict) and "variable" in record and rng.random() < 0.8:  # a variable op that fits it
        attrs["dtype"] = {"dtype": record["variable"]["dtype"]}
        attrs["shape"] = _encoded_shape(record["variable"]["shape"])
    if rng.random() < 0.03:
        attrs["bogus"] = 1
    node = _node("op", op_type, [r for r, _, _ in chosen], attrs, [])
    nodes.append(node)
    inputs = [f"x{i}:0" for i in range(len(args))]
    doc = {"format": "autograph.GraphDef", "version": 1, "library": library,
           "graph": _fdef("main", None, nodes, inputs, [pool[0][0]], last_stateful="op")}
    node["outputs"] = _declared_outputs(rng, doc)
    if node["outputs"]:
        doc["graph"]["outputs"] = [f"op:{i}" for i in range(len(node["outputs"]))]
        if op_type not in _STATEFUL:
            doc["graph"]["last_stateful"] = None
    return doc, args


_STATEFUL = frozenset(t for t, d in opdef.REGISTRY.items() if d.stateful)


def _declared_outputs(rng, doc):
    """The outputs the loader expects of node ``op`` (their count, dtypes, weak flags, then the
    shapes inference gives), found by loading ``doc`` and reading what it refuses; sometimes edited."""
    node = doc["graph"]["nodes"][-1]
    node["outputs"] = []
    for _ in range(12):
        try:
            graph = rt.Graph.from_graph_def(doc)
        except GraphDefError as e:
            if not _fix_outputs(str(e), node):
                break
            continue
        op = graph.operations[-1]
        try:
            specs = [] if op.type in ("If", "While") else opdef.REGISTRY[op.type].infer(op.inputs, op.attrs)
        except Exception:  # noqa: BLE001 - the loader accepted it; keep the shapes unknown
            specs = []
        if len(specs) == len(node["outputs"]) and rng.random() < 0.7:
            for out, (_, shape) in zip(node["outputs"], specs):
                out["shape"] = None if shape is None else _encoded_shape(shape)
        break
    if node["outputs"] and rng.random() < 0.1:
        node["outputs"][0]["dtype"] = rng.choice(DTYPES)
    return node["outputs"]


def _fix_outputs(message, node) -> bool:
    """Adjusts the node's declared outputs to what the loader's ``message`` asks for; False if it
    is about something else."""
    if not message.startswith("node 'op' of graph 'main'"):
        return False
    outputs = node["outputs"]
    count = f"but a {node['type']} with these inputs has "
    if count in message:
        node["outputs"] = [{"dtype": "float64", "shape": None} for _ in range(int(message.split(count)[1].split()[0]))]
        return bool(node["outputs"])
    if "outputs[" not in message:
        return False
    index = int(message.split("outputs[")[1].split("]")[0])
    if ".dtype' is " in message and "but its inputs give " in message:
        outputs[index]["dtype"] = message.split("but its inputs give ")[1].split()[0]
        return True
    if ".weak' is " in message:
        if "weakly typed" in message:
            outputs[index]["weak"] = True
        else:
            outputs[index].pop("weak", None)
        return True
    return False


# -- running a document --------------------------------------------------------------------


def _outcome(run):
    """``("values", values, printed)`` or ``("error", kind)``; a raw exception fails the test."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), np.errstate(all="ignore"), \
                warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            values = run()
    except Exception as e:  # noqa: BLE001 - sorted below: an error autograph raises, or the graph's own
        if isinstance(e, (AutoGraphError, AssertionError)) or getattr(e, USER_ERROR_ATTR, False):
            return ("error", type(e).__name__)
        raise
    printed = out.getvalue() + err.getvalue() + "".join(f"{w.category.__name__}: {w.message}\n" for w in warned)
    return ("values", [np.asarray(v) for v in values], printed)


def _modes(doc, args):
    def interpreter():
        return rt.run_graph(rt.Graph.from_graph_def(doc), args)

    def optimized():
        return rt.run_graph(optimizer.optimize(rt.Graph.from_graph_def(doc)), args)

    def jit():
        return codegen.compile_graph(rt.Graph.from_graph_def(doc))[0](args)

    return {"interpreter": interpreter, "optimized": optimized, "jit": jit}


def _same(a, b) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


def check_document(doc, args, random_values: bool) -> str:
    """The outcome class of one document; an AssertionError describes a disagreement."""
    try:
        graph = rt.Graph.from_graph_def(doc)
    except GraphDefError:
        return "refused"
    declared = [(t.dtype, t.shape) for t in graph.outputs]
    outcomes = {mode: _outcome(run) for mode, run in _modes(doc, args).items()}
    kinds = {o[0] for o in outcomes.values()}
    assert len(kinds) == 1, f"the modes disagree: {outcomes}"
    if kinds == {"error"}:
        return "error in every mode"
    first = outcomes["interpreter"]
    for mode, outcome in outcomes.items():
        values = outcome[1]
        assert len(values) == len(declared), (mode, outcome)
        for value, (dtype, shape) in zip(values, declared):
            assert value.dtype == dtype, f"{mode}: computed {value.dtype}, declared {dtype}"
            assert shape is None or (len(shape) == value.ndim and all(
                d is None or d == n for d, n in zip(shape, value.shape))), f"{mode}: shape {value.shape} vs {shape}"
        if not random_values:
            assert all(_same(a, b) for a, b in zip(values, first[1])), f"{mode} differs: {outcomes}"
            assert outcome[2] == first[2], f"{mode} printed otherwise: {outcomes}"
    return "same values in every mode"


def _documents(seed, per_op):
    rng = random.Random(seed)
    for op_type in sorted(opdef.REGISTRY):
        for _ in range(per_op):
            doc, args = document(rng, op_type)
            yield op_type, doc, args


def _random_values(doc) -> bool:
    return any(n["type"] in ("RandomUniform", "RandomNormal") for n in doc["graph"]["nodes"])


def run_fuzzer(seed, per_op):
    counts = collections.Counter()
    for op_type, doc, args in _documents(seed, per_op):
        try:
            counts[check_document(doc, args, _random_values(doc))] += 1
        except AssertionError as e:
            raise AssertionError(f"{op_type} document:\n{json.dumps(doc)[:3000]}\nargs {args!r}\n{e}") from None
    return counts


def test_per_op_documents_are_refused_or_agree_in_every_mode():
    counts = run_fuzzer(seed=17, per_op=DOCUMENTS_PER_OP)
    assert sum(counts.values()) == DOCUMENTS_PER_OP * len(opdef.REGISTRY)
    assert counts["refused"] and counts["same values in every mode"] > len(opdef.REGISTRY)
    print(dict(counts))


@pytest.mark.skipif(not os.environ.get("AUTOGRAPH_GRAPH_FUZZ"), reason="opt-in: AUTOGRAPH_GRAPH_FUZZ=<per op>")
def test_per_op_documents_long_run():
    seed = int(os.environ.get("AUTOGRAPH_GRAPH_FUZZ_SEED", "1"))
    counts = run_fuzzer(seed=seed, per_op=int(os.environ["AUTOGRAPH_GRAPH_FUZZ"]))
    print(dict(counts))
