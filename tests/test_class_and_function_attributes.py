"""Attributes of the user's classes and functions changed while tracing: Python's values at every
call, never a symbolic tensor left in them.

A class attribute or a function attribute updated in a tensor loop or branch (``K.count += 1``,
``helper.calls += 1``), through a classmethod the body calls, or set from a tensor outside any
control flow, holds the concrete value after each call, and a later call starts from it.
"""

from __future__ import annotations

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from modes import MODES


def _fresh_counter():
    class Counter:
        count = 0

        @classmethod
        def bump(cls):
            cls.count += 1

    return Counter


def test_a_class_attribute_counted_in_a_tensor_loop():
    for name, options in MODES.items():
        counter = _fresh_counter()

        def count(n):
            for _ in range(n):
                counter.count += 1
            return counter.count

        f = ag.function(count, **options)
        assert f(np.int32(3)) == 3 and counter.count == 3, name
        assert f(np.int32(2)) == 5 and counter.count == 5, name
        assert not isinstance(counter.count, rt.Tensor), name


def test_a_class_attribute_changed_by_a_classmethod_in_a_tensor_loop():
    for name, options in MODES.items():
        counter = _fresh_counter()

        def bump_all(n):
            for _ in range(n):
                counter.bump()
            return counter.count

        assert ag.function(bump_all, **options)(np.int32(3)) == 3 and counter.count == 3, name


def test_a_function_attribute_counted_under_a_tensor_condition():
    for name, options in MODES.items():
        def helper():
            pass

        helper.calls = 0

        def positive(x):
            if x > 0:
                helper.calls += 1
            return x

        f = ag.function(positive, **options)
        for x, calls in ((1.0, 1), (-1.0, 1), (2.0, 2)):
            f(np.float32(x))
            assert helper.calls == calls, (name, x, helper.calls)


def test_a_tensor_stored_in_a_class_attribute_is_its_value_after_the_call():
    for name, options in MODES.items():
        holder = _fresh_counter()

        def store(x):
            holder.count = x * 2
            return x

        ag.function(store, **options)(np.float32(1.5))
        assert holder.count == 3.0 and not isinstance(holder.count, rt.Tensor), name


@pytest.mark.parametrize("n", [0, 4])
def test_python_gives_the_same_counts(n):
    counter = _fresh_counter()

    def count(n):
        for _ in range(n):
            counter.count += 1
        return counter.count

    assert ag.function(count)(np.int32(n)) == n == counter.count


def test_a_class_defined_in_an_enclosing_function_is_watched_on_first_sight(tmp_path):
    # (a fresh process: the first class a snapshot meets among the locals must be recorded too)
    import subprocess
    import sys
    import textwrap

    program = textwrap.dedent("""
        import numpy as np
        import autograph as ag

        def factory():
            class K:
                count = 0

                @classmethod
                def bump(cls):
                    cls.count += 1

            def f(n):
                for _ in range(n):
                    K.bump()
                return K.count
            return f, K

        f, K = factory()
        print(ag.function(f)(np.int32(3)), K.count)
    """)
    script = tmp_path / "factory.py"
    script.write_text(program)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["3", "3"], out
