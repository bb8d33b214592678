"""Shared pytest configuration: the ``--regen-golden`` option.

Golden files under ``fixtures/`` are rewritten only when the run is started
with ``python -m pytest tests/test_golden.py --regen-golden``; every other
run compares against them.
"""

import pytest


def pytest_addoption(parser):
    parser.addoption(
        "--regen-golden",
        action="store_true",
        default=False,
        help="rewrite fixtures/<converter>/<case>.expected.py from ag.to_code output",
    )


@pytest.fixture
def regen_golden(request) -> bool:
    """Whether golden files are being regenerated in this run."""
    return bool(request.config.getoption("--regen-golden"))
