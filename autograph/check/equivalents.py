"""The ``rt.*`` spelling of library calls, for the fixes that ``autograph check`` suggests.

``RT_OPS`` maps a numpy or ``math`` function name to the runtime op that
computes the same in the graph (``tests/test_check.py`` checks that every
target exists in ``autograph.runtime``).  Dtype constructors
(``np.float32(x)``) become ``rt.cast``.  ``RANDOM`` maps ``np.random`` /
``random`` functions to ``rt.random``; ``CLOCKS`` are the ``time``
functions whose value a trace would freeze.
"""

from __future__ import annotations

RT_OPS = {
    "exp": "exp", "log": "log", "sqrt": "sqrt", "sin": "sin", "cos": "cos", "tanh": "tanh",
    "abs": "abs", "absolute": "abs", "fabs": "abs", "square": "square",
    "maximum": "maximum", "minimum": "minimum",
    "sum": "reduce_sum", "mean": "reduce_mean", "max": "reduce_max", "amax": "reduce_max",
    "min": "reduce_min", "amin": "reduce_min", "prod": "reduce_prod", "any": "reduce_any", "all": "reduce_all",
    "argmax": "argmax", "argmin": "argmin", "var": "reduce_variance", "std": "reduce_std",
    "clip": "clip_by_value", "squeeze": "squeeze", "matmul": "matmul", "dot": "matmul", "where": "where", "stack": "stack",
    "concatenate": "concat", "reshape": "reshape", "zeros_like": "zeros_like", "ones_like": "ones_like",
    "greater": "greater", "greater_equal": "greater_equal", "less": "less", "less_equal": "less_equal",
    "equal": "equal", "not_equal": "not_equal", "logical_and": "logical_and", "logical_or": "logical_or",
    "logical_not": "logical_not", "logical_xor": "logical_xor", "add": "add", "subtract": "subtract",
    "multiply": "multiply", "divide": "divide", "true_divide": "divide", "power": "pow", "pow": "pow",
    "floor_divide": "floordiv", "mod": "mod", "remainder": "mod", "negative": "negative", "take": "gather",
    "shape": "shape", "size": "size", "arange": "range",
}

DTYPES = frozenset({"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool_"})

RANDOM = {
    "rand": "uniform", "random": "uniform", "random_sample": "uniform", "uniform": "uniform",
    "randn": "normal", "normal": "normal", "standard_normal": "normal", "gauss": "normal",
    "normalvariate": "normal",
}

CLOCKS = frozenset({
    "time.time", "time.time_ns", "time.perf_counter", "time.perf_counter_ns", "time.monotonic",
    "time.monotonic_ns", "time.process_time", "time.process_time_ns",
})


def rt_spelling(origin: str, args: str) -> str | None:
    """``rt.exp(x)`` for ``numpy.exp`` called with ``args``; None when no op computes it."""
    name = origin.rsplit(".", 1)[-1]
    if origin.startswith(("numpy.", "math.")) and origin.count(".") == 1:
        if name in DTYPES:
            return f'rt.cast({args}, "{name.rstrip("_")}")'
        if name in RT_OPS:
            return f"rt.{RT_OPS[name]}({args})"
    return None


def random_fix(origin: str) -> str:
    """How to draw in the graph what ``origin`` (an ``np.random`` / ``random`` / clock call) draws once."""
    if origin in CLOCKS:
        return "pass the time in as an argument (a Python value read while tracing is frozen into the graph)"
    name = origin.rsplit(".", 1)[-1]
    if name == "seed":
        return "seed the graph's random ops once, outside the function, with rt.random.set_seed(...)"
    if name in RANDOM:
        kind = RANDOM[name]
        args = "shape, minval, maxval" if kind == "uniform" else "shape, mean, stddev"
        return f"use rt.random.{kind}({args}): it draws new values at every call"
    return "draw the values with rt.random.uniform / rt.random.normal, or pass them in as an argument"
