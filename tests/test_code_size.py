"""Every source module stays readable in one sitting: at most 450 lines, no function over 60.

The limits of the architecture issue, kept true: a module that grows past
them is split by what its parts do, a function by its steps.  Nothing is
excluded: generated code and golden files are not under the source roots.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCE_ROOTS = ("autograph", "converters", "runtime")
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 60

SOURCES = sorted(path for root in SOURCE_ROOTS for path in (ROOT / root).rglob("*.py"))


def _name(path: pathlib.Path) -> str:
    return str(path.relative_to(ROOT))


def long_functions(source: str, limit: int):
    """(name, first line, lines) of each function or method of ``source`` longer than ``limit`` lines."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = node.end_lineno - first + 1
            if length > limit:
                found.append((node.name, first, length))
    return found


def test_the_sources_are_found():
    assert len(SOURCES) > 100 and all(_name(p).split("/")[0] in SOURCE_ROOTS for p in SOURCES)


@pytest.mark.parametrize("path", SOURCES, ids=_name)
def test_module_size(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_MODULE_LINES, f"{_name(path)} has {lines} lines (at most {MAX_MODULE_LINES}): split it"


@pytest.mark.parametrize("path", SOURCES, ids=_name)
def test_function_size(path):
    found = long_functions(path.read_text(), MAX_FUNCTION_LINES)
    assert not found, "\n".join(f"{_name(path)}:{line}: {name} has {n} lines (at most {MAX_FUNCTION_LINES})"
                                for name, line, n in found)


def test_the_function_check_measures_decorators_and_nested_functions():
    body = "\n".join(f"    x{i} = {i}" for i in range(59))
    source = f"@dec\ndef f():\n{body}\n\nclass C:\n    def g(self):\n        def h():\n" + \
        "\n".join(f"            y{i} = {i}" for i in range(60))
    assert long_functions(source, 60) == [("f", 1, 61), ("g", 64, 62), ("h", 65, 61)]
