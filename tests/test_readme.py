"""README.md stays true: its quickstart runs, and its tour shows today's generated code."""

from __future__ import annotations

import importlib.util
import pathlib
import re

import numpy as np

import autograph as ag

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


def _import_block(source: str, tmp_path):
    path = tmp_path / "readme_quickstart.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("readme_quickstart", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quickstart_runs_and_gives_what_it_says(tmp_path, capsys):
    module = _import_block(PYTHON_BLOCKS[0], tmp_path)
    assert module.collatz(27) == 111
    result = module.graph_collatz(np.int32(27))
    assert result == 111 and isinstance(result, np.integer)
    types = {op.type for op in module.graph_collatz.get_concrete_function(np.int32(27)).graph.operations}
    assert "While" in types


def test_tour_shows_the_code_generated_today():
    spec = importlib.util.spec_from_file_location("quickstart", ROOT / "examples" / "quickstart.py")
    quickstart = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(quickstart)
    assert PYTHON_BLOCKS[1].rstrip("\n") == ag.to_code(quickstart.collatz).rstrip("\n"), (
        "README.md's tour is out of date: paste the output of "
        "`autograph show examples/quickstart.py:collatz` into it"
    )
