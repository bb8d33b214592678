"""Golden files: the generated code of every fixture, byte for byte.

Each ``fixtures/<converter>/<case>.py`` is real source holding the function
``<case>`` (helpers may sit next to it) and ``CASES``, a list of argument
tuples.  ``fixtures/<converter>/<case>.expected.py`` holds ``ag.to_code``
of that function.  The one parametrized test compares the two byte for byte
and checks that the converted function behaves like the original on
``CASES``.  Expected files change only with an explicit flag:

    python -m pytest tests/test_golden.py --regen-golden
"""

from __future__ import annotations

import difflib
import importlib.util
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import autograph as ag
from corpus_registry import Call, run, same

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EXPECTED_SUFFIX = ".expected.py"
REGEN_COMMAND = "python -m pytest tests/test_golden.py --regen-golden"

# Every converter of the pipeline has a folder; `combined` mixes them.
CONVERTER_FOLDERS = (
    "asserts",
    "break_statements",
    "call_trees",
    "conditional_expressions",
    "continue_statements",
    "control_flow",
    "lists",
    "logical_expressions",
    "return_statements",
    "slices",
    "private_names",
    "combined",
)


# fixtures/check/ holds inputs and reports of `autograph check` (tests/test_check.py), not generated code.
NOT_CONVERTER_FOLDERS = ("check",)


def _inputs() -> list[Path]:
    return sorted(
        p for p in FIXTURES.glob("*/*.py")
        if not p.name.endswith(EXPECTED_SUFFIX) and p.parent.name not in NOT_CONVERTER_FOLDERS
    )


def _expected_path(source: Path) -> Path:
    return source.with_name(source.stem + EXPECTED_SUFFIX)


def _load(source: Path):
    """Imports a fixture file as a module of its own (real file, real source)."""
    name = f"fixture__{source.parent.name}__{source.stem}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, source)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _generated(source: Path) -> str:
    """ag.to_code of the fixture's function, ending in exactly one newline."""
    fn = getattr(_load(source), source.stem)
    code = ag.to_code(fn)
    return code if code.endswith("\n") else code + "\n"


def _case_id(source: Path) -> str:
    return f"{source.parent.name}/{source.stem}"


@pytest.mark.parametrize("source", [pytest.param(p, id=_case_id(p)) for p in _inputs()])
def test_golden(source, regen_golden):
    module = _load(source)
    fn = getattr(module, source.stem, None)
    assert callable(fn), f"{source}: define a function named {source.stem!r}"
    cases = getattr(module, "CASES", None)
    assert cases, f"{source}: declare CASES = [(args...), ...] with sample inputs"

    generated = _generated(source)
    expected_path = _expected_path(source)
    if regen_golden:
        expected_path.write_bytes(generated.encode("utf-8"))
    elif not expected_path.exists():
        pytest.fail(
            f"missing golden file {expected_path.relative_to(FIXTURES.parent)}; "
            f"generate it with: {REGEN_COMMAND}"
        )
    else:
        expected = expected_path.read_bytes().decode("utf-8")
        if generated != expected:
            diff = "".join(
                difflib.unified_diff(
                    expected.splitlines(True),
                    generated.splitlines(True),
                    fromfile=str(expected_path.relative_to(FIXTURES.parent)),
                    tofile="ag.to_code output",
                )
            )
            pytest.fail(
                f"generated code differs from the golden file:\n{diff}\n"
                f"if the change is intended, regenerate with: {REGEN_COMMAND}"
            )

    for args in cases:
        spec = Call(tuple(args), {})
        original = run(fn, spec)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ag.AutoGraphWarning)
            converted = run(ag.convert(fn, always_converted=True), spec)
        assert original.kind == converted.kind and same(original.value, converted.value), (
            f"{_case_id(source)}{spec!r}: original {original.kind} {original.value!r}, "
            f"converted {converted.kind} {converted.value!r}"
        )
        assert original.stdout == converted.stdout, f"{_case_id(source)}{spec!r}: output"
        assert same(original.args, converted.args), f"{_case_id(source)}{spec!r}: mutation"


def test_fixture_tree_is_complete():
    inputs = _inputs()
    assert len(inputs) >= 30, f"only {len(inputs)} golden cases"
    folders = {p.parent.name for p in inputs}
    missing = set(CONVERTER_FOLDERS) - folders
    assert not missing, f"no golden case for: {sorted(missing)}"
    orphans = [
        p for p in FIXTURES.glob(f"*/*{EXPECTED_SUFFIX}")
        if not p.with_name(p.name[: -len(EXPECTED_SUFFIX)] + ".py").exists()
    ]
    assert not orphans, f"expected files without an input: {orphans}"


_HASHSEED_SCRIPT = """
import importlib.util, sys
import autograph as ag
for path in sys.argv[1:]:
    spec = importlib.util.spec_from_file_location("fixture", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    stem = path.rsplit("/", 1)[1][:-3]
    code = ag.to_code(getattr(module, stem))
    sys.stdout.write(code if code.endswith("\\n") else code + "\\n")
    sys.stdout.write("\\0")
"""


@pytest.mark.parametrize("seed", ["0", "12345"])
def test_generated_code_does_not_depend_on_hash_seed(seed):
    inputs = _inputs()
    env = dict(os.environ, PYTHONHASHSEED=seed)
    proc = subprocess.run(
        [sys.executable, "-c", _HASHSEED_SCRIPT, *map(str, inputs)],
        capture_output=True,
        text=True,
        env=env,
        cwd=FIXTURES.parent,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    outputs = proc.stdout.split("\0")[:-1]
    assert len(outputs) == len(inputs)
    for source, code in zip(inputs, outputs):
        assert code == _generated(source), (
            f"{_case_id(source)}: to_code differs under PYTHONHASHSEED={seed}"
        )
