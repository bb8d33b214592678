"""``autograph check``: the tracing rules, checked statically (nothing is imported or run).

``check_paths(["src/", "model.py:train_step"])`` parses each file with
``ast``, finds the functions it traces (``symbols.entries``: decorated with
``ag.function`` / ``ag.do_not_convert`` / ``rt.function``, or wrapped as
``g = ag.function(f)``; with ``FILE.py:FUNC`` just that one), follows their
calls into the same module (``program``), decides which names hold tensors
(``taint``) and reports what runs once while tracing instead of at every
call (``detect``; ``stale_attributes`` reads the module code that calls
them), in the words of one table of codes (``rules.RULES``).

The result is a sorted list of ``report.Finding``; ``check_source`` does
the same for one source string.  A file that does not parse is one
``AG100`` finding (the other files are still checked), so a folder with a
broken file exits with status 1, like any other finding.
"""

from __future__ import annotations

import ast
import os

from autograph.check import detect, program, rules, stale_attributes
from autograph.check.report import Finding, UsageError, enabled_codes, silenced
from autograph.check.symbols import ModuleSymbols
from autograph import loading

__all__ = ["Finding", "UsageError", "check_paths", "check_source", "python_files", "split_target"]


def check_source(source: str, path: str, function: str | None = None) -> list:
    """Findings for the source of one file (``function``: a qualname, to check that one only)."""
    try:
        tree = ast.parse(source, path)
    except (SyntaxError, ValueError) as e:
        line, col = getattr(e, "lineno", None) or 1, getattr(e, "offset", None) or 1
        message, fix = rules.describe("AG100", {"error": f"syntax error: {getattr(e, 'msg', e)}"})
        return [Finding(path, line, col, "AG100", message, fix)]
    symbols = ModuleSymbols(tree)
    if function is None:
        entries = symbols.entries
    else:
        node = loading.find_in_module(tree, function)
        if node is None:
            raise UsageError(f"no function named {function!r} in {path} (give a top-level function, "
                             "Class.method or outer.inner)")
        entries = {node: symbols.entries.get(node) or symbols.decorator_mode(node) or "converted"}
    found = set()
    reported = [item for facts in program.analyse_module(symbols, entries) for item in detect.findings(facts, source)]
    if function is None:  # module-level code that calls the traced functions
        reported += stale_attributes.findings(symbols, source)
    for node, code, fields in reported:
        message, fix = rules.describe(code, fields)
        found.add(Finding(path, node.lineno, node.col_offset + 1, code, message, fix))
    return sorted(found)


def split_target(target: str):
    """``(path, function or None)`` of ``FILE.py``, ``FOLDER`` or ``FILE.py:FUNC``."""
    path, sep, function = target.rpartition(":")
    if sep and path.endswith(".py") and function and not os.path.exists(target):
        return path, function
    return target, None


def python_files(path: str) -> list:
    """``path`` itself if it is a file, else the ``.py`` files under it (hidden folders skipped), sorted."""
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        raise UsageError(f"no such file or folder: {path}")
    found = []
    for folder, subfolders, files in os.walk(path):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(".") and d != "__pycache__")
        found += [os.path.join(folder, f) for f in files if f.endswith(".py")]
    return sorted(found)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except UnicodeDecodeError as e:
        raise UsageError(f"cannot read {path}: not UTF-8 ({e.reason})") from None
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror}") from None


def check_paths(targets, select=(), ignore=()) -> list:
    """Findings for files, folders and ``FILE.py:FUNC`` targets, filtered by codes and pragmas."""
    codes = enabled_codes(select, ignore)
    work = []
    for target in targets:
        path, function = split_target(target)
        if function is not None and not os.path.isfile(path):
            raise UsageError(f"no such file: {path}")
        work += [(p, function) for p in python_files(path)]
    findings = set()
    for path, function in work:
        source = _read(path)
        lines = source.splitlines()
        for finding in check_source(source, path, function):
            if finding.code in codes and not silenced(finding, lines):
                findings.add(finding)
    return sorted(findings)
