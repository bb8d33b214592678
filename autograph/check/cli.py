"""``autograph check PATH...``: report where traced functions break the tracing rules.

``PATH`` is a file, a folder (its ``.py`` files, recursively) or
``FILE.py:FUNC`` (one function, ``Class.method`` or ``outer.inner``).  The
files are parsed, never imported or run.

Exit status: 0 when nothing is reported, 1 with findings (an unparsable
file is the finding ``AG100``), 2 on bad usage (missing path, unknown
function, unknown code in ``--select`` / ``--ignore``).

Interface for ``autograph/cli.py``: ``add_parser(subparsers)`` registers
the sub-command; its parser sets ``handler=run``.
"""

from __future__ import annotations

import argparse
import sys

from autograph.check import check_paths, report
from autograph.check.rules import RULES

HELP = "report trace-time side effects, constants and unrolled loops in traced functions (FILE is parsed, not imported)"

_USAGE = 2


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Registers ``check`` on an ``argparse`` sub-parsers object; returns its parser."""
    parser = subparsers.add_parser(
        "check",
        help=HELP,
        description="Statically check the functions traced by ag.function (and the functions of the same "
        "module they call) for code that runs once while tracing instead of at every call. Codes: "
        + ", ".join(f"{code} {rule.summary}" for code, rule in sorted(RULES.items())),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="FILE.py, FOLDER or FILE.py:FUNC")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--select", default="", metavar="CODES", help="comma-separated codes or prefixes to report")
    parser.add_argument("--ignore", default="", metavar="CODES", help="comma-separated codes or prefixes to skip")
    parser.set_defaults(handler=run)
    return parser


def _codes(option: str) -> list:
    return [c for c in option.split(",") if c.strip()] if option else []


def run(args) -> int:
    try:
        if args.select and not _codes(args.select):
            raise report.UsageError("--select: no code given")
        findings = check_paths(args.paths, select=_codes(args.select), ignore=_codes(args.ignore))
    except report.UsageError as e:
        print(f"autograph check: {e}", file=sys.stderr)
        return _USAGE
    out = report.format_json(findings) if args.format == "json" else report.format_text(findings)
    sys.stdout.write(out)
    return 1 if findings else 0

