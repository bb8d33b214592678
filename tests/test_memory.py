"""Memory that must be returned: caches keyed by user objects are weak or bounded (tracemalloc)."""

from __future__ import annotations

import gc
import linecache
import tracemalloc
import warnings

import numpy as np

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.backends.numpy import codegen

MIB = 1 << 20


def _notebook_lambdas(n, start):
    """``n`` distinct lambdas exec'd under their own cell names, as a notebook makes them."""
    functions = []
    for i in range(start, start + n):
        name = f"<cell-{i}>"
        source = f"f = lambda x: x + {i} if x > 0 else x - {i}\n"
        linecache.cache[name] = (len(source), None, [source], name)
        namespace = {}
        exec(compile(source, name, "exec"), namespace)
        functions.append((name, namespace["f"]))
    return functions


def _convert_and_drop(n, start):
    functions = _notebook_lambdas(n, start)
    for _, f in functions:
        assert ag.convert(f, always_converted=True)(1) == 1 + int(_.split("-")[1].rstrip(">"))
    for name, _ in functions:
        del linecache.cache[name]
    del functions
    gc.collect()


def test_converting_5000_functions_and_dropping_them_returns_memory():
    _convert_and_drop(200, 0)  # warm up: imports, first-use caches
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        _convert_and_drop(5000, 1000)
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    print(f"traced memory before {before / MIB:.2f} MiB, after 5000 conversions dropped {after / MIB:.2f} MiB")
    assert after - before < 4 * MIB


def test_a_dropped_function_frees_its_conversion():
    import weakref

    (name, f), = _notebook_lambdas(1, 99999)
    converted = ag.convert(f, always_converted=True)
    code = weakref.ref(converted.__code__)
    del f, converted, linecache.cache[name]
    gc.collect()
    assert code() is None


def test_compiled_graphs_release_their_linecache_entries():
    graph = rt.function(lambda x: x * 2.0 + 1.0).get_concrete_function(np.float32(1)).graph
    fn, _ = codegen.compile_graph(graph)
    (name,) = [k for k in linecache.cache if k.startswith("<autograph-jit") and k.endswith(f"#{_last_jit_number()}>")]
    assert fn([np.float32(1)]) == [3.0]
    del fn
    gc.collect()
    assert name not in linecache.cache


def _last_jit_number():
    return max(int(k.rsplit("#", 1)[1][:-1]) for k in linecache.cache if k.startswith("<autograph-jit"))


def test_retrace_cache_size_limit():
    f = rt.function(lambda x: x + 1, max_traces=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in range(1, 10):
            assert f(np.zeros(n, np.float32)).shape == (n,)
    assert f.tracing_count == 9 and len(f._traced_graphs()) == 3
    assert f(np.zeros(9, np.float32)).shape == (9,) and f.tracing_count == 9  # the latest stay cached
    assert f(np.zeros(1, np.float32)).shape == (1,) and f.tracing_count == 10  # the oldest was evicted
