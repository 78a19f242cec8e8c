"""Data flows one way through the pipeline: no stage imports a later stage's modules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from auditor.stages import ORDER

AUDITOR = Path(__file__).parent.parent / "auditor"

PACKAGE_OF = {
    "discover": "discovery",
    "baseline": "baseline",
    "smells": "smells",
    "mutate": "mutation",
    "probe": "probes",
    "gate": "gate",
    "escalate": "escalation",
}
"""Each stage's module or package under `auditor/` (docs/design.md, Stages)."""

STAGES = [PACKAGE_OF[stage] for stage in ORDER]
"""In the order `pipeline.run_audit` runs them."""


def _stage(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] == "auditor" and len(parts) > 1 and parts[1] in STAGES:
        return parts[1]
    return None


def _imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
    return found


def _stage_modules() -> list[tuple[str, Path]]:
    modules = []
    for path in sorted(AUDITOR.rglob("*.py")):
        name = ".".join(path.relative_to(AUDITOR.parent).with_suffix("").parts)
        stage = _stage(name)
        if stage is not None:
            modules.append((stage, path))
    return modules


def test_every_stage_has_modules():
    assert {stage for stage, _ in _stage_modules()} == set(STAGES)


@pytest.mark.parametrize(
    ("stage", "path"),
    [
        pytest.param(stage, path, id=str(path.relative_to(AUDITOR)))
        for stage, path in _stage_modules()
    ],
)
def test_a_stage_imports_nothing_of_a_later_stage(stage, path):
    later = [
        module
        for module in _imports(path)
        if (target := _stage(module)) and STAGES.index(target) > STAGES.index(stage)
    ]
    assert later == []
