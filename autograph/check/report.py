"""Findings and how they are printed, filtered and silenced.

A ``Finding`` is one line of the report.  Text output is flake8's
``path:line:col: CODE message; fix: ...`` (``col`` counts from 1); JSON is
a list of ``{path, line, col, code, message, fix}`` objects.  Both are
sorted by path, line, column and code.

``--select`` / ``--ignore`` take codes or code prefixes (``AG10``);
``# autograph: ignore[AG101,AG103]`` at the end of the reported line
silences those codes there, ``# autograph: ignore`` silences all of them.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass

from autograph.check.rules import RULES

_PRAGMA = re.compile(r"#\s*autograph:\s*ignore(?:\[([A-Za-z0-9_,\s]*)\])?")


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int
    col: int
    code: str
    message: str
    fix: str

    def __str__(self):
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}; fix: {self.fix}"


class UsageError(Exception):
    """Bad command line (unknown code, missing path, unknown function): exit status 2."""


def codes_matching(patterns, option) -> set:
    """The codes named by ``patterns`` (codes or prefixes); ``UsageError`` for one naming none."""
    matched = set()
    for pattern in patterns:
        hits = {code for code in RULES if code.startswith(pattern.strip().upper())}
        if not pattern.strip() or not hits:
            raise UsageError(f"{option}: unknown code {pattern!r} (known: {', '.join(sorted(RULES))})")
        matched |= hits
    return matched


def enabled_codes(select=(), ignore=()) -> set:
    chosen = codes_matching(select, "--select") if select else set(RULES)
    return chosen - codes_matching(ignore, "--ignore")


def silenced(finding: Finding, lines) -> bool:
    """Whether the reported line carries an ``# autograph: ignore`` pragma for this code."""
    if not 0 < finding.line <= len(lines):
        return False
    match = _PRAGMA.search(lines[finding.line - 1])
    if match is None:
        return False
    if match.group(1) is None:
        return True
    return finding.code in {c.strip().upper() for c in match.group(1).split(",")}


def format_text(findings) -> str:
    return "".join(f"{finding}\n" for finding in findings)


def format_json(findings) -> str:
    return json.dumps([asdict(f) for f in findings], indent=2) + "\n"
