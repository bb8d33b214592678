"""Loading and binding: converted functions see the original's globals, closure and metadata."""

import functools
import linecache
import traceback
import warnings

import pytest

import autograph as ag

COUNTER = 0
SCALE = 2


def scaled(x):
    if x > 0:
        return x * SCALE
    return 0


def test_live_globals_are_read_at_call_time():
    global SCALE
    converted = ag.convert(scaled, always_converted=True)
    assert converted(3) == 6
    SCALE = 5
    try:
        assert converted(3) == 15
    finally:
        SCALE = 2


def bump_counter(n):
    for _ in range(n):
        helper_bump()
    return COUNTER


def helper_bump():
    global COUNTER
    COUNTER += 1


def test_global_writes_by_called_unconverted_functions_are_seen():
    global COUNTER
    COUNTER = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ag.AutoGraphWarning)  # helper_bump uses `global`: runs unconverted
        assert ag.convert(bump_counter, always_converted=True)(3) == 3
    assert COUNTER == 3


def test_closures_share_cells_both_ways():
    total = 0

    def add(values):
        nonlocal total
        for v in values:
            if v > 0:
                total += v
        return total

    converted = ag.convert(add, always_converted=True)
    assert converted([1, -2, 3]) == 4
    assert total == 4
    total = 10
    assert converted([1]) == 11


def test_closure_over_a_loop_variable_of_the_enclosing_function():
    def make(k):
        def f(x):
            while x < k:
                x += 1
            return x

        return f

    assert ag.convert(make(5), always_converted=True)(1) == 5
    assert ag.convert(make(7), always_converted=True)(1) == 7


def test_signature_metadata_is_kept():
    def f(a, b=2, *args, c, d=4, **kwargs) -> int:
        """Docs."""
        if a:
            return a + b + c + d + len(args) + len(kwargs)
        return 0

    converted = ag.convert(f, always_converted=True)
    assert converted(1, c=3) == 10
    assert converted(1, 1, 9, 9, c=0, d=0, e=1) == 5
    assert converted.__name__ == "f" and converted.__qualname__ == f.__qualname__
    assert converted.__doc__ == "Docs." and converted.__defaults__ == (2,)
    assert converted.__kwdefaults__ == {"d": 4} and converted.__annotations__ == {"return": int}
    assert converted.__wrapped__ is f and converted.__module__ == __name__


class Accumulator:
    def __init__(self):
        self.total = 0
        self.history = []

    def add_all(self, values):
        for v in values:
            if v % 2:
                continue
            self.total += v
            self.history.append(self.total)
        return self.total

    @ag.convert(always_converted=True)
    def decorated(self, n):
        while self.total < n:
            self.total += 3
        return self.total

    @staticmethod
    def static(x):
        return -x if x < 0 else x


class Child(Accumulator):
    def add_all(self, values):
        if values:
            return super().add_all(values) * 10
        return -1


def test_bound_and_unbound_methods():
    acc = Accumulator()
    bound = ag.convert(acc.add_all, always_converted=True)
    assert bound.__self__ is acc
    assert bound([1, 2, 3, 4]) == 6 and acc.total == 6 and acc.history == [2, 6]
    other = Accumulator()
    assert ag.convert(Accumulator.add_all, always_converted=True)(other, [10]) == 10


def test_decorated_method_works_as_a_method():
    acc = Accumulator()
    assert acc.decorated(7) == 9
    assert "ag__.while_stmt" in ag.to_code(Accumulator.decorated)


def test_super_in_converted_method():
    child = Child()
    assert ag.convert(child.add_all, always_converted=True)([2, 4]) == 60
    assert ag.convert(child.add_all, always_converted=True)([]) == -1


def test_staticmethod_object():
    converted = ag.convert(Accumulator.__dict__["static"], always_converted=True)
    assert isinstance(converted, staticmethod)
    assert converted.__func__(-3) == 3


def logged(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*args, **kwargs)

    return wrapper


@logged
def decorated_sum(n):
    s = 0
    for i in range(n):
        s += i
    return s


def test_decorated_function_converts_the_wrapper_and_the_wrapped_function():
    converted = ag.convert(decorated_sum, always_converted=True)
    assert converted(5) == 10
    assert "converted_call(function" in ag.to_code(decorated_sum)


def test_recursion():
    def fact(n):
        if n <= 1:
            return 1
        return n * fact(n - 1)

    assert ag.convert(fact, always_converted=True)(6) == 720


def test_lambda_with_recoverable_source():
    f = lambda x: x if x > 0 else -x  # noqa: E731
    converted = ag.convert(f, always_converted=True)
    assert converted(-3) == 3
    assert ag.to_code(f).startswith("lambda x: ag__.if_exp(x > 0")


def test_lambdas_differing_in_parameters_on_one_line():
    f, g = (lambda x: x and 1), (lambda y, z: y or z)  # noqa: E731
    assert ag.convert(f, always_converted=True)(0) == 0 and ag.convert(g, always_converted=True)(0, 2) == 2


def test_two_indistinguishable_lambdas_on_one_line_warn_and_run_unconverted():
    f, g = (lambda x: x + 1), (lambda x: x + 2)  # noqa: E731
    assert g(1) == 3
    with pytest.warns(ag.AutoGraphWarning, match=r"2 lambdas with the same parameters are on line .*test_pipeline_loading\.py:\d+"):
        converted = ag.convert(f, always_converted=True)
    assert converted is f and converted(1) == 2


def _exec_source(source, filename):
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def test_functions_defined_in_exec_code_registered_in_linecache():
    namespace = _exec_source(
        "def f(n):\n"
        "    out = []\n"
        "    for i in range(n):\n"
        "        if i % 2:\n"
        "            out.append(i)\n"
        "    return out\n",
        "<exec-test-1>",
    )
    assert ag.convert(namespace["f"], always_converted=True)(6) == [1, 3, 5]


def test_source_unavailable_warns_once_and_runs_the_original():
    namespace = {}
    exec(compile("def f(x):\n    return x + 1\n", "<nowhere>", "exec"), namespace)
    with pytest.warns(ag.AutoGraphWarning, match="could not convert 'f' and will run it as is: no source"):
        converted = ag.convert(namespace["f"], always_converted=True)
    assert converted is namespace["f"] and converted(1) == 2


def test_builtins_are_returned_with_a_warning():
    with pytest.warns(ag.AutoGraphWarning, match="could not convert 'len'"):
        assert ag.convert(len, always_converted=True) is len


def test_tracebacks_show_the_users_lines():
    def f(x):
        if x > 0:
            y = 1 / (x - x)
        else:
            y = 0
        return y

    converted = ag.convert(f, always_converted=True)
    with pytest.raises(ZeroDivisionError) as info:
        converted(1)
    frames = traceback.extract_tb(info.value.__traceback__)
    user_frames = [fr for fr in frames if fr.filename == __file__]
    assert user_frames[-1].line == "y = 1 / (x - x)"
    assert user_frames[-1].lineno == f.__code__.co_firstlineno + 2


def test_conversion_is_cached_per_code_object_and_options():
    from autograph import api

    def f(x):
        return x and 1

    first = api._conversion(f, api.context.Options())
    assert api._conversion(f, api.context.Options()) is first
    assert api._conversion(f, api.context.Options(recursive=False)) is not first
    converted = ag.convert(f, always_converted=True)
    assert ag.convert(converted, always_converted=True) is converted


def test_the_same_function_in_two_files_keeps_its_own_file(tmp_path):
    # Code objects compare equal across files: the conversion cache must not mix them up.
    source = "def same(x):\n    if x > 0:\n        return 1 // (x - x)\n    return 0\n"
    functions = []
    for name in ("first.py", "second.py"):
        path = tmp_path / name
        path.write_text(source)
        namespace = {}
        exec(compile(source, str(path), "exec"), namespace)
        functions.append(namespace["same"])
    assert functions[0].__code__ == functions[1].__code__
    for fn, name in zip(functions, ("first.py", "second.py")):
        converted = ag.convert(fn, always_converted=True)
        assert converted.__code__.co_filename == str(tmp_path / name)
        with pytest.raises(ZeroDivisionError) as info:
            converted(1)
        assert traceback.extract_tb(info.value.__traceback__)[-1].filename == str(tmp_path / name)


def test_a_module_edited_and_reloaded_converts_its_new_source(tmp_path, monkeypatch):
    # linecache still holds the first version; the converted function must be the new one's
    import importlib
    import sys

    import numpy as np

    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "edited_module.py"
    path.write_text("def f(x):\n    if x > 0:\n        return x + 1\n    return x\n")
    module = importlib.import_module("edited_module")
    try:
        assert ag.function(module.f)(np.int32(1)) == 2
        path.write_text("def f(x):\n    if x > 0:\n        return x + 100\n    return x\n")
        module = importlib.reload(module)
        assert module.f(np.int32(1)) == 101
        assert ag.function(module.f)(np.int32(1)) == 101
        assert "x + 100" in ag.to_code(module.f)
    finally:
        sys.modules.pop("edited_module", None)


def test_nested_function_defined_in_converted_code_runs_directly():
    def outer(xs):
        def keep(x):
            if x > 1:
                return True
            return False

        return [x for x in xs if keep(x)]

    converted = ag.convert(outer, always_converted=True)
    assert converted([0, 2, 3]) == [2, 3]


def test_future_annotations_of_the_original_module_are_kept():
    namespace = _exec_source(
        "from __future__ import annotations\n"
        "def f(n):\n"
        "    def g(x: NotDefinedAnywhere) -> int:\n"
        "        return x + 1\n"
        "    total = 0\n"
        "    for i in range(n):\n"
        "        if i % 2:\n"
        "            total += g(i)\n"
        "    return total\n",
        "<exec-future>",
    )
    assert ag.convert(namespace["f"], always_converted=True)(5) == 6
