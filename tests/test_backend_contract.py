"""The contract between op definitions and backends, checked for every backend.

An op type's attributes and arity are declared on its definition
(``opdef.register(..., attrs=, inputs=)``); a backend supplies kernels that
take exactly those.  Every backend the runtime knows is checked (the JAX one
skips, with the reason, when JAX is not installed).
"""

from __future__ import annotations

import importlib.util
import inspect

import numpy as np
import pytest

from autograph import runtime as rt
from autograph.runtime import backends
from autograph.runtime.core import backend, graph_def_schema, opdef
from autograph.runtime.errors import GraphDefError
from autograph.runtime.exec import interpreter

assert rt  # (importing the runtime registers the numpy backend and the op definitions)


def _jax_rules():
    from autograph.runtime.backends.jax import kernels, lowering

    return set(lowering.RULES) | set(kernels.UNLOWERABLE)


# backend -> the op types it runs without a kernel of its table (its executor's own rules, or
# op types it refuses with a reason); every backend the runtime knows must have an entry
WITHOUT_KERNELS = {
    "numpy": lambda: set(interpreter.RULES),
    "jax": _jax_rules,
}
KNOWN = sorted({*backend.names(), *backends.OPTIONAL})


def _backend(name):
    if name == "jax" and importlib.util.find_spec("jax") is None:
        pytest.skip("JAX is not installed (pip install -e .[jax])")
    return backends.resolve(name)


def test_every_known_backend_is_checked():
    assert set(KNOWN) <= set(WITHOUT_KERNELS), "add the new backend to WITHOUT_KERNELS"


def test_every_op_type_declares_its_inputs_and_attribute_kinds():
    for op_type, definition in opdef.REGISTRY.items():
        assert definition.inputs is not None, f"{op_type}: opdef.register(..., inputs=) is missing"
        low, high = definition.inputs
        assert 0 <= low and (high is None or low <= high), op_type
        for name, attr in definition.attrs.items():
            assert attr.kind in graph_def_schema.KINDS, (op_type, name, attr.kind)
    assert set(graph_def_schema.KINDS) == set(opdef.ATTR_KINDS)


@pytest.mark.parametrize("name", KNOWN)
def test_every_op_type_has_a_kernel_or_a_rule(name):
    record = _backend(name)
    covered = set(record.kernels) | WITHOUT_KERNELS[name]()
    missing = sorted(t for t in opdef.REGISTRY if t not in covered and not t.startswith("Test"))
    assert not missing, f"op types the {name} backend has neither a kernel nor a rule for: {missing}"
    assert not set(record.kernels) & {"If", "While"}  # running sub-graphs is the executor's


def _problems(op_type, kernel) -> list[str]:
    """How ``kernel`` fails to take exactly the inputs and attributes ``op_type`` declares."""
    definition = opdef.get(op_type)
    declared, (low, high) = definition.attrs, definition.inputs
    nin = getattr(kernel, "nin", None)
    if isinstance(kernel, np.ufunc):
        return [] if not declared and low == high == nin else [f"a ufunc of {nin} inputs, no attributes"]
    try:
        params = list(inspect.signature(kernel).parameters.values())
    except (TypeError, ValueError):
        return ["no signature to check"]
    ours = getattr(kernel, "__module__", "").startswith("autograph")  # library functions may take more
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    variadic = any(p.kind is p.VAR_POSITIONAL for p in params)
    problems = []
    if sum(p.default is p.empty for p in positional) > low or not (
            variadic or (high is not None and high <= len(positional))):
        problems.append(f"does not take {low} to {high} inputs")
    if any(p.kind is p.VAR_KEYWORD for p in params):
        problems.append("takes **kwargs, so it accepts attributes the op never has")
    past_inputs = len(params) if high is None else high  # (positional parameters past the inputs: by keyword)
    by_keyword = {p.name: p for i, p in enumerate(params)
                  if p.kind is p.KEYWORD_ONLY or (p.kind is p.POSITIONAL_OR_KEYWORD and i >= past_inputs)}
    by_keyword.pop("library", None)  # (functional ops get the function library)
    for attr_name, attr in declared.items():
        p = by_keyword.get(attr_name)
        if p is None:
            problems.append(f"does not take attribute {attr_name!r}")
        elif not attr.required and p.default is not p.empty and p.default != attr.default:
            problems.append(f"defaults {attr_name!r} to {p.default!r}, the op to {attr.default!r}")
        elif not attr.required and p.default is p.empty:
            problems.append(f"needs {attr_name!r}, which an op may leave out")
    for p in by_keyword.values():  # (numpy's and JAX's own functions may have options of their own)
        if p.kind is p.KEYWORD_ONLY and p.name not in declared and (ours or p.default is p.empty):
            problems.append(f"takes {p.name!r}, which the op does not declare")
    return problems


@pytest.mark.parametrize("name", KNOWN)
def test_each_kernel_takes_exactly_the_declared_inputs_and_attributes(name):
    record = _backend(name)
    found = {t: _problems(t, k) for t, k in sorted(record.kernels.items()) if t in opdef.REGISTRY}
    found = {t: p for t, p in found.items() if p}
    assert not found, f"{name} kernels that do not match their op definitions: {found}"


def test_the_check_finds_a_kernel_that_does_not_match():
    def reduce(x, *, axis, keepdims=True, extra):
        return x

    problems = _problems("Sum", reduce)
    assert "takes 'extra', which the op does not declare" in problems
    assert _problems("Add", np.negative) == ["a ufunc of 1 inputs, no attributes"]
    assert _problems("Cast", lambda x, *, dtype, weak=True: x) == ["defaults 'weak' to True, the op to False"]
    assert _problems("Cast", lambda x, *, dtype, **rest: x) == [
        "takes **kwargs, so it accepts attributes the op never has", "does not take attribute 'weak'"]
    assert _problems("Identity", lambda x, y: x) == ["does not take 1 to 1 inputs"]


# -- the declarations at registration ----------------------------------------------------------


def test_an_unknown_attribute_kind_is_refused_at_registration():
    with pytest.raises(ValueError, match=r"op type 'TestBadKind': attribute 'n' has kind 'integer', which is not one of"):
        opdef.register("TestBadKind", infer=lambda inputs, attrs: [], attrs={"n": "integer"}, inputs=0)
    assert "TestBadKind" not in opdef.REGISTRY


def test_a_function_attribute_must_be_declared_as_one():
    with pytest.raises(ValueError, match=r"op type 'TestBadCall': function attribute 'body' must be declared"):
        opdef.register("TestBadCall", infer=lambda inputs, attrs: [], function_attrs=("body",),
                       attrs={"body": "plain"}, inputs=0)


def test_an_undeclared_arity_is_named_with_the_fix(monkeypatch):
    monkeypatch.setitem(opdef.REGISTRY, "TestNoArity", opdef.OpDef("TestNoArity", infer=lambda i, a: []))
    with pytest.raises(TypeError, match=r"op type 'TestNoArity' declares no inputs: pass inputs=N"):
        graph_def_schema.arity("TestNoArity")


def test_the_schema_is_the_definitions():
    assert graph_def_schema.arity("Pack") == (0, None)
    assert graph_def_schema.attribute_names("Cast") == (frozenset({"dtype"}), frozenset({"weak"}))
    assert graph_def_schema.attribute_names("While") == (frozenset({"cond", "body"}), frozenset({"maximum_iterations"}))


def _graph_def_with(attrs):
    graph = rt.Graph("main")
    with graph.as_default():
        rt.zeros_like(rt.constant(np.float32(1.0)))
    graph_def = graph.as_graph_def()
    (node,) = [n for n in graph_def["graph"]["nodes"] if n["type"] == "ZerosLike"]
    node["attrs"].update(attrs)
    return graph_def


def test_a_kind_without_a_check_is_refused(monkeypatch):
    monkeypatch.delitem(graph_def_schema.KINDS, "dtype_or_none")
    with pytest.raises(GraphDefError, match=r"field 'attrs.dtype' is of kind 'dtype_or_none', which this runtime "
                                            r"cannot check"):
        rt.Graph.from_graph_def(_graph_def_with({}))


def test_a_null_dtype_is_allowed_where_the_kind_says_so():
    rt.Graph.from_graph_def(_graph_def_with({"dtype": None}))
    with pytest.raises(GraphDefError, match=r"field 'attrs.dtype' must be a dtype \{\"dtype\": name\} or null"):
        rt.Graph.from_graph_def(_graph_def_with({"dtype": 3}))


# -- capabilities: what the execution layer asks a backend, never a kernel's type ---------------


def _chain(x):
    return rt.exp(x) * 2.0 + rt.sqrt(abs(x)) - x * x


def _traced(fn, *specs):
    graph = rt.Graph("main")
    with graph.as_default():
        args = [graph.add_placeholder(np.dtype(dtype), shape, name=f"x{i}") for i, (dtype, shape) in enumerate(specs)]
        graph.outputs = [fn(*args)]
    return graph


@pytest.fixture
def bare_numpy(monkeypatch):
    """numpy's kernels in a backend record that declares no capabilities, as the default backend
    (for this test only: it is not registered by name)."""
    from autograph.runtime.backends.numpy import BACKEND

    bare = backend.Backend(name="bare-numpy", kernels=BACKEND.kernels, asarray=np.asarray)
    named = backend.get
    monkeypatch.setattr(backend, "get", lambda name=None: bare if name is None else named(name))
    return bare


def test_numpy_declares_its_ufuncs_capabilities():
    from autograph.runtime.backends.numpy import BACKEND

    assert {"Add", "Exp", "MatMul"} <= BACKEND.out_kernels and not {"Sum", "Select", "Cast"} & BACKEND.out_kernels
    assert {"Add", "Less", "Neg"} <= BACKEND.operator_kernels and "Exp" not in BACKEND.operator_kernels


def test_a_backend_without_out_kernels_gets_no_donations(bare_numpy):
    x = np.linspace(-3, 3, 1 << 16).astype(np.float32)
    graph = _traced(_chain, ("float32", x.shape))
    plan = interpreter.plan(graph)
    assert all(s.donor is None for s in plan.steps)
    (got,) = plan.run([x])
    np.testing.assert_allclose(got, np.exp(x) * np.float32(2) + np.sqrt(np.abs(x)) - x * x, rtol=1e-6)


def test_a_backend_without_operator_kernels_gets_its_kernels_called(bare_numpy):
    graph = _traced(lambda x: x + 1.0, ("float32", ()))
    (step,) = interpreter.plan(graph).steps
    assert step.call is np.add
    assert interpreter.run_graph(graph, [np.float32(2)]) == [np.float32(3)]


def test_with_numpy_the_same_plan_donates_and_calls_operators():
    import operator

    x = np.zeros(1 << 16, np.float32)
    assert any(s.donor is not None for s in interpreter.plan(_traced(_chain, ("float32", x.shape))).steps)
    (step,) = interpreter.plan(_traced(lambda x: x + 1.0, ("float32", ()))).steps
    assert step.call is operator.add


# -- effects: one module every backend uses ---------------------------------------------------

EFFECT_KERNELS = {
    "ReadVariable": "read_variable", "AssignVariable": "assign_variable", "AssignAddVariable": "assign_add_variable",
    "AssignSubVariable": "assign_sub_variable", "Print": "print_values", "PyFunc": "py_func", "Assert": "check_assert",
}


def test_the_numpy_effect_kernels_are_the_shared_ones():
    from autograph.runtime.backends.numpy import BACKEND
    from autograph.runtime.exec import effects

    for op_type, name in EFFECT_KERNELS.items():
        assert BACKEND.kernels[op_type] is getattr(effects, name), op_type


def test_no_backend_reads_variable_storage():
    import pathlib

    root = pathlib.Path(backends.__file__).parent
    readers = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                     if "._value" in p.read_text() or "._lock" in p.read_text())
    assert not readers, f"backend modules reading a Variable's storage (use exec/effects.py): {readers}"


def test_the_shared_effects_keep_their_messages(capsys):
    from autograph.runtime.exec import effects

    var = rt.Variable(np.float32(1.0), name="v")
    attrs = {"handle": var.handle, "dtype": var.dtype, "shape": var.shape}
    assert effects.assign_add_variable(np.float32(2.0), **attrs) == np.float32(3.0)
    assert effects.read_variable(**attrs) == np.float32(3.0)
    with pytest.raises(ValueError, match=r"cannot assign a value of shape \[2\] to variable 'v' of shape \[\]"):
        effects.assign_variable(np.zeros(2, np.float32), **attrs)
    effects.print_values(np.int32(4), parts=("n =", None), sep=" ", end="\n", stream="stdout")
    assert capsys.readouterr().out == "n = 4\n"
    with pytest.raises(AssertionError, match="^x must be positive$"):
        effects.check_assert(np.bool_(False), message="x must be positive")
    with pytest.raises(TypeError, match=r"py_function 'f' output 0 has dtype float64, but Tout says int32"):
        effects.py_func(func=lambda: 1.5, Tout=[np.dtype("int32")], output_shapes=[()], single=True, func_name="f")
