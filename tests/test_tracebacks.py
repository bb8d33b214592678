"""Errors leaving ``ag.function`` show the user's frames; autograph's own are filtered out."""

import inspect
import os
import sys
import traceback

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt

LIBRARY = os.path.dirname(os.path.dirname(os.path.abspath(ag.__file__)))


def failing(x):
    if x > 0:
        y = x + missing_name  # noqa: F821 - the user's bug
    else:
        y = x
    return y


def _frames(error):
    return [frame.filename for frame in traceback.extract_tb(error.__traceback__)]


def _library_frames(error):
    own = [os.path.join(LIBRARY, d) + os.sep for d in ("autograph", "runtime", "converters")]
    return [f for f in _frames(error) if any(os.path.abspath(f).startswith(d) for d in own)]


def test_traced_error_shows_the_users_frames_only():
    with pytest.raises(NameError, match="missing_name") as info:
        ag.function(failing)(np.float32(1.0))
    assert __file__ in _frames(info.value)
    # Python 3.11+ re-raises without the call boundary's frame; 3.10 keeps that one frame.
    assert len(_library_frames(info.value)) == (0 if sys.version_info >= (3, 11) else 1)
    if hasattr(BaseException, "add_note"):  # PEP 678, Python 3.11+
        assert any("AUTOGRAPH_TRACEBACK_FILTERING=off" in note for note in info.value.__notes__)


def test_filtering_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("AUTOGRAPH_TRACEBACK_FILTERING", "off")
    with pytest.raises(NameError) as info:
        ag.function(failing)(np.float32(1.0))
    assert len(_library_frames(info.value)) > 3


def test_tracing_errors_keep_their_type_and_message():
    def undefined_in_branch(x):
        if x > 0:
            y = x
        return y  # noqa: F821

    with pytest.raises(ag.TracingError, match="'y' must be defined in both branches") as info:
        ag.function(undefined_in_branch)(np.float32(1.0))
    assert __file__ in _frames(info.value)


# -- errors raised while a graph runs: the user's lines, in every execution mode ------------

MODES = {"interpreter": {}, "unoptimized": {"optimize": False}, "jit": {"jit_compile": True}}
SIGNATURE = [rt.TensorSpec((None,), "float32"), rt.TensorSpec((), "int32")]


def reshaped_in_loop(x, n):
    i = 0
    while i < n:
        x = rt.reshape(x, (3, 2))  # fails when the graph runs: 5 elements
        i += 1
    return x


def _lines(error):
    return [(frame.filename, frame.lineno) for frame in traceback.extract_tb(error.__traceback__)]


def _line_of(fn, text):
    source, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(source) if text in line)


@pytest.mark.parametrize("mode", MODES)
def test_an_execution_error_shows_the_lines_of_the_failing_op_and_its_loop(mode):
    fn = ag.function(reshaped_in_loop, input_signature=SIGNATURE, **MODES[mode])
    with pytest.raises(ag.ExecutionError, match="Reshape op") as info:
        fn(np.zeros(5, np.float32), np.int32(2))
    error = info.value
    reshape = (__file__, _line_of(reshaped_in_loop, "rt.reshape"))
    loop = (__file__, _line_of(reshaped_in_loop, "while i < n"))
    lines = _lines(error)
    assert lines[-1] == reshape  # the innermost frame: the failing op's line
    if mode != "jit":  # (jit compiles the loop inline: its op is the one line known)
        assert lines[-2] == loop
    assert len(_library_frames(error)) == (0 if sys.version_info >= (3, 11) else 1)
    assert not [f for f in _frames(error) if f.startswith("<autograph-")]  # nor generated code
    # the kernel's own exception, with its own frames, for debugging
    assert isinstance(error.__cause__, ValueError) and error.original is error.__cause__
    assert "cannot reshape" in str(error.__cause__) and error.__cause__.__traceback__ is not None


def failing_helper(v):
    return {}["missing"] if v > 0 else v


def py_function_in_loop(x, n):
    i = 0
    while i < n:
        x = rt.py_function(failing_helper, [x], "float32", shape=())
        i += 1
    return x


@pytest.mark.parametrize("mode", MODES)
def test_the_users_own_exception_shows_the_op_then_the_users_function(mode):
    fn = ag.function(py_function_in_loop, **MODES[mode])
    with pytest.raises(KeyError, match="missing") as info:
        fn(np.float32(1.0), np.int32(2))
    lines = _lines(info.value)
    call = (__file__, _line_of(py_function_in_loop, "rt.py_function"))
    assert lines[-1] == (__file__, _line_of(failing_helper, "missing"))  # where it was raised
    assert lines[-2] == call
    assert len(_library_frames(info.value)) == (0 if sys.version_info >= (3, 11) else 1)


def test_full_frames_when_filtering_is_off(monkeypatch):
    monkeypatch.setenv("AUTOGRAPH_TRACEBACK_FILTERING", "off")
    fn = ag.function(reshaped_in_loop, input_signature=SIGNATURE)
    with pytest.raises(ag.ExecutionError) as info:
        fn(np.zeros(5, np.float32), np.int32(2))
    assert len(_library_frames(info.value)) > 3
    assert (__file__, _line_of(reshaped_in_loop, "rt.reshape")) not in _lines(info.value)  # the real frames only
    assert isinstance(info.value.__cause__, ag.ExecutionError)  # the inner op's error, as raised


def overflowing_offset(px, n):
    offset = 0
    for _ in range(n):
        offset += 100
    return px + offset


@pytest.mark.parametrize("mode", MODES)
def test_a_check_standing_for_pythons_exception_raises_it_at_the_users_line(mode):
    with pytest.raises(OverflowError, match="out of uint8's bounds") as info:
        ag.function(overflowing_offset, **MODES[mode])(np.array([1, 2], np.uint8), np.int32(3))
    assert _lines(info.value)[-1] == (__file__, _line_of(overflowing_offset, "px + offset"))
    assert len(_library_frames(info.value)) == (0 if sys.version_info >= (3, 11) else 1)
