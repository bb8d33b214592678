"""ag.function(f, backend="jax"): graphs lowered to JAX and compiled by XLA (runtime/backends/jax/).

Each program runs on the numpy interpreter and on the JAX backend, and the
results (values and dtypes) must be equal; a test that could pass by falling
back to numpy checks that no fallback warning was given (``lowered``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt

jax = pytest.importorskip("jax", reason="the JAX backend needs JAX: pip install autograph[jax]")

from autograph.runtime.backends.jax import kernels as jax_kernels  # noqa: E402
from autograph.runtime.backends.jax import lowering  # noqa: E402
from autograph.runtime.backends.numpy import kernels as numpy_kernels  # noqa: E402


def lowered(fn, *args, **options):
    """``ag.function(fn, backend="jax")(*args)``, failing on any fallback warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ag.AutoGraphWarning)
        return ag.function(fn, backend="jax", **options)(*args)


def both(fn, *args, **options):
    """(numpy interpreter's result, JAX backend's result), the JAX one lowered without fallback."""
    return ag.function(fn, **options)(*args), lowered(fn, *args, **options)


def assert_same(a, b):
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
        return
    assert type(a) is type(b), (type(a), type(b))
    assert np.asarray(a).dtype == np.asarray(b).dtype
    np.testing.assert_array_equal(a, b)


def loop_with_branch(x, n):
    s = x * 0
    i = 0
    while i < n:
        if i % 3 == 0:
            s = s + x
        else:
            s = s - 1
        i += 1
    return s, i


def nested(x, n):
    total = 0.0
    for i in range(n):
        j = 0
        while j < i:
            if x > total:
                total += x * 2
            else:
                total -= 1.0
            j += 1
        if total > 100.0:
            break
    return total


@pytest.mark.parametrize("x, n", [(np.float32(2.5), np.int32(7)), (np.float64(-1.0), np.int64(4)),
                                  (np.int64(3), np.int64(10)), (np.int32(5), np.int32(0))])
def test_while_if_results_and_dtypes_equal_numpy(x, n):
    assert_same(*both(loop_with_branch, x, n))


@pytest.mark.parametrize("x, n", [(np.float32(3.0), np.int32(6)), (np.float64(0.5), np.int32(30))])
def test_nested_loops_with_break(x, n):
    assert_same(*both(nested, x, n))


def test_arrays_reductions_and_matmul():
    def f(a, b):
        c = a @ b
        if rt.reduce_sum(c) > 0:
            c = rt.maximum(c, 0.0) + rt.reduce_mean(a, axis=0)
        return rt.reduce_max(c, axis=1), rt.argmax(c, axis=0), rt.tanh(c[1:, :2])

    a = np.arange(12, dtype=np.float64).reshape(3, 4) - 4
    b = np.ones((4, 4), dtype=np.float64)
    numpy_result, jax_result = both(f, a, b)
    for x, y in zip(numpy_result, jax_result):
        assert x.dtype == y.dtype
        np.testing.assert_allclose(x, y, rtol=1e-14)


def test_shapes_read_from_values_stay_static_and_int_sums_accumulate_as_numpy():
    def f(x):
        n = rt.shape(x)[0]
        z = rt.zeros((n, 2), "int32") + 2**30
        return rt.reduce_sum(z), rt.reshape(x, (n, 1)), round(x[0] * 1.5)

    assert_same(*both(f, np.arange(5, dtype=np.float64)))


def test_integer_division_by_zero_is_numpy_s_zero():
    def f(a, b):
        return a // b, a % b

    with np.errstate(divide="ignore"):
        assert_same(*both(f, np.array([7, -7, 3], np.int32), np.array([0, 2, 0], np.int32)))


def test_maximum_iterations_is_a_counter():
    def f(x):
        return rt.while_loop(lambda v: v < 1000, lambda v: v * 2, (x,), maximum_iterations=5)

    assert_same(*both(f, np.int64(1)))


def test_a_condition_with_effects_runs_as_the_interpreter_runs_it(capsys):
    def cond(v):
        rt.print("test", v)
        return v < 1000

    def f(x):
        return rt.while_loop(cond, lambda v: v * 2, (x,), maximum_iterations=4)

    expected = ag.function(f)(np.int64(1))
    printed = capsys.readouterr().out
    assert printed.splitlines() == ["test 1", "test 2", "test 4", "test 8"]  # not after the 4th iteration
    assert_same(expected, lowered(f, np.int64(1)))
    assert capsys.readouterr().out == printed


def test_variables_are_state_written_back():
    v = rt.Variable(np.zeros(3, np.float64))
    w = rt.Variable(np.int32(0))

    def f(x, n):
        for i in range(n):
            v.assign_add(x * 2)
            if i % 2 == 0:
                w.assign_add(1)
        return v.read_value() + 1

    fn = ag.function(f, backend="jax")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ag.AutoGraphWarning)
        first = fn(np.ones(3), np.int32(3))
        second = fn(np.ones(3), np.int32(3))
    np.testing.assert_array_equal(first, [7.0, 7.0, 7.0])
    np.testing.assert_array_equal(second, [13.0, 13.0, 13.0])
    np.testing.assert_array_equal(v.numpy(), [12.0, 12.0, 12.0])
    assert w.numpy() == 4 and w.numpy().dtype == np.int32
    second[0] = -1.0  # a returned array is the caller's
    np.testing.assert_array_equal(v.numpy(), [12.0, 12.0, 12.0])


def test_two_backends_side_by_side():
    def f(x):
        return x * 2 + 1

    on_numpy, on_jax = ag.function(f), ag.function(f, backend="jax")
    x = np.arange(4.0)
    assert_same(on_numpy(x), on_jax(x))
    assert_same(on_numpy(x), ag.function(f)(x))


def test_print_runs_in_program_order_inside_loops(capsys):
    def f(n):
        i = 0
        while i < n:
            rt.print("step", i)
            if i % 2 == 1:
                rt.print("odd", i * 10)
            i += 1
        rt.print("done", i)
        return i

    ag.function(f)(np.int32(4))
    expected = capsys.readouterr().out
    lowered(f, np.int32(4))
    assert capsys.readouterr().out == expected
    assert expected.splitlines()[:3] == ["step 0", "step 1", "odd 10"]


def test_py_function_through_a_host_callback(capsys):
    calls = []

    def host(a):
        calls.append(int(a))
        return np.float32(a) * 1.5

    def f(n):
        total = np.float32(0.0)
        for i in range(n):
            total += rt.py_function(host, [i], rt.float32, shape=())
            rt.print("total", total)
        return total

    expected = ag.function(f)(np.int32(3))
    out_numpy = capsys.readouterr().out
    assert calls == [0, 1, 2]
    calls.clear()
    assert_same(expected, lowered(f, np.int32(3)))
    assert calls == [0, 1, 2]
    assert capsys.readouterr().out == out_numpy


def test_py_function_error_keeps_its_type():
    def host(a):
        raise KeyError(f"no entry {int(a)}")

    def f(x):
        return rt.py_function(host, [x], rt.float32, shape=())

    with pytest.raises(KeyError, match="no entry 3"):
        lowered(f, np.int32(3))


def test_random_ops_are_reproducible_per_seed_with_the_right_statistics():
    def f():
        return rt.random.uniform((20000,), seed=7), rt.random.normal((20000,), seed=8, dtype="float64")

    a = ag.function(f, backend="jax")
    u1, n1 = a()
    u2, n2 = a()
    assert u1.dtype == np.float32 and n1.dtype == np.float64 and u1.shape == (20000,)
    assert not np.array_equal(u1, u2)  # a stream goes on from call to call
    assert 0.0 <= u1.min() and u1.max() < 1.0
    assert abs(u1.mean() - 0.5) < 0.02 and abs(u1.std() - (1 / 12) ** 0.5) < 0.02
    assert abs(n1.mean()) < 0.05 and abs(n1.std() - 1.0) < 0.05
    rt.random.set_seed(5)
    b = ag.function(f, backend="jax")
    rt.random.set_seed(5)
    c = ag.function(f, backend="jax")
    for x, y in zip(b(), c()):  # the same seeds: the same sequence
        np.testing.assert_array_equal(x, y)


def test_an_unlowerable_op_falls_back_to_numpy_with_one_warning():
    def f(x, i):
        x[i] = 7.5
        return x * 2

    fn = ag.function(f, backend="jax")
    x = np.arange(4, dtype=np.int32)
    with pytest.warns(ag.AutoGraphWarning, match=r"backend='jax' cannot run the graph \(SetItem op .* created at "
                                                 r".*test_jax_backend.py:\d+ cannot be lowered to JAX: item "):
        assert_same(fn(x, np.int32(1)), ag.function(f)(x, np.int32(1)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same(fn(x, np.int32(2)), ag.function(f)(x, np.int32(2)))


def interpreter_error(fn, *args):
    """What the numpy interpreter raises for ``fn(*args)`` (the test then expects the same from JAX)."""
    try:
        ag.function(fn)(*args)
    except Exception as error:  # noqa: BLE001 - any type: it is compared with JAX's
        return error
    pytest.fail("the interpreter raised nothing")


def test_a_failing_assert_raises_the_interpreter_s_error_after_the_call():
    def f(x):
        assert x > 0, "x must be positive"
        return x + 1

    assert_same(*both(f, np.int32(2)))
    expected = interpreter_error(f, np.int32(-1))
    with pytest.raises(AssertionError, match="x must be positive") as info:
        lowered(f, np.int32(-1))
    ours = [n for n in info.value.__notes__ if "AUTOGRAPH_TRACEBACK_FILTERING" not in n]  # (frames hidden: differ)
    assert str(info.value) == str(expected) and ours == expected.__notes__[:len(ours)] and ours


def test_an_index_out_of_range_raises_where_numpy_does():
    def f(v, i):
        total = v[0] * 0
        j = 0
        while j < i:
            total += v[j]
            j += 1
        return total, v[i - 1]

    v = np.array([1.0, 2.0, 3.0], np.float32)
    assert_same(*both(f, v, np.int32(3)))
    assert_same(*both(f, v, np.int32(-1)))
    expected = interpreter_error(f, v, np.int32(5))
    with pytest.raises(type(expected)) as info:
        lowered(f, v, np.int32(5))
    assert str(info.value) == str(expected)
    assert "index 3 is out of bounds for axis 0 with size 3" in str(expected)


def test_nothing_happens_after_a_failed_check(capsys):
    counter = rt.Variable(np.int64(0))

    def f(v, n):
        for j in range(n):
            rt.print("step", j)
            counter.assign_add(1)
            if v[j] > 100.0:
                counter.assign_add(10)
        rt.print("after")
        return counter.read_value()

    v = np.array([1.0, 200.0, 3.0], np.float64)
    fn = ag.function(f, backend="jax")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ag.AutoGraphWarning)
        assert fn(v, np.int32(3)) == 13
        with pytest.raises(IndexError, match="out of bounds for axis 0 with size 3"):
            fn(v, np.int32(5))
    jax_out = capsys.readouterr().out
    assert counter.numpy() == 13 + 14  # steps 0..3 counted (and the 200 once), then v[3] failed
    counter.assign(0)
    ag.function(f)(v, np.int32(3))
    with pytest.raises(IndexError):
        ag.function(f)(v, np.int32(5))
    assert capsys.readouterr().out == jax_out
    assert counter.numpy() == 27


def test_item_assignment_of_the_array_s_dtype_is_lowered_and_bounds_checked():
    def f(x, i):
        x[i] = x[0] * 3
        x[1:3] += x[i]
        return x

    x = np.arange(5, dtype=np.int32)
    for i in (np.int32(4), np.int32(-5)):
        assert_same(*both(f, x, i))
    expected = interpreter_error(f, x, np.int32(5))
    with pytest.raises(type(expected)) as info:
        lowered(f, x, np.int32(5))
    assert str(info.value) == str(expected)


def test_int_of_nan_and_integer_powers_are_checked():
    def f(x, p):
        return int(x), np.int64(2) ** p

    assert_same(*both(f, np.float64(3.7), np.int64(3)))
    for args in [(np.float64("nan"), np.int64(3)), (np.float64(2.0), np.int64(-1))]:
        expected = interpreter_error(f, *args)
        with pytest.raises(type(expected)) as info:
            lowered(f, *args)
        assert str(info.value) == str(expected)


def test_a_loop_variable_changing_shape_falls_back_when_traced():
    def f(n):
        x = rt.zeros((1,), "int32")
        for i in range(n):
            x = rt.concat([x, x], axis=0)
        return x

    fn = ag.function(f, backend="jax")
    with pytest.warns(ag.AutoGraphWarning, match="backend='jax' cannot"):
        result = fn(np.int32(3))
    assert_same(result, ag.function(f)(np.int32(3)))


def test_jit_compile_takes_booleans_only():
    with pytest.raises(TypeError, match=r"jit_compile must be True or False, got 'xla' \(XLA compilation is "
                                        r"backend='jax'\)"):
        ag.function(lambda x: x, jit_compile="xla")
    with pytest.raises(TypeError, match="jit_compile must be True or False, got 1$"):
        ag.function(lambda x: x, jit_compile=1)


def test_an_unknown_backend_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown backend 'tpu': the backends are 'jax', 'numpy'"):
        ag.function(lambda x: x, backend="tpu")


def test_without_jax_the_error_names_the_extra():
    code = textwrap.dedent("""
        import sys
        sys.modules["jax"] = None  # import jax raises ImportError
        import autograph as ag
        try:
            ag.function(lambda x: x, backend="jax")
        except ag.AutoGraphError as e:
            print(e)
        print(ag.function(lambda x: x + 1)(1.5))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "backend='jax' needs JAX" in out.stdout and "pip install autograph[jax]" in out.stdout
    assert out.stdout.strip().endswith("2.5")


def test_jax_is_imported_only_when_the_backend_is_used():
    code = ("import sys, numpy as np, autograph as ag\n"
            "from autograph import runtime as rt\n"
            "ag.function(lambda x: x * 2)(np.float32(1.0))\n"
            "print('jax' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_every_numpy_op_type_has_a_jax_kernel_rule_or_a_reason():
    lowerable = set(jax_kernels.KERNELS) | set(lowering.RULES)
    missing = sorted(t for t in set(numpy_kernels.KERNELS) - lowerable - set(jax_kernels.UNLOWERABLE)
                     if not t.startswith("Test"))  # (op types other tests register)
    assert not missing, f"op types with neither a JAX kernel nor a reason in UNLOWERABLE: {missing}"
    assert not set(jax_kernels.UNLOWERABLE) & lowerable


def test_jax_function_refuses_graphs_with_state_or_checks():
    from autograph.runtime.backends.jax import jax_function
    from autograph.runtime.backends.jax.errors import Unlowerable

    v = rt.Variable(1.0)

    def reads(x):
        return x + v.read_value()

    def indexes(x, i):
        return x[i]

    graph = ag.function(reads).get_concrete_function(np.float32(1)).execution_graph
    with pytest.raises(Unlowerable, match="reads or changes state .* run it through ag.function"):
        jax_function(graph)
    graph = ag.function(indexes).get_concrete_function(np.zeros(3), np.int32(1)).execution_graph
    with pytest.raises(Unlowerable, match=r"CheckIndex op .* cannot be lowered to JAX: it raises for some values"):
        jax_function(graph)


SHARDED = textwrap.dedent("""
    import os
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
    import jax, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import autograph as ag
    from autograph import runtime as rt
    from autograph.runtime.backends.jax import jax_function

    def step(x, n):
        i = 0
        while i < n:
            x = rt.tanh(x) * 2.0
            i += 1
        return rt.reduce_sum(x * x, axis=1)

    assert len(jax.devices()) == 4, jax.devices()
    fn = ag.function(step, backend="jax")
    x = np.linspace(-1, 1, 8 * 16, dtype=np.float32).reshape(8, 16)
    cf = fn.get_concrete_function(rt.TensorSpec((8, 16), "float32"), rt.TensorSpec((), "int32"))
    lowered = jax_function(cf.execution_graph)
    mesh = Mesh(np.array(jax.devices()), ("data",))
    with jax.enable_x64(True):
        xs = jax.device_put(x, NamedSharding(mesh, P("data", None)))
        out = jax.jit(lowered)(xs, np.int32(3))
    print(len(xs.sharding.device_set), len(out.sharding.device_set))
    np.testing.assert_allclose(np.asarray(out), ag.function(step)(x, np.int32(3)), rtol=1e-6)
    print("ok")
""")


def test_data_parallel_on_four_host_devices(tmp_path):
    script = tmp_path / "sharded.py"  # a file: autograph converts functions from their source
    script.write_text(SHARDED)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["4", "4", "ok"]


def test_without_jax_ag_jax_names_the_extra():
    code = textwrap.dedent("""
        import sys
        sys.modules["jax"] = None  # import jax raises ImportError
        import autograph as ag
        try:
            ag.jax.jit(lambda x: x)
        except ag.AutoGraphError as e:
            print(e)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "ag.jax needs JAX" in out.stdout and "pip install autograph[jax]" in out.stdout


def _reads_in_its_condition(n, v):
    c, s = 0, 0
    while c < n and v[n % 4] != v[s % max(len(v), 1)]:
        s = 1
        c += 1
    return s


def test_an_index_out_of_range_in_a_loop_condition_raises_where_numpy_does():
    # fuzz seed 9219900: the check's failure, recorded while the condition ran, was dropped
    g = ag.function(_reads_in_its_condition, backend="jax")
    with pytest.raises(IndexError, match="out of bounds"):
        g(np.int32(3), np.array([2.0], np.float32))
    assert g(np.int32(3), np.array([2.0, 1.0, 3.0, 4.0], np.float32)) == _reads_in_its_condition(
        np.int32(3), np.array([2.0, 1.0, 3.0, 4.0], np.float32))
