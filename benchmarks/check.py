"""Benchmark: how fast ``autograph check`` reads code.

Usage: ``python benchmarks/check.py [--repeat N]``

Checks, in one process, the check corpora and fixtures (dense with traced
functions and findings) and the repository's own ``tests/`` folder (a
realistic mix: mostly code that is not traced), and prints for each the
lines read, the best time over ``--repeat`` runs (the machine may be
shared; the minimum is the stable figure), lines per second and the time
per 1,000 lines.  The whole run -- reading, parsing, analysis, report -- is
timed, as ``check_paths`` does it.  Not part of the test run.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from autograph.check import check_paths, python_files  # noqa: E402

SETS = {
    "check corpora + fixtures": [
        os.path.join(ROOT, "tests", "corpus_check_bad.py"),
        os.path.join(ROOT, "tests", "corpus_check_clean.py"),
        *sorted(glob.glob(os.path.join(ROOT, "fixtures", "check", "*.py"))),
    ],
    "tests/ (whole folder)": [os.path.join(ROOT, "tests")],
}


def _lines(paths) -> int:
    total = 0
    for path in paths:
        for name in python_files(path):
            with open(name, encoding="utf-8") as f:
                total += sum(1 for _ in f)
    return total


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"{'files':<28}{'lines':>8}{'findings':>10}{'best s':>10}{'lines/s':>12}{'s/1000 lines':>14}")
    for label, paths in SETS.items():
        lines = _lines(paths)
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            findings = check_paths(paths)
            best = min(best, time.perf_counter() - start)
        print(f"{label:<28}{lines:>8}{len(findings):>10}{best:>10.3f}{lines / best:>12,.0f}{1000 * best / lines:>14.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
