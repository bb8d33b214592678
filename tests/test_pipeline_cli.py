"""The `autograph` command line: `show`, its exit statuses and messages."""

import os
import subprocess
import sys
import textwrap

import pytest

from autograph import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUICKSTART = os.path.join(ROOT, "examples", "quickstart.py")


def run(argv, capsys):
    status = cli.main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_show_prints_generated_code(capsys):
    status, out, err = run(["show", f"{QUICKSTART}:collatz"], capsys)
    assert status == 0 and err == ""
    assert out.startswith("def collatz(n):\n")
    assert "ag__.while_stmt(loop_test, loop_body" in out
    assert "ag__.if_stmt(n % 2 == 0, if_body, else_body" in out


def test_show_does_not_import_the_file(tmp_path, capsys):
    path = tmp_path / "explodes.py"
    path.write_text(
        textwrap.dedent(
            """
            raise SystemExit("imported!")

            class Model:
                def step(self, x):
                    if x:
                        return helper(x)
                    return 0
            """
        )
    )
    status, out, err = run(["show", f"{path}:Model.step"], capsys)
    assert status == 0, err
    assert "ag__.converted_call(helper, x)" in out


def test_show_nested_function(tmp_path, capsys):
    path = tmp_path / "nested.py"
    path.write_text("def outer():\n    def inner(x):\n        return x or 1\n    return inner\n")
    status, out, _ = run(["show", f"{path}:outer.inner"], capsys)
    assert status == 0 and out == "def inner(x):\n    return ag__.or_(x, lambda: 1)\n"


def test_show_after_a_pass(capsys):
    status, out, _ = run(["show", f"{QUICKSTART}:sum_odd_until", "--after", "continue_statements"], capsys)
    assert status == 0
    assert "break_ = False" in out and "if not i % 2 == 0:" in out and "ag__" not in out


def test_missing_file_is_bad_usage(capsys):
    status, out, err = run(["show", "no/such/file.py:f"], capsys)
    assert status == 2 and out == ""
    assert err == "autograph show: no such file: no/such/file.py\n"


def test_unknown_function_is_bad_usage(capsys):
    status, _, err = run(["show", f"{QUICKSTART}:nope"], capsys)
    assert status == 2
    assert "no function named 'nope' in" in err and "Class.method" in err


def test_malformed_target_is_bad_usage(capsys):
    status, _, err = run(["show", "quickstart.py"], capsys)
    assert status == 2 and "expected FILE.py:FUNC" in err


def test_syntax_error_in_file_is_bad_usage(tmp_path, capsys):
    path = tmp_path / "broken.py"
    path.write_text("def f(:\n    pass\n")
    status, _, err = run(["show", f"{path}:f"], capsys)
    assert status == 2
    assert f"{path}:1: syntax error:" in err and "Traceback" not in err


def test_conversion_error_exit_status_1(tmp_path, capsys):
    path = tmp_path / "gen.py"
    path.write_text("def f(n):\n    for i in range(n):\n        yield i\n")
    status, out, err = run(["show", f"{path}:f"], capsys)
    assert status == 1 and out == ""
    assert f"'yield' (a generator function) is not supported in converted code: found in function 'f' at {path}:3" in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_unknown_pass_and_missing_command_are_bad_usage(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["show", f"{QUICKSTART}:collatz", "--after", "nope"])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        cli.main([])
    assert info.value.code == 2
    capsys.readouterr()


def test_help_lists_the_subcommands(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "show" in out


def test_console_entry_point_in_a_subprocess():
    result = subprocess.run(
        [sys.executable, "-m", "autograph.cli", "show", f"{QUICKSTART}:clip"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("def clip(x, low, high):")


def test_a_reader_that_goes_away_gets_no_traceback():
    process = subprocess.Popen(
        [sys.executable, "-m", "autograph.cli", "graph", f"{QUICKSTART}:collatz", "--arg", "int32[]",
         "--format", "json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    process.stdout.close()  # as `| head -c 0` would
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == 1
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
