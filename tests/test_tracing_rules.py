"""tf.function's tracing rules, ported from TensorFlow's own tests (polymorphic_function_test.py,
tracing_compilation_test.py): behaviours, not code, each compared with plain Python where Python
has an answer.

Variables created on every call, Python objects as arguments, variables passed as arguments,
retracing on Python values, defaults and keywords, input signatures.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import math
import weakref

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.ops import variables


# -- variables created inside the function -------------------------------------------------------


def test_variable_created_on_every_call_raises_on_the_first_call():
    def f(x):
        v = rt.Variable(1.0)
        v.assign_add(x)
        return v.read_value()

    assert f(1.0) == f(1.0) == 2.0  # Python: a new variable at every call
    g = ag.function(f)
    with pytest.raises(ag.TracingError, match=r"rt.Variable 'Variable' created at .*test_tracing_rules.py:\d+ "
                                              r"\(`v = rt.Variable\(1.0\)`\) by function 'f' .*is created on every call"):
        g(np.float32(1.0))
    with pytest.raises(ag.TracingError, match="is created on every call"):  # never a value, on any call
        g(np.float32(1.0))


def test_variable_created_under_a_none_guard_on_a_method():
    class Model:
        def __init__(self):
            self.v = None

        @ag.function
        def __call__(self, x):
            if self.v is None:
                self.v = rt.Variable(1.0)
            self.v.assign_add(x)
            return self.v.read_value()

    m = Model()
    assert m(np.float32(1.0)) == 2.0
    assert m(np.float32(1.0)) == 3.0  # the one variable, created on the first call, updated since
    assert m.v.numpy() == 3.0


def test_variable_created_in_init_or_at_module_level():
    class Counter:
        def __init__(self):
            self.count = rt.Variable(np.int64(0))

        @ag.function
        def bump(self):
            self.count.assign_add(1)
            return self.count.read_value()

    c = Counter()
    assert [c.bump() for _ in range(3)] == [1, 2, 3]
    assert c.bump.tracing_count == 1  # nothing created while tracing: traced once


def test_python_side_effects_run_twice_on_a_first_call_that_creates_variables():
    calls = []
    state = {}

    @ag.function
    def f(x):
        calls.append("traced")
        if "v" not in state:
            state["v"] = rt.Variable(0.0)
        return state["v"].assign_add(x)

    assert f(np.float32(2.0)) == 2.0 and f(np.float32(2.0)) == 4.0
    assert calls == ["traced", "traced"]  # the second trace checks that no variable is created again


def test_function_creating_no_variable_is_traced_once():
    calls = []

    @ag.function
    def f(x):
        calls.append(x)
        return x * 2

    f(np.float32(1))
    assert len(calls) == 1 and f.tracing_count == 1


def test_variable_in_one_branch_of_a_python_condition_of_an_argument():
    made = {}

    @ag.function
    def f(x, create):
        if create and "v" not in made:
            made["v"] = rt.Variable(10.0)
        return x + (made["v"].read_value() if made else 0.0)

    assert f(np.float32(1), False) == 1.0
    with pytest.raises(ag.TracingError, match="while retracing function 'f'"):
        f(np.float32(1), True)  # the variable would be made by a retrace


# -- variables passed as arguments ---------------------------------------------------------------


def test_captured_and_argument_variables_together():
    v1 = rt.Variable(1.0)
    add = ag.function(lambda x, v: x + v1 + v)
    v2 = rt.Variable(1.0)
    assert add(np.float32(1.0), v2) == 3.0


def test_variable_only_argument_is_assigned():
    v = rt.Variable(1.0)
    add = ag.function(lambda x: x.assign_add(1.0))
    assert add(v) == 2.0 and v.numpy() == 2.0


def test_variables_of_one_spec_share_a_trace_and_each_call_uses_its_own():
    def bump(v, x):
        v.assign_add(x)
        return v.read_value()

    g = ag.function(bump)
    a, b = rt.Variable(np.float32(0.0)), rt.Variable(np.float32(100.0))
    assert g(a, np.float32(1)) == 1.0
    assert g(b, np.float32(1)) == 101.0
    assert g(a, np.float32(1)) == 2.0
    assert g.tracing_count == 1
    assert (a.numpy(), b.numpy()) == (2.0, 101.0)
    c = rt.Variable(np.float64(0.0))  # another dtype: another trace
    assert g(c, np.float64(1)) == 1.0 and g.tracing_count == 2


def test_the_same_variable_twice_is_another_key_than_two_variables():
    def second(dup, dup2, k):
        dup.assign_add(k)
        return dup2.read_value()

    g = ag.function(second)
    v, w = rt.Variable(np.int32(2)), rt.Variable(np.int32(2))
    assert g(v, v, np.int32(1)) == 3  # the same variable: its update is seen
    assert g(v, w, np.int32(1)) == 2  # two variables: w is unchanged
    assert g.tracing_count == 2
    assert g(w, w, np.int32(1)) == 3 and g.tracing_count == 2


def test_variable_argument_that_is_also_captured():
    g_var = rt.Variable(np.float32(100.0))

    @ag.function
    def f(v):
        v.assign_add(np.float32(1))
        return g_var.read_value() + v.read_value()

    other = rt.Variable(np.float32(0.0))
    assert f(g_var) == 202.0  # the argument is the captured variable: one variable updated
    assert f(other) == 101.0 + 1.0 and g_var.numpy() == 101.0
    assert f.tracing_count == 1


def test_variables_nested_in_containers():
    g = ag.function(lambda vs: vs["a"].assign_add(vs["b"].read_value()))
    a, b = rt.Variable(1.0), rt.Variable(2.0)
    assert g({"a": a, "b": b}) == 3.0 and a.numpy() == 3.0
    assert g({"a": b, "b": a}) == 5.0 and b.numpy() == 5.0
    assert g.tracing_count == 1


def test_concrete_function_of_a_variable_argument_runs_on_other_variables():
    g = ag.function(lambda v: v.assign_add(1.0))
    a, b = rt.Variable(0.0), rt.Variable(10.0)
    cf = g.get_concrete_function(a)
    assert cf(b) == 11.0 and b.numpy() == 11.0 and a.numpy() == 0.0
    assert cf(a) == 1.0 and a.numpy() == 1.0


def test_saved_graph_of_a_variable_argument_holds_that_variable():
    g = ag.function(lambda v: v.assign_add(1.0))
    a = rt.Variable(np.float32(41.0), name="a")
    graph = rt.Graph.from_graph_def(g.get_concrete_function(a).graph.as_graph_def())
    handle = next(op.attrs["handle"] for op in graph.operations if "handle" in op.attrs)
    assert variables.lookup_variable(handle).numpy() == 41.0  # the value of a, not of a stand-in


def test_variables_with_jit_compile():
    g = ag.function(lambda v, x: v.assign_add(x), jit_compile=True)
    a, b = rt.Variable(np.float32(0.0)), rt.Variable(np.float32(5.0))
    assert g(a, np.float32(1)) == 1.0 and g(b, np.float32(1)) == 6.0 and g.tracing_count == 1


def test_variables_with_the_jax_backend():
    pytest.importorskip("jax")  # an optional backend
    g = ag.function(lambda v, x: v.assign_add(x), backend="jax")
    a, b = rt.Variable(np.float32(0.0)), rt.Variable(np.float32(5.0))
    assert g(a, np.float32(1)) == 1.0 and g(b, np.float32(1)) == 6.0 and g(a, np.float32(1)) == 2.0
    assert g.tracing_count == 1 and (a.numpy(), b.numpy()) == (2.0, 6.0)


def test_the_cache_does_not_keep_argument_variables_alive():
    g = ag.function(lambda v: v.read_value() * 2)
    g(rt.Variable(1.0))
    v = rt.Variable(3.0)
    ref = weakref.ref(v)
    assert g(v) == 6.0
    del v
    gc.collect()
    assert ref() is None


# -- Python objects as arguments -----------------------------------------------------------------


@dataclasses.dataclass
class Config:
    scale: float
    layers: int


@dataclasses.dataclass(frozen=True)
class FrozenConfig:
    scale: float


def scaled(x, cfg):
    y = x
    for _ in range(cfg.layers):
        y = y * cfg.scale
    return y


def test_dataclass_config_is_a_static_argument():
    g = ag.function(scaled)
    cfg = Config(2.0, 3)
    assert g(np.float32(1), cfg) == scaled(np.float32(1), cfg) == 8.0
    assert g(np.float32(2), cfg) == 16.0 and g.tracing_count == 1
    other = Config(2.0, 3)  # equal but unhashable (a dataclass with eq): keyed by identity
    assert g(np.float32(1), other) == 8.0 and g.tracing_count == 2


def test_frozen_dataclass_is_keyed_by_equality():
    g = ag.function(lambda x, cfg: x * cfg.scale)
    assert g(np.float32(1), FrozenConfig(3.0)) == 3.0
    assert g(np.float32(1), FrozenConfig(3.0)) == 3.0 and g.tracing_count == 1
    assert g(np.float32(1), FrozenConfig(4.0)) == 4.0 and g.tracing_count == 2


def test_attribute_changed_after_tracing_is_not_seen_by_the_graph():
    g = ag.function(scaled)
    cfg = Config(2.0, 1)
    assert g(np.float32(1), cfg) == 2.0
    cfg.scale = 5.0
    assert scaled(np.float32(1), cfg) == 5.0  # Python sees the new value...
    assert g(np.float32(1), cfg) == 2.0  # ...the graph was traced with the old one (TensorFlow's semantics)


def test_module_function_and_class_arguments():
    def f(x, mod, fn, cls):
        return fn(x) + mod.pi * 0 + (1 if cls is int else 2)

    g = ag.function(f)
    assert g(np.float32(4), math, rt.sqrt, int) == f(np.float32(4), math, rt.sqrt, int) == 3.0
    assert g(np.float32(4), math, rt.square, float) == 18.0
    assert g.tracing_count == 2


def test_numpy_dtype_argument():
    def f(x, dtype):
        return rt.cast(x, dtype)

    g = ag.function(f)
    assert g(np.int32(1), np.float32) == np.float32(1) and type(g(np.int32(2), np.float32)) is np.float32
    assert type(g(np.int32(1), np.int64)) is np.int64
    assert g.tracing_count == 2


def test_model_object_with_a_method_argument():
    class Dense:
        def __init__(self, w):
            self.w = rt.Variable(np.float32(w))

        def apply(self, x):
            return x * self.w.read_value()

    a, b = Dense(2.0), Dense(3.0)
    g = ag.function(lambda layer, x: layer.apply(x))
    assert g(a, np.float32(1)) == 2.0 and g(b, np.float32(1)) == 3.0
    h = ag.function(lambda fn, x: fn(x))
    assert h(a.apply, np.float32(2)) == 4.0 and h(a.apply, np.float32(3)) == 6.0  # a new method object each time
    assert h.tracing_count == 1


def test_objects_with_colliding_hashes_are_separate_traces():
    class Foo:
        def __hash__(self):
            return 42

    g = ag.function(lambda foo, x: x + (1 if isinstance(foo, Foo) else 0))
    g(Foo(), np.int32(0))
    g(Foo(), np.int32(0))
    assert g.tracing_count == 2


def test_the_cache_does_not_keep_object_arguments_alive():
    class Box:
        factor = 2

    g = ag.function(lambda b, x: x * b.factor)
    box = Box()
    ref = weakref.ref(box)
    assert g(box, np.float32(1)) == 2.0
    del box
    gc.collect()
    assert ref() is None
    assert g(Box(), np.float32(2)) == 4.0
    assert len(g._traced_graphs()) == 1  # the trace of the freed object was dropped


def test_trace_key_protocol():
    class Shape:
        def __init__(self, dims, label):
            self.dims, self.label = dims, label

        def __autograph_trace_key__(self):
            return self.dims  # the label does not matter to the traced code

    g = ag.function(lambda s, x: x * len(s.dims))
    assert g(Shape((2, 3), "a"), np.float32(1)) == 2.0
    assert g(Shape((2, 3), "b"), np.float32(1)) == 2.0 and g.tracing_count == 1
    assert g(Shape((2, 3, 4), "a"), np.float32(1)) == 3.0 and g.tracing_count == 2


def test_unhashable_trace_key_names_the_type():
    class Bad:
        def __autograph_trace_key__(self):
            return [1, 2]

    g = ag.function(lambda b, x: x)
    with pytest.raises(TypeError, match=r"Bad.__autograph_trace_key__\(\) returned \[1, 2\], which is not hashable.*"
                                        r"return a hashable value"):
        g(Bad(), np.float32(1))


def test_object_whose_hash_raises_names_the_argument():
    class BadHash:
        def __eq__(self, other):
            return True

        def __hash__(self):
            raise ValueError("no hash today")

    g = ag.function(lambda x, cfg: x)
    with pytest.raises(TypeError, match=r"argument 'cfg' = .*BadHash.*whose __hash__ raised ValueError: no hash today"):
        g(np.float32(1), BadHash())


def test_object_whose_equality_raises_names_the_argument():
    class Arrayish:
        def __init__(self):
            self.data = np.arange(3)

        def __eq__(self, other):
            return self.data == other.data  # an array: its truth value raises

        def __hash__(self):
            return 7

    g = ag.function(lambda x, cfg: x)
    g(np.float32(1), Arrayish())
    with pytest.raises(TypeError, match=r"comparing argument 'cfg' with the one of an earlier trace raised "
                                        r"ValueError.*make __eq__ return a bool"):
        g(np.float32(1), Arrayish())


# -- retracing on Python values, defaults, keywords ---------------------------------------------


def test_defaults_and_keywords_bind_to_one_key():
    calls = []

    def func(foo, bar=1, baz=2):
        calls.append((foo, bar, baz))
        return foo + bar + baz

    g = ag.function(func)
    assert g(0, baz=20) == func(0, baz=20)
    assert g(1) == func(1) and g.tracing_count == 2
    assert g(foo=1) == 4 and g.tracing_count == 2  # the same bound arguments
    assert g(1, 2, 3) == 6 and g.tracing_count == 3
    assert g(1, bar=2, baz=3) == 6 and g(1, baz=3, bar=2) == 6 and g.tracing_count == 3


def test_varargs_positional_dict_and_keyword_are_two_keys():
    g = ag.function(lambda *args, **kwargs: len(args) * 10 + len(kwargs))
    assert g(1, x=2) == 11 and g(1, x=2) == 11 and g.tracing_count == 1
    assert g(1, {"x": 2}) == 20 and g.tracing_count == 2


def test_numpy_arrays_of_one_spec_share_a_trace_and_are_read_at_call_time():
    g = ag.function(lambda x: x + 0)
    g(np.ones([2, 2], np.float32))
    g(np.zeros([2, 2], np.float32))
    assert g.tracing_count == 1
    mutable = np.ones([], np.float32)
    assert g(mutable) == 1.0
    mutable.fill(0)
    assert g(mutable) == 0.0


def test_ndarray_subclass_is_an_array_argument():
    class MyArray(np.ndarray):
        pass

    g = ag.function(lambda x: x * 2)
    assert g(np.ones([], np.float32)) == 2.0
    assert g(np.ones([], np.float32).view(MyArray)) == 2.0 and g.tracing_count == 1


@pytest.mark.filterwarnings("ignore:autograph could not convert")  # a partial runs as is: traced unconverted
def test_functools_partial_is_traced():
    def full(a, b, c=3):
        return a, b, c

    partial = functools.partial(full, 1, c=4)
    assert ag.function(partial)(2) == partial(2) == (1, 2, 4)


def test_python_string_arguments_retrace_per_value():
    g = ag.function(lambda a, x: x + len(a))
    g("hi", np.int32(0))
    g("hi", np.int32(1))
    g("bye", np.int32(0))
    assert g.tracing_count == 2


def test_reduce_retracing_relaxes_the_changed_dimension():
    seen = []

    @ag.do_not_convert
    def static_shape(a):
        return a.shape  # as traced (converted code reads an unknown dimension's size when the graph runs)

    @ag.function(reduce_retracing=True)
    def f(a):
        seen.append(static_shape(a))
        return a + 1

    f(np.zeros([0], np.float32))
    f(np.ones([1], np.float32))
    np.testing.assert_array_equal(f(np.ones([2], np.float32)), [2, 2])
    assert seen == [(0,), (None,)] and f.tracing_count == 2


def test_input_signature_with_keyword_positional_arguments():
    sig = [rt.TensorSpec((), "float32"), rt.TensorSpec((), "int64")]
    g = ag.function(lambda flt, integer: (flt, integer), input_signature=sig)
    flt, integer = np.float32(1.0), np.int64(2)
    for out in (g(flt, integer), g(flt=flt, integer=integer), g(integer=integer, flt=flt), g(flt, integer=integer)):
        assert out == (1.0, 2)
    assert g.tracing_count == 1


def test_underspecified_input_signature_refuses_an_uncovered_argument():
    @ag.function(input_signature=[rt.TensorSpec((), "float32")])
    def foo(a, training=True):
        return a if training else -1.0 * a

    assert foo(np.float32(1)) == 1.0
    with pytest.raises(TypeError, match=r"argument 'training' is not covered by input_signature"):
        foo(np.float32(1), training=False)


def test_functions_with_the_same_code_and_other_closures_trace_separately():
    def make(k):
        return ag.function(lambda x: x * k)

    double, triple = make(2), make(3)
    assert double(np.float32(1)) == 2.0 and triple(np.float32(1)) == 3.0


def test_lambda_arguments_are_keyed_by_identity():
    g = ag.function(lambda fn, x: fn(x))
    square = lambda v: v * v  # noqa: E731
    assert g(square, np.float32(3)) == 9.0 and g(square, np.float32(2)) == 4.0
    assert g.tracing_count == 1
    assert g(lambda v: v + 1, np.float32(2)) == 3.0
    assert g.tracing_count == 2


def test_a_tensor_spec_in_a_call_is_refused():
    g = ag.function(lambda x: x)
    with pytest.raises(TypeError, match=r"argument 'x' = .*is a TensorSpec, which stands for an array only in "
                                        r"get_concrete_function: pass an array"):
        g(rt.TensorSpec((), "float32"))
    assert g.get_concrete_function(rt.TensorSpec((), "float32"))(np.float32(2)) == 2.0
