"""Running one piece of work on THREADS threads at once, with frequent thread switches."""

from __future__ import annotations

import sys
import threading

import pytest

THREADS = 8


@pytest.fixture
def frequent_switches():
    """Switches threads every microsecond, so races show up in a short test."""
    saved = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(saved)


def run_threads(work):
    """``work(t)`` on THREADS threads started together (t = 0, 1, ...); fails on any error they raise."""
    barrier = threading.Barrier(THREADS)
    errors = []

    def run(t):
        try:
            barrier.wait()
            work(t)
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[:3]
