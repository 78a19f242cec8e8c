"""docs/design.md's map names every module of the product, and only modules that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
PACKAGES = ("auditor", "mutators", "reports")


def _mapped() -> set[Path]:
    """`package/module.py` for every module the map's table names."""
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    table = text.split("## Map", 1)[1].split("\n\n", 2)[1]
    named = set()
    for row in table.splitlines()[2:]:
        package_cell, modules_cell = row.strip("|").split("|")
        package = re.search(r"`([^`]+)/`", package_cell)
        assert package, row
        described = re.sub(r"\([^)]*\)", "", modules_cell)  # what each module is for
        for module in re.findall(r"`(\w+)`", described):
            named.add(Path(package[1]) / f"{module}.py")
    return named


def _modules() -> set[Path]:
    return {
        path.relative_to(ROOT)
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if path.name != "__init__.py"
    }


def test_the_map_names_only_modules_that_exist():
    assert sorted(_mapped() - _modules()) == []


def test_every_module_is_on_the_map():
    assert sorted(_modules() - _mapped()) == []
