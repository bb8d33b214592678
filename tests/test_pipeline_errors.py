"""Every error path of the pipeline, with its message."""

import linecache
import warnings

import pytest

import autograph as ag
import autograph.runtime.operators as ops

_counter = 0


def _define(source):
    """Defines the function in `source` in a fresh file registered in linecache."""
    global _counter
    _counter += 1
    filename = f"<errors-{_counter}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["f"], filename


@pytest.mark.parametrize(
    "source, construct, line",
    [
        ("def f(x):\n    for i in x:\n        yield i\n", r"'yield' \(a generator function\)", 3),
        ("def f(x):\n    yield from x\n", r"'yield' \(a generator function\)", 2),
        ("async def f(x):\n    return x\n", r"'async def'", 1),
        ("G = 0\ndef f(x):\n    global G\n    G = x\n", r"'global G' \(rebinding a module global\)", 3),
        (
            "def f(x):\n    for i in x:\n        try:\n            pass\n        finally:\n            break\n",
            r"'break' inside a 'finally' block",
            6,
        ),
        (
            "def f(x):\n    try:\n        pass\n    finally:\n        return x\n",
            r"'return' inside a 'finally' block",
            5,
        ),
        ("def f(x):\n    ag__ = x\n    return ag__\n", r"the name 'ag__'", 2),
    ],
)
@pytest.mark.parametrize("entry", ["convert", "to_code"])
def test_unsupported_constructs(source, construct, line, entry):
    f, filename = _define(source)
    pattern = rf"{construct} is not supported in converted code: found in function 'f' at {filename}:{line}\. "
    with pytest.raises(ag.ConversionError, match=pattern):
        if entry == "convert":
            ag.convert(f, always_converted=True)
        else:
            ag.to_code(f)


def test_conversion_error_messages_say_how_to_fix():
    f, _ = _define("def f(x):\n    yield x\n")
    with pytest.raises(ag.ConversionError, match="mark the function with @ag.do_not_convert"):
        ag.convert(f, always_converted=True)


def test_unconvertible_callee_warns_and_runs_as_is():
    helper, _ = _define("C = []\ndef f(x):\n    global C\n    C = C + [x]\n    return len(C)\n")

    def caller(x):
        return helper(x)

    with pytest.warns(ag.AutoGraphWarning, match=r"'global C'.*It runs unconverted"):
        assert ag.convert(caller, always_converted=True)(5) == 1


def test_to_code_rejects_non_functions_and_unavailable_source():
    with pytest.raises(TypeError, match="to_code expects a Python function, got int"):
        ag.to_code(3)
    namespace = {}
    exec(compile("def f(x):\n    return x\n", "<no-source>", "exec"), namespace)
    with pytest.raises(ag.ConversionError, match="cannot show the code of 'f': no source is available"):
        ag.to_code(namespace["f"])


def test_convert_a_class_warns_and_returns_it():
    class K:
        pass

    with pytest.warns(ag.AutoGraphWarning, match="could not convert '.*K' and will run it as is: it is a type"):
        assert ag.convert(K, always_converted=True) is K


def test_variable_undefined_on_some_path_names_the_variable_and_line():
    f, filename = _define(
        "def f(c):\n"
        "    if c:\n"
        "        y = 1\n"
        "    return y + 1\n"
    )
    converted = ag.convert(f, always_converted=True)
    assert converted(True) == 2
    with pytest.raises(UnboundLocalError, match=rf"local variable 'y' is not defined on every path .* at {filename}:4"):
        converted(False)


def test_returning_a_possibly_undefined_variable_raises():
    f, filename = _define(
        "def f(c):\n"
        "    for i in range(c):\n"
        "        last = i\n"
        "    return last\n"
    )
    converted = ag.convert(f, always_converted=True)
    assert converted(3) == 2
    with pytest.raises(UnboundLocalError, match="local variable 'last' is not defined on every path"):
        converted(0)
    with pytest.raises(UnboundLocalError):
        f(0)


def test_undefined_in_a_loop_condition():
    f, _ = _define(
        "def f(n):\n"
        "    i = 0\n"
        "    while i < n:\n"
        "        if i == 2:\n"
        "            found = i\n"
        "        i += 1\n"
        "    return found\n"
    )
    assert ag.convert(f, always_converted=True)(5) == 2
    with pytest.raises(UnboundLocalError, match="'found'"):
        ag.convert(f, always_converted=True)(1)


def test_operator_misuse_is_a_clear_python_error():
    with pytest.raises(AssertionError, match="must be positive"):
        ops.assert_(False, lambda: "must be positive")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ops.converted_call(abs, -1) == 1
