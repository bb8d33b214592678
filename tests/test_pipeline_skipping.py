"""Passes that skip a function lacking their constructs (``Context.lacks``) change nothing.

The unsupported pass records which node types a function has; a pass that
rewrites only constructs the function lacks returns it untouched, and the
jump lowerings record what they add.  Here every function of the fixtures,
the test corpora and a sample of random fuzzer programs is converted twice,
once with skipping and once with every pass run in full: the generated code
must be the same, byte for byte.
"""

from __future__ import annotations

import ast
import random
from pathlib import Path

import gast
import pytest

from autograph import api, compiling, loading
from autograph.pyct import context
from fuzz_programs import FEATURES, ProgramWriter

ROOT = Path(__file__).resolve().parent.parent


def _functions(tree):
    for node in tree.body:
        if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef):
            yield node
        elif type(node) is ast.ClassDef:
            yield from (n for n in node.body if type(n) in (ast.FunctionDef, ast.AsyncFunctionDef))


def _generated(node, filename, monkeypatch, skipping):
    with monkeypatch.context() as patch:
        if not skipping:
            patch.setattr(context.Context, "lacks", lambda self, *kinds: False)
        try:
            converted = api.convert_node(gast.ast_to_gast(node), filename, context.Options(), name=node.name)
        except Exception as e:  # noqa: BLE001 - what cannot be converted must fail alike
            return f"{type(e).__name__}: {e}"
        return compiling.to_source(converted)


def _sources():
    files = sorted(
        p for p in (ROOT / "fixtures").glob("*/*.py")
        if not p.name.endswith(".expected.py") and p.parent.name != "check"  # check/: reports, some unparsable
    )
    files += sorted((ROOT / "tests").glob("corpus_*.py"))
    files += [ROOT / "benchmarks" / "conversion.py", ROOT / "examples" / "quickstart.py"]
    for path in files:
        if path.exists():
            yield str(path), loading.parse_file(str(path))
    rng = random.Random(20261201)
    for k in range(150):
        source = ProgramWriter(rng.randint, FEATURES).program()
        yield f"<fuzz program {k}>", ast.parse(source)


SOURCES = list(_sources())


@pytest.mark.parametrize("filename, tree", SOURCES, ids=[name.rsplit("/", 1)[-1] for name, _ in SOURCES])
def test_skipping_passes_changes_no_generated_code(filename, tree, monkeypatch):
    for node in _functions(tree):
        fast = _generated(node, filename, monkeypatch, skipping=True)
        full = _generated(node, filename, monkeypatch, skipping=False)
        assert fast == full, f"{filename}:{node.lineno} {node.name}"


def test_the_first_pass_records_the_kinds_and_markers():
    tree = ast.parse(
        "def f(xs, a, b, c):\n"
        "    for x in xs:\n"
        "        if not x:\n"
        "            break\n"
        "    else:\n"
        "        pass\n"
        "    return a < b < c\n"
    )
    ctx = context.Context("<test>", context.Options(), set())
    from autograph.converters import unsupported

    unsupported.transform(gast.ast_to_gast(tree.body[0]), ctx)
    assert {"not", "chain", "loop_else", gast.Break, gast.For, gast.Compare} <= ctx.kinds
    assert ctx.lacks(gast.IfExp, gast.Assert) and not ctx.lacks(gast.IfExp, gast.Break)
