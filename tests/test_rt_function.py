"""rt.function: argument binding, cache keys, retracing, input_signature, outputs, methods, inlining."""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

from autograph import runtime as rt
from autograph.runtime.tracing import options as rt_options
from autograph.runtime.tracing.function import ConcreteFunction, Function, RetracingWarning

Point = collections.namedtuple("Point", "x y")


def op_types(graph):
    return [op.type for op in graph.operations]


# -- calling and values ------------------------------------------------------


def test_returns_numpy_scalar_of_the_traced_dtype():
    f = rt.function(lambda x: x * 2 + 1)
    out = f(np.float32(3.0))
    assert type(out) is np.float32 and out == 7.0
    assert isinstance(f, Function)


def test_returns_arrays_with_same_values_as_python():
    def f(x, y):
        return x * y - x

    g = rt.function(f)
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    y = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(g(x, y), f(x, y))
    assert g(x, y).dtype == np.float64


def test_decorator_with_options():
    @rt.function(optimize=False)
    def f(x):
        return x + 1

    assert f(np.int32(1)) == 2
    assert f.python_function(np.int32(1)) == 2


def test_python_function_and_wrapping():
    def original(x):
        """docs"""
        return x

    f = rt.function(original)
    assert f.python_function is original
    assert f.__name__ == "original" and f.__doc__ == "docs"


# -- cache keys ----------------------------------------------------------------


def test_traces_once_per_dtype_and_shape():
    f = rt.function(lambda x: x + 1)
    f(np.zeros(3, np.float32))
    f(np.ones(3, np.float32))
    assert f.tracing_count == 1
    f(np.zeros(4, np.float32))
    assert f.tracing_count == 2
    f(np.zeros(3, np.float64))
    assert f.tracing_count == 3
    f(np.zeros(3, np.float32))
    assert f.tracing_count == 3


def test_numpy_scalar_and_zero_d_array_share_a_trace():
    f = rt.function(lambda x: x + 1)
    f(np.float32(1))
    f(np.array(2, dtype=np.float32))
    assert f.tracing_count == 1


def test_python_scalars_are_constants_keyed_by_value():
    seen = []

    def f(x, n):
        seen.append(n)  # Python code runs at trace time only
        return x * n

    g = rt.function(f)
    assert g(np.float32(2), 3) == 6
    assert g(np.float32(5), 3) == 15
    assert g(np.float32(2), 4) == 8
    assert seen == [3, 4]
    assert g.tracing_count == 2
    graph = g.get_concrete_function(np.float32(1), 3).graph
    assert [op.type for op in graph.operations].count("Placeholder") == 1


def test_bool_int_and_float_constants_are_different_keys():
    g = rt.function(lambda x, c: x + 1 if c else x - 1)
    assert g(np.int32(0), True) == 1
    assert g(np.int32(0), 1) == 1
    assert g(np.int32(0), 1.0) == 1
    assert g.tracing_count == 3


def test_nan_constant_does_not_retrace():
    g = rt.function(lambda x, c: x)
    g(np.int32(0), float("nan"))
    g(np.int32(0), float("nan"))
    assert g.tracing_count == 1


def test_strings_and_none_are_constants():
    def f(x, mode, extra=None):
        if mode == "double":
            x = x * 2
        if extra is not None:
            x = x + extra
        return x

    g = rt.function(f)
    assert g(np.int32(3), "double") == 6
    assert g(np.int32(3), "same") == 3
    assert g(np.int32(3), "same", extra=np.int32(1)) == 4
    assert g.tracing_count == 3


def test_keyword_and_positional_calls_share_a_trace():
    g = rt.function(lambda x, y=np.float32(1): x + y)
    g(np.float32(1), np.float32(2))
    g(np.float32(1), y=np.float32(2))
    g(x=np.float32(1), y=np.float32(2))
    assert g.tracing_count == 1


def test_defaults_are_part_of_the_signature():
    def f(x, scale=3):
        return x * scale

    g = rt.function(f)
    assert g(np.int32(2)) == 6
    assert g(np.int32(2), 3) == 6
    assert g.tracing_count == 1


def test_varargs_and_kwargs():
    def f(*xs, **named):
        total = xs[0]
        for x in xs[1:]:
            total = total + x
        for key in sorted(named):
            total = total * named[key]
        return total

    g = rt.function(f)
    assert g(np.int32(1), np.int32(2), np.int32(3), a=np.int32(2)) == 12
    assert g(np.int32(1), np.int32(2)) == 3
    assert g.tracing_count == 2


# -- nested structures -----------------------------------------------------------


def test_nested_structures_in_and_out():
    def f(pair, table, point):
        a, b = pair
        return {"sum": a + b, "scaled": [table["w"] * point.x, point.y], "point": Point(point.y, point.x)}

    g = rt.function(f)
    args = ((np.float32(1), np.float32(2)), {"w": np.float32(3), "unused": 7}, Point(np.float32(4), np.float32(5)))
    out = g(*args)
    expected = f(*args)
    assert set(out) == {"sum", "scaled", "point"}
    assert out["sum"] == expected["sum"]
    assert isinstance(out["scaled"], list) and out["scaled"][0] == 12 and out["scaled"][1] == 5
    assert isinstance(out["point"], Point) and out["point"] == Point(5, 4)
    assert type(out["point"].x) is np.float32


def test_dict_key_order_is_part_of_the_key():
    def digits(d):
        total = 0
        for k in d:  # Python iterates in insertion order
            total = total * 10 + d[k]
        return total

    g = rt.function(digits)
    for d in ({"b": np.int32(2), "a": np.int32(1)}, {"a": np.int32(1), "b": np.int32(2)}):
        assert g(d) == digits(d)
    assert g({"b": np.int32(2), "a": np.int32(1)}) == 21 and g({"a": np.int32(1), "b": np.int32(2)}) == 12
    assert g.tracing_count == 2


def test_list_vs_tuple_structures_are_different_keys():
    g = rt.function(lambda s: s[0] + s[1])
    g([np.int32(1), np.int32(2)])
    g((np.int32(1), np.int32(2)))
    assert g.tracing_count == 2


def test_python_constants_returned_pass_through():
    g = rt.function(lambda x: (x + 1, 3, "label", None, [2.5]))
    out = g(np.int32(1))
    assert out == (2, 3, "label", None, [2.5])
    assert type(out[1]) is int and type(out[0]) is np.int32


def test_numpy_constant_returned_becomes_a_const_output():
    g = rt.function(lambda x: (x, np.arange(3)))
    out = g(np.int32(1))
    np.testing.assert_array_equal(out[1], np.arange(3))
    assert "Const" in op_types(g.get_concrete_function(np.int32(1)).graph)


def test_returning_nothing():
    g = rt.function(lambda x: None)
    assert g(np.int32(1)) is None


def test_structured_outputs_and_input_signature():
    g = rt.function(lambda x, n: {"y": x * n, "n": n})
    cf = g.get_concrete_function(rt.TensorSpec((None, 2), "float32"), 3)
    assert isinstance(cf, ConcreteFunction)
    assert isinstance(cf.structured_outputs["y"], rt.Tensor)
    assert cf.structured_outputs["y"].shape == (None, 2)
    assert cf.structured_outputs["n"] == 3
    args, kwargs = cf.structured_input_signature
    assert args[0].shape == (None, 2) and args[0].dtype == np.float32 and args[1] == 3 and kwargs == {}


# -- bad arguments ---------------------------------------------------------------


def test_missing_argument_names_function_and_argument():
    def scale(x, factor):
        return x * factor

    g = rt.function(scale)
    with pytest.raises(TypeError, match=r"scale\(x, factor\).*missing a required argument: 'factor'"):
        g(np.float32(1))


def test_too_many_and_unknown_arguments():
    def scale(x):
        return x

    g = rt.function(scale)
    with pytest.raises(TypeError, match=r"scale\(x\).*too many positional arguments"):
        g(np.float32(1), np.float32(2))
    with pytest.raises(TypeError, match=r"scale\(x\).*unexpected keyword argument 'y'"):
        g(np.float32(1), y=2)


def test_plain_objects_are_static_arguments_keyed_by_identity():
    class Opaque:
        scale = 2

    def f(x, thing):
        return x * thing.scale

    g = rt.function(f)
    a, b = Opaque(), Opaque()
    assert g(np.float32(1), a) == f(np.float32(1), a) == 2
    assert g(np.float32(3), a) == 6 and g.tracing_count == 1
    assert g(np.float32(1), b) == 2 and g.tracing_count == 2


def test_nested_unkeyable_argument_path():
    g = rt.function(lambda d: d["k"][0])
    with pytest.raises(TypeError, match=r"argument \"d\['k'\]\[1\]\".*is a bytearray, which is neither hashable "
                                        r"nor weakly referenceable"):
        g({"k": [np.int32(1), bytearray(b"ab")]})


def test_unsupported_dtypes_are_type_errors():
    g = rt.function(lambda x: x)
    with pytest.raises(TypeError, match=r"argument 'x'.*dtype complex128"):
        g(np.array([1j]))
    with pytest.raises(TypeError, match=r"argument 'x'.*dtype object"):
        g(np.array([object()]))


def _hidden_store():
    """A list the traced function reaches only through a function (not written back, so its
    tensors stay symbolic: runtime/tracing/escapes.py searches data, not other functions)."""
    box = []
    return box.append, box


def test_symbolic_tensor_of_a_finished_trace_is_rejected():
    put, leaked = _hidden_store()

    @rt.function
    def keep(x):
        put(x)
        return x

    keep(np.float32(1))
    g = rt.function(lambda x: x)
    with pytest.raises(rt.TracingError, match="finished trace"):
        g(leaked[0])


def test_returning_a_tensor_of_another_graph_is_a_tracing_error():
    put, leaked = _hidden_store()

    @rt.function
    def keep(x):
        put(x + 1)
        return x

    keep(np.float32(1))

    @rt.function
    def bad(x):
        return leaked[0]

    with pytest.raises(rt.TracingError, match="belongs to another"):
        bad(np.float32(1))


def test_returning_an_unsupported_object():
    g = rt.function(lambda x: object())
    with pytest.raises(TypeError, match="returned a object as result"):
        g(np.float32(1))


# -- input_signature -------------------------------------------------------------


def test_input_signature_accepts_any_size_for_none_dims():
    g = rt.function(lambda x: x * 2, input_signature=[rt.TensorSpec((None,), "float32")])
    np.testing.assert_array_equal(g(np.ones(3, np.float32)), [2, 2, 2])
    np.testing.assert_array_equal(g(np.ones(5, np.float32)), [2] * 5)
    assert g.tracing_count == 1
    graph = g.get_concrete_function().graph
    assert graph.inputs[0].shape == (None,)


def test_input_signature_dtype_mismatch():
    g = rt.function(lambda x: x, input_signature=[rt.TensorSpec((None,), "float32")])
    expected = r"argument 'x' has dtype float64 but expected float32\[\?\] \(input_signature\)"
    with pytest.raises(TypeError, match=expected):
        g(np.ones(3))


def test_input_signature_shape_mismatch():
    g = rt.function(lambda x: x, input_signature=[rt.TensorSpec((None, 2), "float32")])
    with pytest.raises(ValueError, match=r"argument 'x' has shape \[3\] but expected float32\[\?,2\]"):
        g(np.ones(3, np.float32))


def test_input_signature_converts_python_numbers():
    g = rt.function(lambda x, y: x + y, input_signature=[rt.TensorSpec((), "float32"), rt.TensorSpec((), "int32")])
    out = g(2, 3)
    assert type(out) is np.float64  # float32 + int32 promotes, as numpy does
    assert out == 5
    with pytest.raises(TypeError, match=r"argument 'y' = 1.5 does not match int32\[\]"):
        g(1.0, 1.5)
    assert g.tracing_count == 1


def test_input_signature_extra_argument():
    def f(x, y=None):
        return x

    g = rt.function(f, input_signature=[rt.TensorSpec((), "float32")])
    assert g(np.float32(1)) == 1
    with pytest.raises(TypeError, match="argument 'y' is not covered by input_signature"):
        g(np.float32(1), np.float32(2))


def test_input_signature_longer_than_parameters():
    with pytest.raises(TypeError, match="input_signature has 2 entries but the function takes 1"):
        rt.function(lambda x: x, input_signature=[rt.TensorSpec(()), rt.TensorSpec(())])


def test_input_signature_nested():
    spec = [(rt.TensorSpec((), "int32"), rt.TensorSpec((), "int32"))]
    g = rt.function(lambda pair: pair[0] * pair[1], input_signature=spec)
    assert g((np.int32(3), np.int32(4))) == 12
    with pytest.raises(TypeError, match="sequence of 2 values"):
        g((np.int32(3),))


def test_input_signature_must_hold_specs():
    with pytest.raises(TypeError, match="must be rt.TensorSpec"):
        rt.function(lambda x: x, input_signature=[np.float32])


# -- concrete functions ------------------------------------------------------------


def test_get_concrete_function_with_spec_serves_compatible_calls():
    g = rt.function(lambda x: x + 1)
    cf = g.get_concrete_function(rt.TensorSpec((None,), "int32"))
    assert g.tracing_count == 1
    np.testing.assert_array_equal(cf(np.arange(3, dtype=np.int32)), [1, 2, 3])
    np.testing.assert_array_equal(g(np.arange(4, dtype=np.int32)), [1, 2, 3, 4])
    assert g.tracing_count == 1  # the relaxed trace covers it


def test_concrete_function_rejects_other_signatures():
    g = rt.function(lambda x: x + 1)
    cf = g.get_concrete_function(np.float32(1))
    with pytest.raises(TypeError, match=r"traced for \(x=float32\[\]\), but got \(x=float64\[\]\)"):
        cf(np.float64(1))


def test_concrete_function_is_reused_by_calls():
    g = rt.function(lambda x: x + 1)
    cf = g.get_concrete_function(np.float32(0))
    assert g(np.float32(2)) == 3
    assert g.get_concrete_function(np.float32(5)) is cf
    assert g.tracing_count == 1


# -- retracing ---------------------------------------------------------------------


def test_retracing_warning_names_the_changed_argument():
    def f(x, n):
        return x * n

    g = rt.function(f)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(5):
            g(np.float32(1), n)
        assert not [w for w in caught if issubclass(w.category, RetracingWarning)]
        g(np.float32(1), 5)
        g(np.float32(1), 6)
    found = [w for w in caught if issubclass(w.category, RetracingWarning)]
    assert len(found) == 1
    message = str(found[0].message)
    assert "function 'f'" in message and "retraced 5 times" in message
    assert "argument 'n' changed from 4 (int) to 5 (int)" in message
    assert "np.float32" in message and "input_signature" in message
    assert found[0].filename == __file__
    assert issubclass(RetracingWarning, rt.AutoGraphWarning)


def test_retracing_warning_for_shapes():
    g = rt.function(lambda x: x)
    with pytest.warns(RetracingWarning, match=r"argument 'x' changed from float32\[5\] to float32\[6\]"):
        for size in range(1, 7):
            g(np.zeros(size, np.float32))


def test_reduce_retracing_relaxes_changing_dimensions():
    g = rt.function(lambda x: x.shape, reduce_retracing=True)
    g(np.zeros((2, 3), np.float32))
    g(np.zeros((4, 3), np.float32))
    g(np.zeros((7, 3), np.float32))
    assert g.tracing_count == 2
    cf = g.get_concrete_function(np.zeros((9, 3), np.float32))
    assert cf.graph.inputs[0].shape == (None, 3)


# -- methods -------------------------------------------------------------------------


class Scaler:
    def __init__(self, factor):
        self.factor = factor

    @rt.function
    def apply(self, x):
        return x * self.factor


def test_methods_trace_per_instance():
    a, b = Scaler(2), Scaler(3)
    assert a.apply(np.int32(5)) == 10
    assert b.apply(np.int32(5)) == 15
    assert a.apply(np.int32(6)) == 12
    assert a.apply.tracing_count == 1 and b.apply.tracing_count == 1
    assert a.apply._function is a.apply._function
    assert a.apply.python_function(np.int32(1)) == 2


def test_method_binding_errors_do_not_count_self():
    with pytest.raises(TypeError, match=r"missing a required argument: 'x'"):
        Scaler(2).apply()


def test_method_on_a_temporary_instance():
    assert Scaler(7).apply(np.int32(2)) == 14


def test_method_cache_is_released_with_the_instance():
    import gc

    s = Scaler(4)
    s.apply(np.int32(1))
    assert len(Scaler.apply._bound) >= 1
    before = len(Scaler.apply._bound)
    del s
    gc.collect()
    assert len(Scaler.apply._bound) == before - 1


# -- nesting ---------------------------------------------------------------------------


def test_nested_function_calls_are_inlined():
    @rt.function
    def inner(x):
        return x * 3

    @rt.function
    def outer(x):
        return inner(x) + 1

    assert outer(np.int32(2)) == 7
    assert inner.tracing_count == 0
    types = op_types(outer.get_concrete_function(np.int32(2)).graph)
    assert "Mul" in types and "Add" in types


def test_trace_transform_is_applied_once_and_used_for_inlining():
    calls = []

    def transform(fn):
        calls.append(fn.__name__)

        def wrapped(*args):
            return fn(*args) + 100

        return wrapped

    @rt.function(trace_transform=transform)
    def inner(x):
        return x

    @rt.function
    def outer(x):
        return inner(x)

    assert outer(np.int32(1)) == 101
    assert inner(np.int32(1)) == 101
    assert inner(np.int64(1)) == 101
    assert calls == ["inner"]


# -- variables created inside ----------------------------------------------------------


def test_variable_created_on_every_call_is_an_error_on_the_first_call():
    @rt.function
    def counter(x):
        v = rt.Variable(0)
        v.assign_add(x)
        return v.read_value()

    expected = (r"rt.Variable 'Variable' created at .*test_rt_function.py:\d+ \(`v = rt.Variable\(0\)`\) by "
                r"function 'counter' .* is created on every call.*guarded by `if self.v is None")
    with pytest.raises(rt.TracingError, match=expected):
        counter(np.int32(2))


def test_variable_created_on_the_first_call_only_is_kept():
    holder = {}

    @rt.function
    def counter(x):
        if "v" not in holder:
            holder["v"] = rt.Variable(0)
        holder["v"].assign_add(x)
        return holder["v"].read_value()

    assert counter(np.int32(2)) == 2
    assert counter(np.int32(3)) == 5  # the variable was created once and kept
    assert holder["v"].numpy() == 5
    assert counter.tracing_count == 2  # the first call traces twice: it created a variable


def test_variable_created_by_a_retrace_is_an_error():
    holder = []

    @rt.function
    def counter(x):
        if x.dtype == np.int64:
            holder.append(rt.Variable(np.int64(0)))
        return x

    assert counter(np.int32(1)) == 1
    expected = (r"rt.Variable 'Variable' created at .*test_rt_function.py:\d+ "
                r"\(`holder.append\(rt.Variable\(np.int64\(0\)\)\)`\) while retracing function 'counter'")
    with pytest.raises(rt.TracingError, match=expected):
        counter(np.int64(1))


def test_variable_initial_value_from_input_is_rejected():
    @rt.function
    def bad(x):
        return rt.Variable(x * 2).read_value()

    with pytest.raises(rt.TracingError, match="depends on the traced function's input 'x'"):
        bad(np.float32(1))


def test_variable_initial_value_from_constant_ops():
    holder = []

    @rt.function
    def make(x):
        if not holder:
            holder.append(rt.Variable(rt.zeros((3,), "float32") + 1.0))
        return holder[0].read_value() * x

    np.testing.assert_array_equal(make(np.float32(2)), [2, 2, 2])


# -- execution options --------------------------------------------------------------------


@pytest.mark.parametrize("optimize", [True, False])
def test_optimize_flag_keeps_results(optimize):
    @rt.function(optimize=optimize)
    def f(x):
        a = x * 1 + 0
        b = (2.0 * 3.0) * x
        return a + b + x * 1

    np.testing.assert_allclose(f(np.arange(4, dtype=np.float32)), np.arange(4) * 8.0)
    cf = f.get_concrete_function(np.arange(4, dtype=np.float32))
    if not optimize:
        assert cf.execution_graph is cf.graph
    else:
        assert len(cf.execution_graph.operations) <= len(cf.graph.operations)


def test_execution_error_names_the_user_line():
    @rt.function
    def f(x):
        return rt.py_function(lambda v: v[10], [x], "float32")

    with pytest.raises(IndexError) as info:  # the user's exception keeps its type; the op is a note
        f(np.zeros(3, np.float32))
    assert "PyFunc op 'py_func' created at" in info.value.__notes__[0] and "test_rt_function.py:" in info.value.__notes__[0]


def test_parallel_flag_is_accepted():
    f = rt.function(lambda x: rt.sin(x) + rt.cos(x), parallel=False)
    np.testing.assert_allclose(f(np.float32(0.5)), np.sin(np.float32(0.5)) + np.cos(np.float32(0.5)), rtol=1e-6)
    assert f.parallel is False


# -- jit_compile ------------------------------------------------------------------------------


def test_jit_compile_matches_interpreter_and_exposes_source():
    def f(x, y):
        return rt.exp(x) * 2 + rt.sqrt(rt.abs(y)) - x * y

    x = np.linspace(-1, 1, 7).astype(np.float32)
    y = np.linspace(2, 3, 7).astype(np.float32)
    jitted = rt.function(f, jit_compile=True)
    np.testing.assert_allclose(jitted(x, y), rt.function(f)(x, y), rtol=1e-6)
    source = jitted.get_concrete_function(x, y).compiled_source()
    assert source.startswith("def ") and "args" in source
    assert "def " in rt.function(f).get_concrete_function(x, y).compiled_source()


def test_jit_compile_falls_back_with_one_warning():
    @rt.function(jit_compile=True)
    def f(x):
        return rt.py_function(lambda a: a + 1, [x], "float32") * 2

    with pytest.warns(rt.AutoGraphWarning, match="could not compile"):
        assert f(np.float32(1)) == 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(np.float32(2)) == 6


def test_user_exception_inside_a_branch_keeps_its_type():
    import autograph as ag

    def boom(v):
        raise RuntimeError("user failure")

    @ag.function
    def f(x):
        if x > 0:
            x = rt.py_function(boom, [x], "float32", shape=())
        return x

    try:
        f(np.float32(1))
    except RuntimeError as e:  # not wrapped: except RuntimeError catches it
        assert not isinstance(e, rt.ExecutionError) and str(e) == "user failure"
        assert "PyFunc op" in e.__notes__[0] and "inside If op" in e.__notes__[1]
    else:
        raise AssertionError("no exception")
    assert f(np.float32(-1)) == -1


def test_options_are_one_record_shared_by_methods():
    class Model:
        @rt.function(jit_compile=False, optimize=False, max_traces=3)
        def f(self, x):
            return x + 1

    m = Model()
    assert Model.f.options == rt_options.Options(optimize=False, max_traces=3)
    assert m.f.options is Model.f.options
    with pytest.raises(TypeError, match="unknown option.*bogus; the options are: input_signature"):
        rt.function(lambda x: x, bogus=1)
