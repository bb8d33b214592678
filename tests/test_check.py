"""``autograph check``: golden reports, the corpora, the command line, and that it never runs code.

* ``fixtures/check/<rule>.py`` and ``<rule>.expected``: the text report of
  each fixture, byte for byte (rewrite with ``--regen-golden``);
  ``clean.py`` reports nothing.
* ``tests/corpus_check_bad.py`` / ``corpus_check_clean.py`` (parsed, never
  imported): every bad function gets exactly the codes of its
  ``EXPECTED`` entry, no clean function gets any.
* The findings describe real behaviour: the fixtures are run and do what
  the report says (a constant random value, a print once per trace, ...).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.check import UsageError, check_paths, check_source, equivalents, rules
from autograph.cli import main as cli_main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "check"
RULE_FIXTURES = sorted(p for p in FIXTURES.glob("ag1*.py"))
REGEN_COMMAND = "python -m pytest tests/test_check.py --regen-golden"


def _report(path: Path) -> str:
    relative = path.relative_to(ROOT).as_posix()
    return "".join(f"{f}\n" for f in check_source(path.read_text(), relative))


# -- golden reports ---------------------------------------------------------------------


@pytest.mark.parametrize("source", RULE_FIXTURES, ids=lambda p: p.stem)
def test_golden_report(source, regen_golden):
    expected_path = source.with_suffix(".expected")
    report = _report(source)
    if regen_golden:
        expected_path.write_text(report)
    assert expected_path.exists(), f"missing {expected_path.name}; generate it with: {REGEN_COMMAND}"
    assert report == expected_path.read_text(), f"report changed; if intended: {REGEN_COMMAND}"


def test_every_code_has_a_fixture_reporting_it():
    reported = {line.split()[1] for p in RULE_FIXTURES for line in p.with_suffix(".expected").read_text().splitlines()}
    assert reported == set(rules.RULES)
    assert {p.stem[:5].upper() for p in RULE_FIXTURES} == set(rules.RULES)


def test_clean_fixture_and_examples_report_nothing():
    assert _report(FIXTURES / "clean.py") == ""
    assert check_paths([str(ROOT / "examples"), str(ROOT / "benchmarks")]) == []


# -- the corpora --------------------------------------------------------------------------


def _functions(tree):
    """``(first line, last line, qualname)`` of every def."""
    found = []

    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                name = prefix + node.name
                if isinstance(node, ast.FunctionDef):
                    found.append((node.lineno, node.end_lineno, name))
                visit(node.body, name + ".")

    visit(tree.body, "")
    return found


def _codes_by_function(path: Path):
    source = path.read_text()
    functions = _functions(ast.parse(source))
    codes: dict = {}
    for finding in check_paths([str(path)]):  # with the pragmas applied
        owner = max((f for f in functions if f[0] <= finding.line <= f[1]), key=lambda f: f[0])
        codes.setdefault(owner[2], set()).add(finding.code)
    return functions, codes


def test_bad_corpus_every_function_gets_its_codes():
    path = Path(__file__).with_name("corpus_check_bad.py")
    tree = ast.parse(path.read_text())
    expected = ast.literal_eval(next(n.value for n in tree.body if isinstance(n, ast.Assign)
                                     and n.targets[0].id == "EXPECTED"))
    _functions_found, codes = _codes_by_function(path)
    assert len(expected) >= 30
    assert codes == expected
    assert set().union(*expected.values()) == set(rules.RULES) - {"AG100"}


def test_clean_corpus_reports_nothing():
    path = Path(__file__).with_name("corpus_check_clean.py")
    functions, codes = _codes_by_function(path)
    assert len(functions) >= 30
    assert codes == {}


# -- it never runs the checked code -------------------------------------------------------


def test_check_never_imports_or_runs_the_file(tmp_path):
    sentinel = tmp_path / "ran"
    target = tmp_path / "explosive.py"
    target.write_text(
        "import pathlib\n"
        f"pathlib.Path({str(sentinel)!r}).write_text('imported')\n"
        "raise SystemExit('autograph check imported this file')\n"
        "import autograph as ag\n"
        "@ag.function\n"
        "def f(x):\n"
        f"    pathlib.Path({str(sentinel)!r}).write_text('ran')\n"
        "    print('tracing')\n"
        "    return x\n"
    )
    proc = subprocess.run([sys.executable, "-m", "autograph.cli", "check", str(target)], capture_output=True,
                          text=True, cwd=tmp_path, timeout=60)
    assert not sentinel.exists()
    assert proc.returncode == 1, proc.stderr
    assert "AG103" in proc.stdout and "imported this file" not in proc.stdout + proc.stderr
    assert not list(tmp_path.glob("__pycache__"))


# -- the command line ---------------------------------------------------------------------


def _cli(capsys, *argv):
    status = cli_main(["check", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def test_exit_status_clean_findings_and_bad_usage(capsys, tmp_path):
    assert _cli(capsys, FIXTURES / "clean.py")[0] == 0
    status, out, _ = _cli(capsys, FIXTURES / "ag103_print_and_logging.py")
    assert status == 1 and out.count("AG103") == 4
    status, _, err = _cli(capsys, tmp_path / "missing.py")
    assert status == 2 and "no such file or folder" in err
    status, _, err = _cli(capsys, FIXTURES / "clean.py", "--select", "AG999")
    assert status == 2 and "unknown code 'AG999'" in err
    status, _, err = _cli(capsys, FIXTURES / "clean.py", "--ignore", "E501")
    assert status == 2 and "--ignore" in err
    status, _, err = _cli(capsys, f"{FIXTURES / 'clean.py'}:no_such_function")
    assert status == 2 and "no function named 'no_such_function'" in err


def test_syntax_error_is_a_finding_and_other_files_are_still_checked(capsys, tmp_path):
    (tmp_path / "broken.py").write_text("def f(:\n")
    (tmp_path / "fine.py").write_text("import autograph as ag\n@ag.function\ndef g(x):\n    print('hi')\n    return x\n")
    status, out, _ = _cli(capsys, tmp_path)
    lines = out.splitlines()
    assert status == 1 and len(lines) == 2
    assert lines[0].startswith(f"{tmp_path / 'broken.py'}:1:") and " AG100 syntax error" in lines[0]
    assert lines[1].startswith(f"{tmp_path / 'fine.py'}:4:5: AG103 ")


def test_json_format(capsys):
    status, out, _ = _cli(capsys, FIXTURES / "ag101_library_call_on_tensor.py", "--format", "json")
    records = json.loads(out)
    assert status == 1 and len(records) == 4
    assert set(records[0]) == {"path", "line", "col", "code", "message", "fix"}
    assert records[0]["code"] == "AG101" and records[0]["fix"] == "use rt.exp(x)"
    assert [(r["line"], r["col"]) for r in records] == sorted((r["line"], r["col"]) for r in records)


def test_select_and_ignore(capsys):
    path = FIXTURES / "ag110_tensor_as_python_value.py"
    everything = check_paths([str(path)])
    assert check_paths([str(path)], select=["AG110"]) == everything
    assert check_paths([str(path)], ignore=["AG110"]) == []
    assert check_paths([str(path)], select=["AG1"], ignore=["AG11"]) == []
    status, out, _ = _cli(capsys, FIXTURES / "ag102_random_and_clock.py", "--select", "AG101,AG103")
    assert status == 0 and out == ""
    with pytest.raises(UsageError):
        check_paths([str(path)], select=["XYZ"])


def test_inline_pragma(tmp_path):
    source = (
        "import numpy as np\nimport autograph as ag\n@ag.function\ndef f(x):\n"
        "    print('a')  # autograph: ignore[AG103]\n"
        "    print('b')  # autograph: ignore[AG101]\n"
        "    return x + np.random.rand()  # autograph: ignore\n"
    )
    path = tmp_path / "pragma.py"
    path.write_text(source)
    assert [(f.line, f.code) for f in check_paths([str(path)])] == [(6, "AG103")]


def test_one_function_target_checks_it_and_its_callees():
    path = FIXTURES / "ag107_unrolled_loop.py"
    lines = {f.line for f in check_paths([f"{path}:model"])}
    assert lines == {24}  # deepen's loop, reached from model only
    assert {f.line for f in check_paths([f"{path}:repeat"])} == {9}


def test_wrapping_and_import_spellings_are_recognized():
    source = (
        "from autograph import function\nimport autograph\nimport autograph as ag\n"
        "def a(x):\n    print('a')\n    return x\n"
        "a_traced = ag.function(a)\n"
        "def b(x):\n    print('b')\n    return x\n"
        "b_traced = ag.function(input_signature=None)(b)\n"
        "@function\ndef c(x):\n    print('c')\n    return x\n"
        "@autograph.function(jit_compile=True)\ndef d(x):\n    print('d')\n    return x\n"
        "def untraced(x):\n    print('never traced')\n    return x\n"
    )
    assert [f.line for f in check_source(source, "m.py")] == [5, 9, 14, 18]


# -- one table: rules, README, rt spellings -----------------------------------------------


def test_readme_code_table_is_generated_from_the_rules():
    readme = (ROOT / "README.md").read_text()
    assert rules.markdown_table() in readme, "README.md: paste rules.markdown_table() into 'Checking the tracing rules'"


def test_suggested_rt_ops_exist():
    for target in set(equivalents.RT_OPS.values()) | {"cast", "py_function", "print"}:
        assert callable(getattr(rt, target)), target
    for target in set(equivalents.RANDOM.values()) | {"set_seed"}:
        assert callable(getattr(rt.random, target)), target


# -- the reports describe what really happens ----------------------------------------------


def _load(name):
    spec = importlib.util.spec_from_file_location(f"check_fixture_{name}", FIXTURES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


VECTOR = np.array([1.0, 2.0, 3.0], np.float32)


def test_reported_behaviour_is_real(capsys):
    m = _load("ag101_library_call_on_tensor")
    with pytest.raises(ag.TracingError, match=r"np\.exp was called on the symbolic tensor .*use rt\.exp"):
        m.softplus(VECTOR)
    m = _load("ag102_random_and_clock")
    assert m.noisy(VECTOR)[0] == m.noisy(VECTOR)[0]
    m = _load("ag103_print_and_logging")
    m.step(VECTOR), m.step(VECTOR)
    assert capsys.readouterr().out.count("tracing step") == 1
    m = _load("ag104_outer_mutation")
    m.remember(VECTOR), m.remember(VECTOR)
    assert len(m.SEEN) == 1
    m = _load("ag106_variable_without_guard")
    with pytest.raises(ag.TracingError, match="is created on every call"):  # on the first call
        m.accumulate(np.float32(1))
    m = _load("ag107_unrolled_loop")
    ops = [op.type for op in m.repeat.get_concrete_function(VECTOR).graph.operations]
    assert ops.count("Tanh") == 4 and "While" not in ops
    m = _load("ag108_shape_bound")
    assert "While" not in [op.type for op in m.row_sum.get_concrete_function(VECTOR).graph.operations]
    open_size = ag.function(m.row_sum.python_function, input_signature=[rt.TensorSpec((None,), "float32")])
    assert open_size(VECTOR) == m.row_sum.python_function(VECTOR)  # the size read when the graph runs
    assert "While" in [op.type for op in open_size.get_concrete_function(VECTOR).graph.operations]
    m = _load("ag109_static_condition")
    assert "If" not in [op.type for op in m.first_or_zero.get_concrete_function(VECTOR).graph.operations]
    m = _load("ag110_tensor_as_python_value")
    for function in (m.apply_relu, m.count, m.flag, m.total, m.pairs):
        with pytest.raises(ag.TracingError):
            function(VECTOR)
    assert m.scaled(VECTOR).tolist() == [3.0, 6.0, 9.0]


def test_clean_fixture_runs():
    m = _load("clean")
    assert m.collatz(np.int32(27)) == 111
    assert m.running_sum(VECTOR) == 6.0
    model = m.Model()
    model(VECTOR), model(VECTOR)
    np.testing.assert_allclose(m.with_py_function(VECTOR[::-1].copy()), VECTOR)


def test_check_modules_stay_small():
    for module in (ROOT / "autograph" / "check").glob("*.py"):
        assert len(module.read_text().splitlines()) < 450, module.name
