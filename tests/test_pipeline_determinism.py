"""Generated code is byte-identical across runs and hash seeds."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_SCRIPT = """
import sys
sys.path.insert(0, {examples!r})
import autograph as ag
import quickstart
for name in ("collatz", "first_negative", "sum_odd_until", "clip", "primes_below"):
    sys.stdout.write(ag.to_code(getattr(quickstart, name)))
"""


def _generate(seed):
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    result = subprocess.run(
        [sys.executable, "-c", _SCRIPT.format(examples=os.path.join(ROOT, "examples"))],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_to_code_is_identical_across_hash_seeds():
    first = _generate(0)
    assert "def collatz(n):" in first
    assert _generate(12345) == first
    assert _generate(987) == first
