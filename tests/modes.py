"""Run a function in every mode and compare with Python: the one helper of the differential tests.

Public API only.  A case is a plain Python function.  ``check(f, *args)`` runs it

* unconverted, on the given Python/numpy values: the expected result;
* through ``ag.convert`` on the same values: must be identical;
* through ``ag.function`` in the three execution modes (optimized graph,
  graph as traced, ``jit_compile=True``), where array and numpy-scalar
  arguments become symbolic tensors: must match the expected result.

"Match" (``assert_same``) is exact: the same nesting (dict keys, tuple vs
list, lengths), equal values, equal shapes, and -- when the expected leaf is
a numpy value -- the same dtype.  A Python number expected from the plain
function may come back as a numpy scalar of the same kind (bool / integer /
floating), since a traced graph returns numpy values.

``load_program`` execs a generated program's source under a fake file
registered in ``linecache`` (so ``ag.convert`` can read it back), for the
suites that compare converted and original code on Python values.

``check_raises`` expects an exception (``ag.TracingError`` by default) in
every mode, with a message matching a regex (``check_python_error``: and
plain Python raises its type too); ``check_value_or_error``
accepts either the right value or an ``ag.TracingError`` naming a given
variable, but never a wrong value.
"""

from __future__ import annotations

import copy
import itertools
import linecache
import re

import numpy as np
import pytest

import autograph as ag

MODES = {
    "interpreter": {},
    "unoptimized": {"optimize": False},
    "jit": {"jit_compile": True},
}


_PROGRAM_NUMBERS = itertools.count()


def load_program(source: str, name: str = "f", tag: str = "program"):
    """The function ``name`` defined by ``source``, exec'd under a unique fake file ``<tag-N>``."""
    filename = f"<{tag}-{next(_PROGRAM_NUMBERS)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": filename}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


def _kind_ok(expected, got_dtype: np.dtype) -> bool:
    if isinstance(expected, bool):
        return got_dtype.kind == "b"
    if isinstance(expected, int):
        return got_dtype.kind in "iu"
    if isinstance(expected, float):
        return got_dtype.kind == "f"
    return True


def assert_same(expected, got, path="result", check_dtype=True, stacked_lists=False):
    """Exact comparison of a plain-Python result with a converted/traced one.

    With ``stacked_lists``, an expected list may come back as one array of its
    elements: a staged list (``runtime/tracing/staged_list.py``) is returned so.
    """
    if stacked_lists and type(expected) is list and isinstance(got, np.ndarray):
        expected = np.asarray(expected, dtype=got.dtype)
    if expected is None:
        assert got is None, f"{path}: expected None, got {got!r}"
        return
    if isinstance(expected, dict):
        assert isinstance(got, dict), f"{path}: expected a dict, got {got!r}"
        assert list(expected) == list(got) or set(expected) == set(got), (
            f"{path}: keys {sorted(map(repr, expected))} expected, got {sorted(map(repr, got))}"
        )
        for k in expected:
            assert_same(expected[k], got[k], f"{path}[{k!r}]", check_dtype, stacked_lists)
        return
    if isinstance(expected, (tuple, list)):
        kind = tuple if isinstance(expected, tuple) else list
        assert isinstance(got, kind), f"{path}: expected a {kind.__name__}, got {got!r}"
        assert len(expected) == len(got), f"{path}: expected {expected!r}, got {got!r}"
        for i, (e, g) in enumerate(zip(expected, got)):
            assert_same(e, g, f"{path}[{i}]", check_dtype, stacked_lists)
        return
    assert not isinstance(got, (dict, list, tuple)) and got is not None, (
        f"{path}: expected {expected!r}, got {got!r}"
    )
    e = np.asarray(expected)
    g = np.asarray(got)
    assert e.shape == g.shape, f"{path}: expected shape {e.shape} ({expected!r}), got {g.shape} ({got!r})"
    assert np.array_equal(e, g), f"{path}: expected {expected!r}, got {got!r}"
    if check_dtype:
        if isinstance(expected, (np.ndarray, np.generic)):
            assert g.dtype == e.dtype, f"{path}: expected dtype {e.dtype} ({expected!r}), got {g.dtype} ({got!r})"
        else:
            assert _kind_ok(expected, g.dtype), f"{path}: expected {expected!r}, got {got!r} ({g.dtype})"


def modes(f, **options):
    """(mode name, fresh ag.function(f)) for each execution mode."""
    for name, mode_opts in MODES.items():
        yield name, ag.function(f, **mode_opts, **options)


def check(f, *args, check_dtype=True, input_signature=None, stacked_lists=False):
    """f unconverted == ag.convert(f, always_converted=True) == ag.function(f) in every mode.

    ``stacked_lists``: a list may come back from a mode as one array (see ``assert_same``).
    """
    expected = f(*copy.deepcopy(args))
    converted = ag.convert(f, always_converted=True)(*copy.deepcopy(args))
    assert_same(expected, converted, "ag.convert result", check_dtype)
    options = {} if input_signature is None else {"input_signature": input_signature}
    for name, g in modes(f, **options):
        got = g(*copy.deepcopy(args))
        assert_same(expected, got, f"{name} result", check_dtype, stacked_lists)
    return expected


def check_raises(f, *args, match, exc=None, input_signature=None):
    """ag.function(f)(*args) raises exc (default ag.TracingError) matching regex in every mode."""
    exc = ag.TracingError if exc is None else exc
    options = {} if input_signature is None else {"input_signature": input_signature}
    for name, g in modes(f, **options):
        with pytest.raises(exc, match=match):
            g(*copy.deepcopy(args))


def check_python_error(f, *args, exc, match):
    """Plain Python raises ``exc``; so does every mode, its message naming ``match`` (the statement)."""
    with pytest.raises(exc):
        f(*copy.deepcopy(args))
    for name, g in modes(f):
        with pytest.raises(exc, match=match):
            g(*copy.deepcopy(args))


def check_value_or_error(f, *args, name_regex, check_dtype=True):
    """Either the plain function's result, or an ag.TracingError whose message names the variable."""
    expected = f(*copy.deepcopy(args))
    for mode, g in modes(f):
        try:
            got = g(*copy.deepcopy(args))
        except ag.TracingError as e:
            assert re.search(name_regex, str(e)), f"{mode}: TracingError does not name {name_regex}: {e}"
            continue
        assert_same(expected, got, f"{mode} result", check_dtype)


def i32(v):
    """np.int32 scalar for a number, an int32 array for a (nested) list."""
    return np.int32(v) if np.ndim(v) == 0 else np.array(v, dtype=np.int32)
