"""First call of ``ag.function`` in machine instructions: a figure a noisy machine does not move.

``python benchmarks/first_call_instructions.py [--calls N] [--against TREE] [--convert-only | --corpus]``

On a shared machine the wall-clock first call (``first_call.py``) moves by
30% from one run to the next, far more than a change under review.  This
script counts the instructions one first call executes, under valgrind's
``callgrind`` tool (``valgrind`` must be on PATH): a process making ``N``
first calls of fresh functions (``programs.FIRST_CALL_SOURCE``, each in a
module of its own, as ``first_call.py`` does) minus one making none, divided
by ``N``.  The count is deterministic to a fraction of a percent.

``--against TREE``: also counts it for another checkout of autograph (say
``git worktree add /tmp/before <commit>``) in the same run, and prints the
ratio -- the before/after of a change.
``--convert-only``: the calls are ``ag.convert`` (conversion alone).
``--corpus``: the calls are cold ``ag.convert`` of each of ``conversion.py``'s 24
functions (the conversion median of ``run.py``, counted instead of timed); the
figure is per function.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# Run in the measured process: N fresh functions, two warm-up first calls (imports, kernel tables), then N calls.
_DRIVER = r'''
import sys, tempfile
import numpy as np
sys.path.insert(0, {benchmarks!r})
import autograph as ag
import programs
count, convert_only, corpus = {count}, {convert_only}, {corpus}
if corpus:
    from autograph import api
    import conversion
    for _ in range(1 + count):  # one warm-up round (imports, the converter's own caches), then count
        for f, _ in conversion.CORPUS:
            api.clear_cache()
            ag.convert(f)
    sys.exit()
folder = tempfile.mkdtemp()
functions = [programs.fresh_first_call(folder, f"first_call_{{i}}") for i in range(count + 2)]
for f in functions[count:]:
    ag.function(f)(np.float32(1.5), np.int32(20))
for f in functions[:count]:
    if convert_only:
        ag.convert(f)
    else:
        ag.function(f)(np.float32(1.5), np.int32(20))
'''


def _importable(tree, scratch) -> str:
    """A folder from which ``import autograph`` finds ``tree``'s: pyproject.toml maps
    ``autograph.runtime`` and ``autograph.converters`` to top-level folders, which a plain
    checkout on PYTHONPATH does not, so the package is rebuilt there from links."""
    package = os.path.join(scratch, "path", "autograph")
    os.makedirs(package)
    source = os.path.join(tree, "autograph")
    for entry in os.listdir(source):
        os.symlink(os.path.join(source, entry), os.path.join(package, entry))
    for sub in ("runtime", "converters"):
        if not os.path.exists(os.path.join(package, sub)):
            os.symlink(os.path.join(tree, sub), os.path.join(package, sub))
    return os.path.dirname(package)


def _instructions(tree, count, convert_only, corpus=False) -> int:
    """Instructions (callgrind's ``Ir``) of the driver making ``count`` first calls with ``tree``
    (None: the autograph this interpreter imports)."""
    with tempfile.TemporaryDirectory() as scratch:
        driver = os.path.join(scratch, "driver.py")
        with open(driver, "w") as f:
            f.write(_DRIVER.format(benchmarks=HERE, count=count, convert_only=convert_only, corpus=corpus))
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        if tree:
            env["PYTHONPATH"] = _importable(os.path.abspath(tree), scratch)
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={os.path.join(scratch, 'out')}",
             sys.executable, driver],
            env=env, capture_output=True, text=True, check=True,
        ).stderr
    found = re.search(r"Collected\s*:\s*(\d+)", out)
    if found is None:
        raise RuntimeError(f"callgrind printed no instruction count:\n{out[-2000:]}")
    return int(found.group(1))


def _corpus_size() -> int:
    sys.path.insert(0, HERE)
    import conversion

    return len(conversion.CORPUS)


def per_call(tree, count, convert_only, corpus=False) -> float:
    calls = count * (_corpus_size() if corpus else 1)
    return (_instructions(tree, count, convert_only, corpus) - _instructions(tree, 0, convert_only, corpus)) / calls


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--against", metavar="TREE", help="another autograph checkout to compare with")
    parser.add_argument("--convert-only", action="store_true", help="count ag.convert alone")
    parser.add_argument("--corpus", action="store_true", help="count cold ag.convert of conversion.py's corpus")
    args = parser.parse_args(argv)
    if args.corpus and args.calls == 20:
        args.calls = 3  # rounds of 24 conversions
    if shutil.which("valgrind") is None:
        sys.exit("first_call_instructions.py needs valgrind (apt install valgrind)")
    what = ("ag.convert of the conversion corpus" if args.corpus else "ag.convert" if args.convert_only
            else "first call of ag.function")
    counted = f"{args.calls} rounds of {_corpus_size()} functions" if args.corpus else f"{args.calls} fresh functions"
    here = per_call(None, args.calls, args.convert_only, args.corpus)
    print(f"{what}: {here / 1e6:.2f} M instructions per call (this tree, {counted})")
    if args.against:
        there = per_call(args.against, args.calls, args.convert_only, args.corpus)
        print(f"{what}: {there / 1e6:.2f} M instructions per call ({args.against})")
        print(f"ratio this / {args.against}: {here / there:.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
