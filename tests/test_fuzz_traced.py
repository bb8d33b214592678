"""Traced-mode differential fuzzer: ag.function computes what the Python function computes.

Random Python-total programs (``fuzz_programs.ProgramWriter``: nested
if/elif/else, while, for over ``range(n)`` and over a tensor,
break/continue/early return, ternaries, and/or/not; state mixing Python
numbers, int/float tensors, dict items, list slots and object attributes,
and a list grown with append/pop)
are run unconverted on numpy inputs (the reference) and through
``ag.function`` in the three execution modes (interpreter, ``optimize=False``,
``jit_compile=True``), each traced once per program (``input_signature``)
and called on every argument tuple of ``ARGS``.  Every outcome is one of

- ``ok``: every mode returns the reference's nesting and values, exactly
  (one documented exception: a list a tensor loop or branch grows is
  *staged*, one tensor of its stacked elements, and comes back as that
  array, so the results the program's ``# staged: result[i]`` header names
  may be an array equal to ``np.asarray`` of the Python list -- same shape,
  same values; no other result may change its nesting);
- ``mismatch``: some mode returns another value or structure (the worst);
- ``internal``: some mode raised anything but ``ag.TracingError``, or a
  ``TracingError`` that names no variable of the program;
- ``refused``: some mode raised an ``ag.TracingError`` naming a variable
  or quoting the program's code (a conditional expression), or, in a
  program that mixes dtypes (``narrow``), saying that a value's dtype
  would depend on the path (``max`` of int32 and uint8, an early return of
  another dtype); counted apart: the goal is that a Python-total program
  is never refused.
  One kind is expected, from ``alias``: a list reached under two names
  (``ys = acc``, ``box = {'r': acc}``) that a tensor loop or branch grows.
  The statement stages the list (one tensor bound to the name it grows
  through) or carries each name as its own variable, and the runtime
  cannot rebind the user's other Python name to that tensor, so it refuses
  naming both (``operators/aliases.py``, ``state.refuse_shared``) rather
  than let the other name show the list without the appends;
- ``python_error``: the reference itself raised (a generator bug), other
  than an exception its ``# may raise:`` header names: on inputs where the
  reference raises one of those, every mode must raise it too (the
  exception itself, or an ``ag.ExecutionError`` whose ``original`` is one,
  naming the op and the user's line); returning a value there is a
  ``mismatch``.

``dtype`` counts programs where a result's dtype differs between the
reference (a numpy value) and a mode, or between modes; it is reported, not
failed on (the command line's ``--show`` prints examples, each with the
first differing leaf).  With ``narrow`` a dtype difference usually means a
value difference on other inputs (wrapping), but in a program that mixes
dtypes a value's dtype may depend on the path Python took, which one graph
cannot follow.

The test fails on any mismatch, internal error or python error, and
hypothesis shrinks the program first.  Constructs the runtime still gets
wrong are listed in ``FEATURES_KNOWN_BROKEN`` and left out of the generated
programs; the minimal reproducers of those bugs are in
``test_control_flow_state.py``.  Whoever fixes one removes it from the set.

Environment:

- ``AUTOGRAPH_FUZZ_EXAMPLES`` (default 1000): number of programs; e.g.
  ``AUTOGRAPH_FUZZ_EXAMPLES=50000`` for a long run.
- ``AUTOGRAPH_FUZZ_FEATURES``: ``all`` enables every feature, or a
  comma-separated list of features to enable on top of the default set
  (``dict,attr``), for bug hunting.
- ``AUTOGRAPH_FUZZ_RANDOM=1``: fresh programs instead of the fixed
  (derandomized) set.
- ``AUTOGRAPH_FUZZ_JAX_EVERY`` (default 10): with JAX installed, every n-th
  program also runs with ``backend="jax"`` (1: every program).

Run with ``-s`` to see the summary line.  Without hypothesis (counts per
class, the first program of each, no shrinking):
``python tests/test_fuzz_traced.py --examples 5000 --features all``.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import linecache
import os
import re
import sys
import time
import traceback
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import autograph as ag
from autograph import runtime as rt

sys.path.insert(0, os.path.dirname(__file__))
from fuzz_programs import (  # noqa: E402
    FEATURES, NARROW_INTS, WIDE_CONSTANTS, Box, ProgramWriter, may_raise, mixes_dtypes, program_dtype,
    staged_results,
)

# Constructs the runtime gets wrong today; the generator leaves them out
# unless AUTOGRAPH_FUZZ_FEATURES turns them on.
# narrow (AUTOGRAPH_FUZZ_FEATURES=narrow) and narrow_bounds: fixed -- a Python int out of a narrow
# tensor's bounds is NEP 50's OverflowError raised when the graph computes it, on the paths that do,
# and compared exactly; a counter takes no wrapping dtype from a comparison; a counter past int32 is
# a weak int64 (tests/test_weak_bounds.py); max()/min() of a Python int and a narrow tensor is
# Python's operand when the dtype's bounds decide it, else a TracingError; so is sum() whose type
# would depend on the length or on Python ints in a staged list, and a staged list of narrow values
# holding an int they cannot hold; the JAX backend checks and normalizes narrow indices as int64
# (tests/test_builtins_narrow.py).  Left: none known; both stay opt-in until long runs are clean.
FEATURES_KNOWN_BROKEN: frozenset = frozenset({"narrow", "narrow_bounds"})

MODES = {
    "interpreter": {},
    "unoptimized": {"optimize": False},
    "jit": {"jit_compile": True},
}
# The JAX backend, when JAX is installed: XLA compiles each program's graph anew (about a second), so
# it runs on every AUTOGRAPH_FUZZ_JAX_EVERY-th program only (default 10; 1 for all of them).
try:
    import jax  # noqa: F401
except ImportError:
    JAX_MODES = {}
else:
    JAX_MODES = {"jax": {"backend": "jax"}}
JAX_EVERY = max(1, int(os.environ.get("AUTOGRAPH_FUZZ_JAX_EVERY", "10")))


def modes_for(number: int) -> dict:
    """The modes program ``number`` runs in: the numpy ones, and JAX on every JAX_EVERY-th."""
    return {**MODES, **JAX_MODES} if JAX_MODES and number % JAX_EVERY == 0 else MODES

# (a, b, n, v): a and b are cast to the program's dtype, v too.
ARGS = (
    (3, -2, 2, [1, 4, -3]),
    (0, 5, 0, []),
    (-4, 7, 3, [2]),
    (6, 6, 1, [0, 5]),
    (1, 0, 3, [7, -1, 7, 2]),
)

OUTCOMES = ("ok", "refused", "mismatch", "internal", "python_error")


def arguments(dtype: str):
    """ARGS as numpy values of ``dtype`` (``n`` is always int32); negative ones wrap in an unsigned dtype."""
    def cast(x):
        return np.asarray(x).astype(dtype)

    return [(cast(a)[()], cast(b)[()], np.int32(n), cast(np.array(v, dtype=np.int64))) for a, b, n, v in ARGS]


def signature(dtype: str):
    return [rt.TensorSpec((), dtype), rt.TensorSpec((), dtype), rt.TensorSpec((), "int32"),
            rt.TensorSpec((None,), dtype)]


# --------------------------------------------------------------------------
# Running one program
# --------------------------------------------------------------------------


@dataclasses.dataclass
class Result:
    outcome: str
    detail: str = ""
    dtype_mismatch: bool = False
    dtype_detail: str = ""  # the first dtype difference (mode, arguments, leaf)


_FILE_NUMBERS = itertools.count()


def load(source: str):
    """Execs ``source`` under a unique fake file registered in linecache."""
    filename = f"<fuzz-program-{next(_FILE_NUMBERS)}>"  # not "<autograph-...": autograph's own (jit) code
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": filename, "Box": Box, "np": np}
    exec(compile(source, filename, "exec"), namespace)
    return filename, namespace["prog"]


_KEYWORDS = {"def", "prog", "if", "elif", "else", "while", "for", "in", "range", "return", "and", "or",
             "not", "break", "continue", "True", "len", "append", "pop", "max", "min", "abs", "divmod", "sum",
             "raise", "unlucky", "nonlocal", "bump", "put", "inc", "add"}


def variable_names(source: str) -> set[str]:
    """Every name the program binds or reads, plus its composite targets (d['x'], o.v), and the name
    messages give what a ``return`` returns ('the return value[8]': the runtime's role label)."""
    body = re.sub(r"^#.*$", "", source, flags=re.MULTILINE)  # not the header lines
    code = re.sub(r"'[^']*'", "''", body)  # not the dict keys
    names = set(re.findall(r"\b[a-z]\w*\b", code)) - _KEYWORDS
    returns = {"the return value"} if re.search(r"\breturn\b", code) else set()
    return names | returns | set(re.findall(r"\w+\[[^\]]+\]|\w+\.\w+", body))


def names_a_variable(message: str, names: set[str]) -> bool:
    """The message quotes one of ``names`` ('s', 'd['x']', 'o.v', ...)."""
    return any(re.search(rf"'{re.escape(name)}(?:'|\[|\.)", message) for name in names)


def quotes_the_program(message: str, source: str) -> bool:
    """The message quotes a fragment of the program's code in backticks (`... if 1 <= l[1] else ...`).

    A conditional expression whose two values have different dtypes (which
    ``narrow`` programs that mix kinds write) is refused naming the
    expression, as it binds no variable: that is a refusal, not an internal
    error.
    """
    for quoted in re.findall(r"`([^`]+)`", message):
        pieces = [piece.strip() for piece in quoted.split("...") if piece.strip()]
        if pieces and all(piece in source for piece in pieces):
            return True
    return False


# A program that mixes dtypes ("# mixes dtypes") may be refused because a value's dtype would depend
# on the path: max()/min() of two dtypes, an early return of another dtype ('the return value[2]').
_DTYPE_DEPENDS = re.compile(r"must give it the same dtype|its dtype would depend on")


def leaves(value, path="result"):
    """(path, leaf) pairs and the nesting skeleton of a result."""
    if isinstance(value, dict):
        return [(f"{path}[{k!r}]", x) for k in sorted(value) for x in [value[k]]], ("dict", tuple(sorted(value)))
    if isinstance(value, (tuple, list)):
        return [(f"{path}[{i}]", x) for i, x in enumerate(value)], (type(value).__name__, len(value))
    return None, None


def flatten(value, path="result"):
    children, skeleton = leaves(value, path)
    if children is None:
        return [(path, value)], "leaf"
    flat, skeletons = [], []
    for child_path, child in children:
        child_flat, child_skeleton = flatten(child, child_path)
        flat += child_flat
        skeletons.append(child_skeleton)
    return flat, (skeleton, tuple(skeletons))


def as_staged(expected, got, staged=frozenset()):
    """``expected`` with each Python list that ``staged`` names and ``got`` returns as an array, as that array.

    A staged list (``runtime/tracing/staged_list.py``) is returned as one
    array of its stacked elements; its Python counterpart becomes
    ``np.asarray`` of its elements, which ``compare`` then checks for shape
    and values like any leaf.  The array takes the elements' own dtype
    when they are all numpy values (so the dtype check applies), else
    ``got``'s (Python numbers have none).
    """
    if not staged or not isinstance(expected, tuple) or not isinstance(got, tuple) or len(got) != len(expected):
        return expected
    expected = list(expected)
    for i in staged:
        if i < len(expected) and type(expected[i]) is list and isinstance(got[i], np.ndarray):
            numpy_items = expected[i] and all(isinstance(x, np.generic) for x in expected[i])
            try:
                expected[i] = np.asarray(expected[i], dtype=None if numpy_items else got[i].dtype)
            except OverflowError:  # a Python int ``got``'s (narrow) dtype cannot hold: compare the values
                expected[i] = np.asarray(expected[i])
    return tuple(expected)


def compare(expected, got, staged=frozenset()) -> tuple[str | None, str | None]:
    """(first difference or None, first leaf whose dtype differs or None); ``staged``: see ``as_staged``."""
    expected = as_staged(expected, got, staged)
    expected_flat, expected_skeleton = flatten(expected)
    got_flat, got_skeleton = flatten(got)
    if expected_skeleton != got_skeleton:
        return f"structure {got!r} != {expected!r}", None
    dtype_differs = None
    for (path, e), (_, g) in zip(expected_flat, got_flat):
        e_arr, g_arr = np.asarray(e), np.asarray(g)
        if e_arr.shape != g_arr.shape or not np.array_equal(e_arr, g_arr):
            return f"{path}: got {g!r}, expected {e!r}", None
        if isinstance(e, (np.generic, np.ndarray)) and e_arr.dtype != g_arr.dtype and dtype_differs is None:
            dtype_differs = f"{path}: got {g_arr.dtype}, Python {e_arr.dtype}"
    return None, dtype_differs


def dtypes_of(value):
    return tuple(np.asarray(leaf).dtype.name for _, leaf in flatten(value)[0])


class Raised:
    """The reference raised ``error``, an exception the program's header says it may raise."""

    def __init__(self, error: BaseException):
        self.error = error

    def matches(self, error: BaseException) -> bool:
        want = type(self.error)
        return isinstance(error, want) or isinstance(error, ag.ExecutionError) and isinstance(error.original, want)

    def __repr__(self):
        return f"raises {type(self.error).__name__}({self.error})"


def fresh(args):
    """A copy of ``args`` whose arrays the call may update in place (``v[i] = ..`` in Python)."""
    return tuple(np.array(x) if isinstance(x, np.ndarray) else x for x in args)


def reference(fn, args, source: str):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a narrow dtype's wrapping: "overflow encountered in scalar add"
            return fn(*fresh(args))
    except Exception as exc:  # noqa: BLE001 - the generator's fault, unless the header names it
        if type(exc).__name__ in may_raise(source):
            return Raised(exc)
        raise


def run_program(source: str, modes=MODES) -> Result:
    filename, fn = load(source)
    try:
        dtype = program_dtype(source)
        calls = arguments(dtype)
        expected = []
        for args in calls:
            try:
                expected.append(reference(fn, args, source))
            except Exception as exc:  # noqa: BLE001 - the generator's fault
                return Result("python_error", f"{args!r}: {type(exc).__name__}: {exc}")
        names = variable_names(source)
        staged = staged_results(source)
        mixing = mixes_dtypes(source)
        worst, dtype_mismatch, dtype_detail = None, False, ""
        mode_dtypes = {}
        for mode, options in modes.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                traced = ag.function(fn, input_signature=signature(dtype), **options)
                for args, want in zip(calls, expected):
                    try:
                        got = traced(*fresh(args))
                    except ag.TracingError as exc:
                        if names_a_variable(str(exc), names) or quotes_the_program(str(exc), source) or (
                                mixing and _DTYPE_DEPENDS.search(str(exc))):
                            found = Result("refused", f"[{mode}] {type(exc).__name__}: {exc}")
                        else:
                            found = Result("internal", f"[{mode}] {type(exc).__name__}: {exc}")
                        worst = _worse(worst, found)
                        break
                    except Exception as exc:  # noqa: BLE001 - the outcome under test
                        if isinstance(want, Raised) and want.matches(exc):
                            continue
                        where = traceback.extract_tb(exc.__traceback__)[-1]
                        found = Result("internal", f"[{mode}] {type(exc).__name__}: {exc} "
                                                   f"(at {where.filename}:{where.lineno})")
                        worst = _worse(worst, found)
                        break
                    if isinstance(want, Raised):
                        worst = _worse(worst, Result("mismatch", f"[{mode}] args {args!r}: returned {got!r}, "
                                                                 f"Python {want!r}"))
                        break
                    difference, dtype_differs = compare(want, got, staged)
                    if difference:
                        worst = _worse(worst, Result("mismatch", f"[{mode}] args {args!r}: {difference}"))
                        break
                    previous = mode_dtypes.setdefault(_key(args), (mode, dtypes_of(got)))
                    if dtype_differs is None and previous[1] != dtypes_of(got):
                        dtype_differs = f"dtypes {dtypes_of(got)}, {previous[0]} {previous[1]}"
                    if dtype_differs and not dtype_mismatch:
                        dtype_detail = f"[{mode}] args {args!r}: {dtype_differs}"
                    dtype_mismatch |= bool(dtype_differs)
        result = worst or Result("ok")
        result.dtype_mismatch, result.dtype_detail = dtype_mismatch, dtype_detail
        return result
    finally:
        linecache.cache.pop(filename, None)


def _key(args):
    return repr([np.asarray(x).tolist() for x in args])


_SEVERITY = {"ok": 0, "refused": 1, "internal": 2, "mismatch": 3, "python_error": 4}


def _worse(a: Result | None, b: Result) -> Result:
    return b if a is None or _SEVERITY[b.outcome] > _SEVERITY[a.outcome] else a


# --------------------------------------------------------------------------
# The test
# --------------------------------------------------------------------------


def enabled_features() -> frozenset:
    extra = os.environ.get("AUTOGRAPH_FUZZ_FEATURES", "").strip()
    if extra == "all":
        return FEATURES
    wanted = {f.strip() for f in extra.split(",") if f.strip()}
    unknown = wanted - FEATURES
    if unknown:
        raise ValueError(f"AUTOGRAPH_FUZZ_FEATURES: unknown features {sorted(unknown)}")
    return (FEATURES - FEATURES_KNOWN_BROKEN) | wanted


@st.composite
def programs(draw, features):
    choose = lambda lo, hi: draw(st.integers(lo, hi))  # noqa: E731
    return ProgramWriter(choose, features).program()


_EXAMPLES = int(os.environ.get("AUTOGRAPH_FUZZ_EXAMPLES", "1000"))
_RANDOM = os.environ.get("AUTOGRAPH_FUZZ_RANDOM") == "1"


def test_traced_programs_match_python(capsys):
    features = enabled_features()
    counts = collections.Counter()
    start = time.perf_counter()

    @settings(
        max_examples=_EXAMPLES,
        deadline=None,
        derandomize=not _RANDOM,
        database=None,
        print_blob=_RANDOM,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
        report_multiple_bugs=False,
    )
    @given(programs(features))
    def check(source):
        result = run_program(source, modes_for(sum(counts.values()) - counts["dtype"]))
        counts[result.outcome] += 1
        counts["dtype"] += result.dtype_mismatch
        assert result.outcome in ("ok", "refused"), (
            f"{result.outcome}: {result.detail}\n--- program (inputs: ARGS cast to its dtype) ---\n{source}"
        )

    try:
        check()
    finally:
        with capsys.disabled():
            print(f"\nfuzz: {summary(counts)} in {time.perf_counter() - start:.1f}s "
                  f"(disabled: {', '.join(sorted(FEATURES - features)) or 'none'})")


def summary(counts) -> str:
    return " / ".join(f"{counts[k]} {k}" for k in OUTCOMES + ("dtype",))


# Seeds whose programs the long runs found wrong (an internal error), each a class of bug fixed:
# a dropped If that had an effect (509596), a staged raise before the branch's earlier IndexError
# (610773), an op a staged raise waits for hoisted out of its loop (712383), a list grown through
# an alias (box['r'] of acc) by an if nested in another if, which stages it on the enclosing if's
# copy, where the alias check did not look for 'acc' (1201389), a body trace thrown away (a retry,
# a restage) that had set o.v through a call, left for the next round to read (2031674, 2041372).
FOUND_SEEDS = (509596, 610773, 712383, 1124005, 1201389, 2031674, 2041372)
# features added to the generator after those seeds were found: without them a seed writes its program
ADDED_SINCE_FOUND = frozenset({"conversions", "local_helper", "test_call", "rebind", "numpy_buffer"})


@pytest.mark.parametrize("seed", FOUND_SEEDS)
def test_programs_the_long_runs_found_wrong_now_match_python(seed):
    import random

    source = ProgramWriter(random.Random(seed).randint, enabled_features() - ADDED_SINCE_FOUND).program()
    result = run_program(source, {**MODES, **JAX_MODES})
    assert result.outcome in ("ok", "refused"), (result.outcome, result.detail, source)


def test_generator_is_python_total_and_covers_the_constructs():
    """Every feature shows up, and the reference never raises (cheap: no tracing)."""
    import random

    rng = random.Random(8)
    seen = collections.Counter()
    markers = {
        "elif": "elif ", "else": "else:", "while": "while c", "while_true": "while True",
        "for_range": "in range(", "for_tensor": " in v:", "break": "break", "continue": "continue",
        "return": "        return", "ternary": " if ", "boolop": " and ", "not": "not ",
        "dict": "d['x']", "list": "l[0]", "attr": "o.v", "float": "float32", "floordiv": "//",
        "return_containers": "u, d, l",
        "append": "acc.append(", "pop": "acc.pop()", "list_index": "acc[", "for_list": " in acc:",
        "return_list": "len(acc), acc", "pop_to_item": "] = acc.pop()", "pop_late_guard": ") and len(acc)",
        "alias": "].append(", "helper_call": "bump(o, ", "local_helper": "def inc_here(", "test_call": "while (inc(", "walrus": " := ",
        "tensor_index": "v[(",
        "builtins": "max(", "comprehension": " for y in v", "raise": "raise ValueError", "conversions": "int(",
        "rebind": "    l = [(",
    }
    for _ in range(300):
        source = ProgramWriter(rng.randint).program()
        for feature, marker in markers.items():
            seen[feature] += marker in source
        seen["narrow"] += program_dtype(source) in NARROW_INTS + ("float64",)
        seen["narrow_compare"] += any(f" {c}" in source for c in WIDE_CONSTANTS if c > 9)
        filename, fn = load(source)
        linecache.cache.pop(filename, None)
        for args in arguments(program_dtype(source)):
            reference(fn, args, source)
    rare = {f: seen[f] for f in [*markers, "narrow", "narrow_compare"] if seen[f] < 10}
    assert not rare, f"features too rare in 300 programs: {rare}"


# --------------------------------------------------------------------------
# Command line: counts per class over seeded random programs
# --------------------------------------------------------------------------


def main(argv=None):
    import argparse
    import random

    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--features", default="", help="'all', or features to add to the default set")
    parser.add_argument("--without", default="", help="features to remove")
    parser.add_argument("--show", type=int, default=1, help="programs to print per outcome")
    args = parser.parse_args(argv)
    os.environ["AUTOGRAPH_FUZZ_FEATURES"] = args.features
    features = enabled_features() - {f for f in args.without.split(",") if f}
    counts = collections.Counter()
    shown = collections.defaultdict(list)
    start = time.perf_counter()
    for i in range(args.examples):
        seed = args.seed + i
        source = ProgramWriter(random.Random(seed).randint, features).program()
        result = run_program(source, modes_for(i))
        counts[result.outcome] += 1
        counts["dtype"] += result.dtype_mismatch
        if result.outcome != "ok" and len(shown[result.outcome]) < args.show:
            shown[result.outcome].append((seed, source, result.detail))
        if result.dtype_mismatch and len(shown["dtype"]) < args.show:
            shown["dtype"].append((seed, source, result.dtype_detail))
    print(f"fuzz: {summary(counts)} in {time.perf_counter() - start:.1f}s "
          f"(features: {', '.join(sorted(features))})")
    for outcome, programs_ in shown.items():
        for seed, source, detail in programs_:
            print(f"\n=== {outcome} (seed {seed}): {detail}\n{source}")


if __name__ == "__main__":
    main()
