"""The graph IR's tools: executor, printers, serialization, verifier."""

import json
import re

import numpy as np
import pytest

from autograph import runtime as rt
from autograph.runtime.backends.numpy import kernels
from autograph.runtime.core import opdef, printer, serialize
from autograph.runtime.exec import interpreter as executor
from autograph.runtime.ops import apply

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

# A stateful test op: appends its input to a Python list at run time.
LOG: list = []
if "TestRecord" not in opdef.REGISTRY:
    opdef.register(
        "TestRecord",
        infer=lambda inputs, attrs: [(inputs[0].dtype, inputs[0].shape)],
        stateful=True,
        inputs=1,
    )
    kernels.KERNELS["TestRecord"] = lambda x: LOG.append(np.asarray(x).item()) or x


def record(x):
    return apply.apply_op("TestRecord", [x])


def build(specs, fn, name="main"):
    """A graph with placeholders for ``specs`` [(dtype, shape)] whose outputs are ``fn``'s results."""
    graph = rt.Graph(name)
    with graph.as_default():
        inputs = [graph.add_placeholder(np.dtype(d), s, name=f"in{i}") for i, (d, s) in enumerate(specs)]
        out = fn(*inputs)
        graph.outputs = list(out) if isinstance(out, (tuple, list)) else [out]
    return graph


def sample_graph():
    def fn(x, y, n):
        a = rt.exp(x) * 2 + rt.sqrt(abs(x)) - x * x
        b = rt.reduce_sum(rt.reshape(a, [-1, 1]) @ rt.reshape(y, (1, 3)), axis=1, keepdims=True)
        c = rt.where(x > 0, a, rt.zeros_like(a))
        d = rt.gather(rt.concat([x, y], axis=0), rt.range(n))
        e = rt.cast(rt.argmax(rt.stack([x, y]), axis=0), "float32")
        f = x[1:][::-1] + y[n - 3]
        return a, b, c, d, e, f, rt.shape(b), rt.size(b)

    return build([("float32", (3,)), ("float32", (3,)), ("int32", ())], fn)


SAMPLE_ARGS = [np.array([0.5, -1.0, 2.0], np.float32), np.array([1.0, 2.0, -3.0], np.float32), np.int32(4)]


# -- executor ------------------------------------------------------------------


def test_run_graph_matches_eager():
    graph = sample_graph()
    results = executor.run_graph(graph, SAMPLE_ARGS)
    x, y, n = SAMPLE_ARGS
    a = np.exp(x) * 2 + np.sqrt(np.abs(x)) - x * x
    assert np.allclose(results[0], a)
    np.testing.assert_allclose(results[1], np.sum(a.reshape(-1, 1) @ y.reshape(1, 3), axis=1, keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(results[3], np.concatenate([x, y])[:4])
    np.testing.assert_array_equal(results[5], x[1:][::-1] + y[1])
    assert results[6].tolist() == [3, 1] and results[7] == 3


def test_run_graph_checks_argument_count():
    graph = sample_graph()
    with pytest.raises(TypeError, match=r"graph 'main' takes 3 input value\(s\).*got 1"):
        executor.run_graph(graph, SAMPLE_ARGS[:1])


def test_failure_names_op_printed_form_and_location():
    # (v[i] out of range is the user's IndexError, checked by CheckIndex; rt.gather's is a kernel failure)
    graph = build([("float32", (None,)), ("int32", ())], lambda v, i: rt.gather(v, i) * 2)
    with pytest.raises(rt.ExecutionError) as info:
        executor.run_graph(graph, [np.ones(2, np.float32), np.int32(5)])
    message = str(info.value)
    assert re.search(r"GatherV2 op 'gather' created at .*test_rt_graph.py:\d+ failed", message)
    assert "%gather:0 float32[] = GatherV2(%in0:0, %in1:0) {axis=0}" in message
    assert "IndexError" in message
    assert isinstance(info.value.original, IndexError)


def test_stateful_ops_run_in_order_even_when_unused():
    def fn(x):
        record(x)
        record(x + 1)
        return x * 10

    graph = build([("int32", ())], fn)
    assert graph.operations[-1].type == "Mul"
    second = [op for op in graph.operations if op.type == "TestRecord"][1]
    assert [c.type for c in second.control_inputs] == ["TestRecord"]
    LOG.clear()
    assert executor.run_graph(graph, [np.int32(4)]) == [40]
    assert LOG == [4, 5]


def test_unneeded_stateless_ops_are_not_run():
    graph = build([("float32", ())], lambda x: (rt.log(x), x + 1)[1])
    plan = executor.plan(graph)
    assert [step.op.type for step in plan.steps] == ["Add"]


def test_values_are_freed_after_last_use():
    graph = build([("float32", (None,))], lambda x: rt.exp(rt.sin(rt.cos(x))))
    plan = executor.plan(graph)
    # each intermediate is dropped by the step that last reads it; the input's slot by the first step
    assert [len(step.frees) for step in plan.steps] == [1, 1, 1]
    np.testing.assert_allclose(executor.run_graph(graph, [np.zeros(4, np.float32)])[0], np.exp(np.sin(np.ones(4))), rtol=1e-6)
    small = build([("float32", ())], lambda x: rt.exp(rt.sin(rt.cos(x))))
    assert [len(step.frees) for step in executor.plan(small).steps] == [0, 0, 0]  # not worth the bookkeeping


def test_plan_is_cached_and_rebuilt_after_changes():
    graph = build([("float32", ())], lambda x: x + 1)
    assert executor.plan(graph) is executor.plan(graph)
    first = executor.plan(graph)
    with graph.as_default():
        graph.outputs = [graph.outputs[0] * 3]
    assert executor.plan(graph) is not first
    assert executor.run_graph(graph, [np.float32(1)]) == [6]


def test_placeholder_output_and_constant_output():
    graph = build([("int32", ())], lambda x: (x, rt.constant(7)))
    assert executor.run_graph(graph, [np.int32(3)]) == [3, 7]


# -- printer -------------------------------------------------------------------


def test_format_op():
    graph = build([("float32", (3,))], lambda x: x + 1)
    add = graph.operations[-1]
    assert re.fullmatch(r"%add:0 float32\[3\] = Add\(%in0:0, %const:0\)  # test_rt_graph.py:\d+", printer.format_op(add))
    assert repr(add) == printer.format_op(add)
    assert printer.format_op(add, locations=False) == "%add:0 float32[3] = Add(%in0:0, %const:0)"


def test_to_text_is_deterministic_and_complete():
    text = sample_graph().to_text(locations=False)
    assert text == sample_graph().to_text(locations=False)
    assert text.startswith("graph main(%in0:0 float32[3], %in1:0 float32[3], %in2:0 int32[]) {\n")
    assert "  %const:0 float32[] = Const() {value=2.0}\n" in text
    assert "%strided_slice:0 float32[2] = StridedSlice(%in0:0) {spec=((slice, 1, None, None),)}" in text
    assert "  %const_1:0 int32[2] = Const() {value=[-1, 1]}\n" in text
    assert "%sum:0 float32[3,1] = Sum(%matmul:0) {axis=1, keepdims=True}" in text
    assert text.endswith("  return (%sub:0, %sum:0, %where:0, %gather:0, %cast:0, %add_1:0, %shape:0, %size:0)\n}\n")
    for op in sample_graph().operations:
        if op.type != "Placeholder":
            assert printer.format_op(op, locations=False) in text


def test_format_expr_uses_the_spellings_table():
    graph = build([("float32", (3,)), ("float32", (3, 3))], lambda x, m: (-x, x ** 2, m @ x, abs(x), rt.exp(x)))
    exprs = [printer.format_expr(op) for op in graph.operations if op.type not in ("Placeholder", "Const")]
    assert exprs == ["-%in0:0", "%in0:0 ** %const:0", "%in1:0 @ %in0:0", "abs(%in0:0)", None]


def test_to_text_prints_large_constants_by_type():
    graph = build([("float32", (100,))], lambda x: x + np.arange(100, dtype=np.float32))
    assert "Const() {value=<float32[100]>}" in graph.to_text()


def test_control_inputs_are_printed():
    graph = build([("int32", ())], lambda x: (record(x), record(x))[1])
    assert "TestRecord(%in0:0, ^test_record)" in graph.to_text()


def test_to_dot():
    dot = sample_graph().to_dot()
    assert dot.startswith('digraph "main" {') and dot.rstrip().endswith("}")
    assert '"main/add" [label="add = mul + sqrt\\nfloat32[3]  test_rt_graph.py:' in dot
    assert '"main/exp" [label="exp = Exp(in0)\\nfloat32[3]  test_rt_graph.py:' in dot
    assert '"main/in0" -> "main/exp";' in dot
    assert dot == sample_graph().to_dot()


# -- serialization -------------------------------------------------------------


def roundtrip(graph):
    return rt.Graph.from_graph_def(json.loads(json.dumps(graph.as_graph_def())))


def test_graph_def_roundtrip_runs_identically():
    graph = sample_graph()
    loaded = roundtrip(graph)
    loaded.verify()
    assert loaded.to_text() == graph.to_text()
    for got, want in zip(executor.run_graph(loaded, SAMPLE_ARGS), executor.run_graph(graph, SAMPLE_ARGS)):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)


def test_graph_def_is_plain_json():
    graph_def = sample_graph().as_graph_def()
    assert json.loads(json.dumps(graph_def)) == graph_def
    assert graph_def["format"] == "autograph.GraphDef"
    node = next(n for n in graph_def["graph"]["nodes"] if n["type"] == "StridedSlice")
    assert node["attrs"]["spec"] == {"tuple": [{"tuple": ["slice", 1, None, None]}]}


def test_attr_encoding_roundtrips():
    values = [None, 1, 2.5, "s", True, [1, (2, 3)], (None, 4), {"a": (1,)}, np.dtype("int32"),
              np.arange(6, dtype=np.int16).reshape(2, 3), np.float32(1.5), np.array(np.nan)]
    for value in values:
        decoded = serialize.decode_attr(json.loads(json.dumps(serialize.encode_attr(value))))
        if isinstance(value, np.ndarray):
            assert decoded.dtype == value.dtype
            np.testing.assert_array_equal(decoded, value)
        else:
            assert decoded == value and type(decoded) is type(value)


def test_stateful_chain_survives_roundtrip():
    graph = build([("int32", ())], lambda x: (record(x), record(x * 2), x)[2])
    loaded = roundtrip(graph)
    assert loaded.last_stateful.name == graph.last_stateful.name
    LOG.clear()
    executor.run_graph(loaded, [np.int32(3)])
    assert LOG == [3, 6]


def test_unserializable_attr_refuses_to_load():
    if "TestCallback" not in opdef.REGISTRY:
        opdef.register("TestCallback", infer=lambda inputs, attrs: [(inputs[0].dtype, inputs[0].shape)],
                       inputs=1, attrs={"fn": "plain"})
        kernels.KERNELS["TestCallback"] = lambda x, *, fn: fn(x)
    graph = build([("float32", ())], lambda x: apply.apply_op("TestCallback", [x], {"fn": np.negative}))
    graph_def = json.loads(json.dumps(graph.as_graph_def()))
    with pytest.raises(serialize.GraphDefError, match=r"node 'test_callback'.*Python object.*attribute 'fn'.*cannot be saved"):
        rt.Graph.from_graph_def(graph_def)


def test_bad_graph_defs_are_rejected_clearly():
    graph_def = sample_graph().as_graph_def()
    with pytest.raises(serialize.GraphDefError, match="not an autograph graph def"):
        rt.Graph.from_graph_def({"nodes": []})
    broken = json.loads(json.dumps(graph_def))
    broken["graph"]["nodes"][3]["type"] = "NoSuchOp"
    with pytest.raises(serialize.GraphDefError, match="'NoSuchOp', which is not registered"):
        rt.Graph.from_graph_def(broken)
    broken = json.loads(json.dumps(graph_def))
    broken["graph"]["nodes"][4]["inputs"] = ["later:0"]
    with pytest.raises(serialize.GraphDefError, match="uses 'later:0' before it is defined"):
        rt.Graph.from_graph_def(broken)


# -- control flow through the shared library ----------------------------------


needs_control_flow = pytest.mark.skipif(not hasattr(rt, "while_loop"), reason="ops/functional_control_flow.py not present")


def nested_control_flow_graph():
    def fn(x, n):
        def body(i, s):
            return i + 1, rt.cond(s > 10, lambda: s - x, lambda: s * 2 + x)

        return rt.while_loop(lambda i, s: i < n, body, (0, x))

    return build([("float32", ()), ("int32", ())], fn)


@needs_control_flow
def test_control_flow_graph_prints_roundtrips_and_verifies():
    graph = nested_control_flow_graph()
    graph.verify()
    text = graph.to_text()
    assert re.search(r"\n    cond \w+\(", text) and re.search(r"\n    body \w+\(", text)
    assert re.search(r"\n        then_branch \w+\(", text)
    loaded = roundtrip(graph)
    loaded.verify()
    assert loaded.to_text() == text
    for n in (0, 3, 10):
        args = [np.float32(1.5), np.int32(n)]
        assert executor.run_graph(loaded, args) == executor.run_graph(graph, args)
    assert executor.run_graph(graph, [np.float32(1.5), np.int32(10)]) == [10, np.float32(10.5)]


@needs_control_flow
def test_failure_inside_a_loop_body_names_the_enclosing_while():
    def fn(v, n):
        return rt.while_loop(lambda i: i < n, lambda i: i + rt.gather(v, i) * 0 + 1, (0,))

    graph = build([("int32", (2,)), ("int32", ())], fn)
    with pytest.raises(rt.ExecutionError) as info:
        executor.run_graph(graph, [np.ones(2, np.int32), np.int32(5)])
    message = str(info.value)
    assert "GatherV2 op" in message and "IndexError" in message
    assert re.search(r"inside While op '\w+' created at .*test_rt_graph.py:\d+", message)


# -- verifier ------------------------------------------------------------------


def test_verify_accepts_traced_graphs():
    sample_graph().verify()


def verification_message(graph):
    with pytest.raises(rt.VerificationError) as info:
        graph.verify()
    return str(info.value)


def test_verify_catches_use_before_definition():
    graph = sample_graph()
    ops = graph.operations
    i = next(k for k, op in enumerate(ops) if op.type == "Exp")
    ops.insert(1, ops.pop(i))  # the Exp now precedes... its input is a placeholder: move a consumer instead
    j = next(k for k, op in enumerate(ops) if op.type == "Mul")
    ops.insert(1, ops.pop(j))
    message = verification_message(graph)
    assert "is used before it is defined" in message
    assert ">>> %mul:0 float32[3] = Mul(%exp:0, %const:0)" in message


def test_verify_catches_wrong_recorded_dtype_and_shape():
    graph = sample_graph()
    add = next(op for op in graph.operations if op.type == "Add")
    add.outputs[0].dtype = np.dtype("int32")
    assert "recorded as int32 but its inputs give float32" in verification_message(graph)
    add.outputs[0].dtype = np.dtype("float32")
    add.outputs[0].shape = (4,)
    assert "recorded with shape [4], incompatible with [3]" in verification_message(graph)


def test_verify_catches_control_inputs_out_of_order():
    graph = build([("int32", ())], lambda x: (record(x), record(x))[1])
    ops = graph.operations
    ops[1], ops[2] = ops[2], ops[1]
    assert "control input 'test_record' of 'test_record_1' does not precede it" in verification_message(graph)


def test_verify_catches_foreign_tensors_and_bad_outputs():
    graph = sample_graph()
    other = build([("float32", (3,))], lambda x: x + 1, name="other")
    exp = next(op for op in graph.operations if op.type == "Exp")
    exp.inputs[0] = other.outputs[0]
    assert "belongs to graph 'other'" in verification_message(graph)
    graph = sample_graph()
    graph.outputs.append(other.outputs[0])
    assert "is not a tensor of this graph" in verification_message(graph)


def test_verify_catches_missing_library_function():
    graph = build([("int32", ())], lambda x: x + 1)
    with graph.as_default():
        op = graph.add_op("If", [graph.inputs[0] > 0], {"then_branch": "nope", "else_branch": "nope"}, [])
    assert op.type == "If"
    assert "refers to function 'nope' (then_branch), which is not in the library" in verification_message(graph)


@needs_control_flow
def test_verify_catches_subgraph_signature_mismatch():
    graph = nested_control_flow_graph()
    body = graph.library[graph.operations[-1].attrs["body"]]
    body.outputs = body.outputs[::-1]
    message = verification_message(graph)
    assert "While" in message and ">>> %while:0" in message


def test_unique_names_never_repeat_a_name_given_out():
    graph = rt.Graph("g")
    names = [graph.unique_name(base) for base in ("const", "const_1", "const", "const", "const_1", "x_1", "x", "x")]
    assert len(set(names)) == len(names), names
    assert names[:4] == ["const", "const_1", "const_2", "const_3"]
