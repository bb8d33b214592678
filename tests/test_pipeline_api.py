"""The public API: convert / to_code / do_not_convert / function."""

import gc
import weakref

import numpy as np
from modes import load_program

import autograph as ag
from autograph.runtime.operators import calls


def helper(x):
    if x > 1:
        return x - 1
    return x


def uses_helper(x):
    return helper(x) + helper(x + 1)


def test_decorator_forms():
    @ag.convert(always_converted=True)
    def a(x):
        return x and 2

    @ag.convert(recursive=False, always_converted=True)
    def b(x):
        return helper(x)

    assert a(1) == 2 and a(0) == 0
    assert b(5) == 4
    assert "converted_call" not in ag.to_code(b, recursive=False)


def test_recursive_conversion_of_callees():
    converted = ag.convert(uses_helper, always_converted=True)
    assert converted(3) == 5
    assert "ag__.converted_call(helper, x)" in ag.to_code(uses_helper)
    assert calls.cached_conversion(helper) is not None


def test_to_code_of_a_converted_function_is_the_generated_code():
    converted = ag.convert(helper, always_converted=True)
    assert ag.to_code(converted) == ag.to_code(helper)
    assert ag.to_code(helper).endswith("\n")


def test_to_code_shows_the_calls_as_converted_after_the_globals_change():
    f = load_program(
        "import numpy as np\n"
        "def helper(x):\n"
        "    return x\n"
        "def f(x):\n"
        "    return helper(x) + len(x) + np.sum(x)\n",
        tag="to-code",
    )
    converted = ag.convert(f, always_converted=True)
    f.__globals__.update(helper=len, np=None, len=helper)  # to_code redoes the conversion: not from these
    text = ag.to_code(f)
    assert "ag__.converted_call(helper, x)" in text and "ag__.len(x)" in text and "np.sum(x)" in text
    assert "converted_call(np.sum" not in text and text == ag.to_code(converted)


def test_a_dropped_conversion_frees_the_functions_its_calls_resolved_to():
    f = load_program("def helper(x):\n    return x\ndef f(x):\n    return helper(x) + f(x - 1) if x else 0\n")
    ag.convert(f, always_converted=True)(2)
    helper, f.__globals__["f"] = weakref.ref(f.__globals__["helper"]), None
    del f
    gc.collect()
    assert helper() is None


def test_do_not_convert():
    @ag.do_not_convert
    def plain(x):
        return x

    assert ag.convert(plain, always_converted=True) is plain
    assert ag.do_not_convert()(plain) is plain


def test_public_names():
    for name in ("convert", "to_code", "do_not_convert", "function", "AutoGraphError", "ConversionError",
                 "TracingError", "AutoGraphWarning"):
        assert hasattr(ag, name)
    assert issubclass(ag.ConversionError, ag.AutoGraphError)


def test_function_delegates_to_rt_function(monkeypatch):
    import importlib

    rt_function = importlib.import_module("autograph.runtime.tracing.function")

    seen = {}

    def fake(func, **options):
        seen.update(options, func=func)
        return "traced"

    monkeypatch.setattr(rt_function, "function", fake)
    assert ag.function(helper, jit_compile=True) == "traced"
    assert seen["func"] is helper and seen["jit_compile"] is True and seen["optimize"] is True
    transformed = seen["trace_transform"](helper)
    assert transformed.__wrapped__ is helper and transformed(3) == 2
    assert ag.function(autograph=False)(helper) == "traced"
    assert seen["trace_transform"] is None


def test_function_traces_converted_control_flow():
    @ag.function
    def g(x):
        if x > 0:
            y = x * 2.0
        else:
            y = -x
        return y

    assert g(np.float32(2.0)) == np.float32(4.0)
    assert g(np.float32(-3.0)) == np.float32(3.0)
    assert g.python_function(2.0) == 4.0


def test_python_loops_whose_break_flag_becomes_a_tensor_continue_in_the_graph():
    @ag.function
    def first_index(xs, target):
        i = 0
        found = -1
        while i < 5:
            if xs[i] == target:
                found = i
                break
            i += 1
        return found

    @ag.function
    def first_index_for(xs, target):
        found = -1
        for i in range(5):
            if xs[i] == target:
                found = i
                break
        return found

    xs = np.array([3, 1, 4, 1, 5], dtype=np.int32)
    for function in (first_index, first_index_for):
        assert int(function(xs, np.int32(4))) == 2
        assert int(function(xs, np.int32(1))) == 1
        assert int(function(xs, np.int32(9))) == -1


def test_unconverted_warning_points_at_the_users_line():
    import warnings

    import numpy as np

    no_source = eval("lambda x: x + 1")
    for call in (lambda: ag.convert(no_source, always_converted=True), lambda: ag.function(no_source)(np.float32(1))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        found = [w for w in caught if issubclass(w.category, ag.AutoGraphWarning)]
        assert len(found) == 1 and found[0].filename == __file__, [(w.filename, w.lineno) for w in found]
