"""Errors leaving ``ag.function`` show the user's frames; autograph's own are filtered out."""

import os
import sys
import traceback

import numpy as np
import pytest

import autograph as ag

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
