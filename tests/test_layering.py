"""Layering: imports point one way (contracts in pyproject.toml, [tool.importlinter]).

``lint-imports`` (import-linter, installed by the ``test`` extra) checks the
contracts.  It finds modules by walking the root package's directory, and
``autograph.converters`` / ``autograph.runtime`` live in sibling directories
mapped by ``package-dir``, so the test lays the three trees out as they
install (a copy of the sources under a temporary directory) and runs the
tool there.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_hold(tmp_path):
    beside = Path(sys.executable).with_name("lint-imports")  # the venv running pytest, if not on PATH
    tool = shutil.which("lint-imports") or (str(beside) if beside.exists() else None)
    if tool is None:
        pytest.fail("import-linter is not installed: the test extra declares it (pip install -e .[test])")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "autograph", tmp_path / "autograph", ignore=ignore)
    shutil.copytree(ROOT / "converters", tmp_path / "autograph" / "converters", ignore=ignore)
    shutil.copytree(ROOT / "runtime", tmp_path / "autograph" / "runtime", ignore=ignore)
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    result = subprocess.run(
        [tool, "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_importing_converters_loads_neither_numpy_nor_the_runtime():
    code = (
        "import sys, autograph.converters\n"
        "loaded = sorted(m for m in sys.modules if m == 'numpy' or m.startswith(('numpy.', 'autograph.runtime')))\n"
        "print(loaded)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_public_namespaces_list_only_public_names():
    import autograph as ag
    from autograph import runtime as rt

    assert dir(ag) == sorted(ag.__all__)
    assert set(dir(rt)) == set(rt.__all__)
    for internal in ("core", "ops", "tracing", "exec", "backends", "optimizer", "operators", "errors"):
        assert internal not in dir(rt)
    assert all(hasattr(rt, name) for name in rt.__all__)
