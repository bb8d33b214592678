"""pyproject.toml's package list matches the folders, so no subpackage is left out of an install."""

from __future__ import annotations

import pathlib

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest depends on tomli there
    import tomli as tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
ROOTS = {"autograph": "autograph", "autograph.converters": "converters", "autograph.runtime": "runtime"}


def folder_packages() -> set[str]:
    """Every package the three source roots hold, named as it installs."""
    found = set()
    for package, folder in ROOTS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / folder).parts
            if "__pycache__" not in parts:
                found.add(".".join((package, *parts)))
    return found


def test_package_dir_maps_only_the_three_roots():
    assert SETUPTOOLS["package-dir"] == ROOTS


def test_packages_list_every_folder_with_an_init():
    listed = set(SETUPTOOLS["packages"])
    missing, stale = folder_packages() - listed, listed - folder_packages()
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {sorted(missing)}"
    assert not stale, f"listed in pyproject.toml but not a package folder: {sorted(stale)}"
