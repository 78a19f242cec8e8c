"""The pipeline's order is written once, as code (`auditor.stages.ORDER`); the README and
docs/design.md show it, and these tests keep them saying the same."""

from __future__ import annotations

import re
from pathlib import Path

from auditor.stages import ORDER, STAGES
from tests.test_layers import PACKAGE_OF

ROOT = Path(__file__).parent.parent
ARROWS = re.compile(r"^(\w+(?: -> \w+)+)$", re.M)


def _arrow_lines(path: Path) -> list[str]:
    return ARROWS.findall(path.read_text(encoding="utf-8"))


def _design_stage_rows() -> list[tuple[str, str]]:
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    table = text.split("## Stages", 1)[1].split("\n\n", 2)[1]
    rows = []
    for row in table.splitlines()[2:]:
        stage, package, _ = (cell.strip() for cell in row.strip("|").split("|"))
        rows.append((stage, package))
    return rows


def test_the_order_starts_with_discovery_and_ends_with_escalation():
    assert ORDER[0] == "discover"
    assert ORDER[-1] == "escalate"
    assert ORDER[1:] == tuple(stage.name for stage in STAGES)


def test_the_readme_shows_the_order_of_the_code():
    assert _arrow_lines(ROOT / "README.md") == [" -> ".join(ORDER)]


def test_the_design_page_shows_the_order_of_the_code():
    assert _arrow_lines(ROOT / "docs" / "design.md") == [" -> ".join(ORDER)]


def test_the_design_pages_stage_table_follows_the_order():
    assert [stage for stage, _ in _design_stage_rows()] == list(ORDER)


def test_the_layer_check_uses_the_packages_the_design_page_names():
    for stage, packages in _design_stage_rows():
        assert f"`auditor/{PACKAGE_OF[stage]}" in packages, stage


def test_the_readme_numbers_the_stages_in_order():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    numbered = re.findall(r"^\d+\. \*\*(\w+)\*\*", text.split("## What a run does", 1)[1], re.M)
    assert numbered == list(ORDER)
