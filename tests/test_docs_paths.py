"""Every module path the docs name exists: dotted ``autograph.x.y`` names and file paths.

Read from the docstrings and comments of the sources, ARCHITECTURE.md and
README.md, so a module that is renamed or removed cannot stay named in
the text that tells a reader where to look.
"""

from __future__ import annotations

import ast
import importlib
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCE_ROOTS = ("autograph", "converters", "runtime")
# Names that look like module paths and are not: the graph file's format string.
NOT_PATHS = {"autograph.GraphDef"}
DOTTED = re.compile(r"\bautograph(?:\.\w+)+")
FILE = re.compile(r"(?<![\w/.])((?:autograph|converters|runtime|tests|benchmarks|examples|fixtures)/[\w/.\-]*\w)")
RUNTIME_RELATIVE = re.compile(r"(?<![\w/.])((?:core|ops|operators|tracing|exec|optimizer|backends|autodiff|data|check)"
                              r"/[\w/]*\w\.py)")


def documents():
    """(where, text) for each docstring and the comments of every source file, and the two guides."""
    for root in SOURCE_ROOTS:
        for path in sorted((ROOT / root).rglob("*.py")):
            source = path.read_text()
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node)
                    if doc:
                        yield f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 1)}", doc
            comments = [line for line in source.splitlines() if line.lstrip().startswith("#")]
            yield f"{path.relative_to(ROOT)} (comments)", "\n".join(comments)
    for guide in ("ARCHITECTURE.md", "README.md"):
        yield guide, (ROOT / guide).read_text()


def resolves(dotted: str) -> bool:
    """``dotted`` is a module, or an attribute chain of the longest module it starts with."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(value, name):
                return False
            value = getattr(value, name)
        return True
    return False


def file_exists(path: str) -> bool:
    return (ROOT / path).exists()


def relative_exists(path: str) -> bool:
    return any((ROOT / base / path).exists() for base in ("runtime", "autograph", "."))


def test_dotted_module_paths_in_the_docs_exist():
    stale = sorted({(where, name) for where, text in documents() for name in DOTTED.findall(text)
                    if name not in NOT_PATHS and not resolves(name)})
    assert not stale, "docs name modules that do not exist:\n" + "\n".join(f"  {w}: {n}" for w, n in stale)


def test_file_paths_in_the_docs_exist():
    stale = sorted({(where, path) for where, text in documents() for path in FILE.findall(text)
                    if not file_exists(path)})
    stale += sorted({(where, path) for where, text in documents() for path in RUNTIME_RELATIVE.findall(text)
                     if not relative_exists(path)})
    assert not stale, "docs name files that do not exist:\n" + "\n".join(f"  {w}: {p}" for w, p in stale)
