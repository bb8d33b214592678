"""``autograph graph FILE.py:FUNC --arg ...`` (autograph/cli_graph.py)."""

from __future__ import annotations

import json
import textwrap

import pytest

from autograph import cli_graph
from autograph.runtime.core.tensor import TensorSpec

MODULE = textwrap.dedent(
    """
    import numpy as np
    from autograph import runtime as rt

    def affine(x, n):
        return x * n + 1

    @rt.function
    def noisy(x):
        rt.print("x is", x)
        return rt.sin(x)

    def branchy(x):
        if x > 0:
            x = x * 2
        return x

    def broken(x):
        return x + np.zeros(5, np.float32)

    def typo(x):
        return x + "1"

    def complex_operand(x):
        return x + np.array([1j])

    class Holder:
        scale = 3

    NOT_CALLABLE = 4
    """
)


@pytest.fixture
def module_path(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODULE)
    return str(path)


def run(capsys, *argv):
    code = cli_graph.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_parse_arg():
    assert cli_graph.parse_arg("float32[3]") == TensorSpec((3,), "float32")
    assert cli_graph.parse_arg("int32[]") == TensorSpec((), "int32")
    assert cli_graph.parse_arg("float64[?, 2]") == TensorSpec((None, 2), "float64")
    assert cli_graph.parse_arg("bool") == TensorSpec((), "bool")
    assert cli_graph.parse_arg("3") == 3
    assert cli_graph.parse_arg("'mode'") == "mode"
    with pytest.raises(cli_graph.UsageError, match="neither a tensor spec"):
        cli_graph.parse_arg("float33[2]")
    with pytest.raises(cli_graph.UsageError, match="dimension 'x'"):
        cli_graph.parse_arg("float32[x]")


def test_text_output(capsys, module_path):
    code, out, err = run(capsys, f"{module_path}:affine", "--arg", "float32[3]", "--arg", "2", "--no-autograph")
    assert code == 0, err
    assert out.startswith("graph affine(")
    assert "Mul(" in out and "Add(" in out and "float32[3]" in out


def test_decorated_function_is_used_as_is(capsys, module_path):
    code, out, err = run(capsys, f"{module_path}:noisy", "--arg", "float32[?]")
    assert code == 0, err
    assert "Print(" in out and "Sin(" in out and "float32[?]" in out
    assert not [line for line in out.splitlines() if line.startswith("x is")]  # tracing does not print


def test_json_output_round_trips(capsys, module_path):
    from autograph.runtime.core.graph import Graph

    argv = [f"{module_path}:affine", "--arg", "int32[2]", "--arg", "5", "--format", "json", "--no-autograph"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    graph = Graph.from_graph_def(json.loads(out))
    import numpy as np

    from autograph.runtime.exec.interpreter import run_graph

    assert list(run_graph(graph, [np.array([1, 2], np.int32)])[0]) == [6, 11]


def test_dot_and_python_outputs(capsys, module_path):
    code, out, err = run(capsys, f"{module_path}:noisy", "--arg", "float32[]", "--format", "dot")
    assert code == 0, err
    assert out.lstrip().startswith("digraph")
    affine = [f"{module_path}:affine", "--arg", "float32[]", "--no-autograph"]
    code, out, err = run(capsys, *affine, "--arg", "2", "--format", "python")
    assert code == 0, err
    assert out.startswith("def ")


def test_optimized_and_report(capsys, module_path):
    affine = [f"{module_path}:affine", "--arg", "float32[]", "--arg", "1", "--no-autograph"]
    code, out, err = run(capsys, *affine, "--optimized")
    assert code == 0, err
    assert "Mul(" not in out  # x * 1 simplified away
    code, out, err = run(capsys, *affine, "--optimize-report")
    assert code == 0, err
    assert "simplify" in out and "total:" in out


def test_converted_control_flow(capsys, module_path):
    code, out, err = run(capsys, f"{module_path}:branchy", "--arg", "float32[]")
    assert code == 0, err
    assert "If(" in out


def test_usage_errors_exit_2(capsys, module_path, tmp_path):
    code, _, err = run(capsys, f"{module_path}:missing", "--arg", "float32[]")
    assert code == 2 and "has no 'missing'" in err
    code, _, err = run(capsys, f"{tmp_path}/nowhere.py:f")
    assert code == 2 and "no such file" in err
    code, _, err = run(capsys, "model.py")
    assert code == 2 and "FILE.py:FUNC" in err
    code, _, err = run(capsys, f"{module_path}:NOT_CALLABLE")
    assert code == 2 and "not a function" in err
    code, _, err = run(capsys, f"{module_path}:affine", "--arg", "float32[]", "--no-autograph")
    assert code == 2 and "missing a required argument: 'n'" in err
    code, _, err = run(capsys, f"{module_path}:affine", "--format", "svg")
    assert code == 2
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    code, _, err = run(capsys, f"{bad}:f")
    assert code == 2 and "syntax error" in err


def test_tracing_and_import_errors_exit_1(capsys, module_path, tmp_path):
    code, _, err = run(capsys, f"{module_path}:broken", "--arg", "float32[3]", "--no-autograph")
    assert code == 1 and "Add" in err and "cannot be broadcast" in err
    raising = tmp_path / "raising.py"
    raising.write_text("raise RuntimeError('boom at import')\n")
    code, _, err = run(capsys, f"{raising}:f")
    assert code == 1 and "boom at import" in err


def test_help_says_the_file_is_imported(capsys):
    with pytest.raises(SystemExit):
        import argparse

        parser = argparse.ArgumentParser(prog="autograph")
        cli_graph.add_parser(parser.add_subparsers()).parse_args(["--help"])
    out = capsys.readouterr().out
    assert "IMPORTS" in out


def test_dispatched_by_the_autograph_command(capsys, module_path):
    from autograph import cli

    code = cli.main(["graph", f"{module_path}:affine", "--arg", "float32[2]", "--arg", "3", "--no-autograph"])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("graph affine(")


def test_console_script(module_path):
    import shutil
    import subprocess

    exe = shutil.which("autograph")
    if exe is None:
        pytest.fail("the autograph console script is not installed: pip install -e . installs it")
    done = subprocess.run(
        [exe, "graph", f"{module_path}:noisy", "--arg", "float32[3]"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "Sin(" in done.stdout


def test_type_errors_while_tracing_exit_1_with_the_users_line(capsys, module_path):
    code, _, err = run(capsys, f"{module_path}:typo", "--arg", "float32[]")
    assert code == 1 and f"tracing typo raised TypeError at {module_path}:" in err and "'str'" in err
    code, _, err = run(capsys, f"{module_path}:complex_operand", "--arg", "float32[]", "--no-autograph")
    assert code == 1 and f"Add at {module_path}:" in err and "complex128" in err


def test_arguments_not_fitting_the_function_exit_2(capsys, module_path):
    code, _, err = run(capsys, f"{module_path}:affine", "--arg", "float32[]", "--arg", "2", "--arg", "3")
    assert code == 2 and "too many positional arguments" in err
    code, _, err = run(capsys, f"{module_path}:noisy", "--arg", "complex64[]")
    assert code == 2
