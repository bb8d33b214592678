"""The node copiers' code cache (``autograph/pyct/node_copiers.py``): a later process loads what an
earlier one compiled, keyed by source; a stale, corrupt or foreign file is ignored; nothing is
written when Python writes no bytecode."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys

import pytest

from autograph.pyct import node_copiers

BODY = "    d['value'] = old['value'] * 2\n"


class Box:
    def __init__(self, value):
        self.value = value


@pytest.fixture
def cache(tmp_path, monkeypatch):
    path = tmp_path / "copiers.marshal"
    monkeypatch.setattr(node_copiers, "_CACHE", str(path))
    monkeypatch.setattr(node_copiers, "_codes", {})
    monkeypatch.setattr(node_copiers, "_state", {"loaded": False, "compiled": False})
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return path


def _double():
    return node_copiers.copier("node", BODY, _new=Box.__new__, _target=Box)


def test_a_compiled_copier_is_saved_and_loaded_by_its_source(cache, monkeypatch):
    assert _double()(Box(21)).value == 42
    node_copiers._save()
    loaded = node_copiers._load()
    assert len(loaded) == 1 and "old['value'] * 2" in next(iter(loaded))
    # a later process: the code comes from the file, nothing is compiled
    monkeypatch.setattr(node_copiers, "_codes", {})
    monkeypatch.setattr(node_copiers, "_state", {"loaded": False, "compiled": False})
    monkeypatch.setattr(node_copiers, "compile", lambda *a: pytest.fail("compiled again"), raising=False)
    assert _double()(Box(5)).value == 10


@pytest.mark.parametrize("content", [b"", b"not marshal", marshal.dumps((("3.0", 1), {})), marshal.dumps([1, 2])])
def test_a_corrupt_or_foreign_file_is_ignored(cache, content):
    cache.write_bytes(content)
    assert node_copiers._load() == {}
    assert _double()(Box(1)).value == 2


def test_nothing_is_written_when_python_writes_no_bytecode(cache, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    _double()
    node_copiers._save()
    assert not cache.exists()


def test_a_later_process_loads_the_copiers_of_a_conversion(tmp_path):
    code = (
        "import sys, numpy as np\n"
        "from autograph.pyct import node_copiers\n"
        f"node_copiers._CACHE = {str(tmp_path / 'c.marshal')!r}\n"
        "import autograph as ag\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "import fn\n"
        "assert ag.function(fn.f)(np.int32(3)) == 6\n"
        "print(len(node_copiers._codes), node_copiers._state['compiled'])\n"
    )
    (tmp_path / "fn.py").write_text("def f(x):\n    if x > 0:\n        x = x * 2\n    return x\n")
    run = [sys.executable, "-c", code]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    first = subprocess.run(run, capture_output=True, text=True, check=True, env=env).stdout.split()
    second = subprocess.run(run, capture_output=True, text=True, check=True, env=env).stdout.split()
    assert int(first[0]) > 10 and first[1] == "True"
    assert second == [first[0], "False"]  # all loaded, none compiled
