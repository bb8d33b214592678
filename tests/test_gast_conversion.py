"""``gast_conversion``: ``to_gast`` builds ``gast.ast_to_gast``'s tree, ``to_ast`` the tree
``gast.gast_to_ast`` + ``ast.fix_missing_locations`` build (locations included)."""

from __future__ import annotations

import ast
import pathlib

import gast
import pytest

from autograph import api
from autograph.pyct import context, gast_conversion

FIXTURES = sorted(pathlib.Path(__file__).resolve().parent.parent.joinpath("fixtures").rglob("*.py"))


def _same_as_reference(module):
    reference = gast.gast_to_ast(module)
    ast.fix_missing_locations(reference)
    assert ast.dump(gast_conversion.to_ast(module), include_attributes=True) == ast.dump(
        reference, include_attributes=True
    )


def _dump_gast(node):
    """A gast tree as text, every field and location attribute included."""
    if isinstance(node, list):
        return "[" + ", ".join(_dump_gast(n) for n in node) + "]"
    if not isinstance(node, gast.AST):
        return repr(node)
    parts = [f"{f}={_dump_gast(getattr(node, f, '<missing>'))}" for f in node._fields]
    parts += [f"{a}={getattr(node, a, '<missing>')!r}" for a in node._attributes]
    return f"{type(node).__name__}({', '.join(parts)})"


def _same_gast_as_reference(tree):
    assert _dump_gast(gast_conversion.to_gast(tree)) == _dump_gast(gast.ast_to_gast(tree))


def _module(node):
    return gast.Module(body=[node], type_ignores=[])


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_conversions_match_gast_on_fixtures_before_and_after_conversion(path):
    try:
        _same_gast_as_reference(ast.parse(path.read_text()))
        tree = gast.parse(path.read_text())
    except SyntaxError:
        pytest.skip("a fixture that does not parse")
    _same_as_reference(tree)
    for node in [n for n in tree.body if type(n) is gast.FunctionDef]:
        try:
            converted = api.convert_node(node, str(path), context.Options(), name=node.name)
        except Exception:  # noqa: BLE001 - a fixture of a conversion error: nothing to compile
            continue
        _same_as_reference(_module(converted))


def test_conversions_cover_parameters_handlers_patterns_and_comprehensions():
    source = (
        "def f(a, /, b: int = 1, *args: 'x', c, d=2, **kw) -> None:\n"
        "    try:\n        pass\n    except ValueError as e:\n        raise\n"
        "    except Exception:\n        pass\n"
        "    g = lambda x, *y, z=3, **w: x\n"
        "    with open(a) as h, open(b):\n        pass\n"
        "    match a:\n        case [1, *rest] | {'k': _, **more}:\n            pass\n"
        "        case P(x=1) as q:\n            pass\n"
        "    return [i for i in b] if 0 else {k: v for k, v in kw.items() if k}\n"
        "async def h(x):\n    return [i async for i in x]\n"
        "class C(B, metaclass=M):\n    x: int = 1\n"
    )
    _same_gast_as_reference(ast.parse(source))
    _same_as_reference(gast.parse(source))
