"""The requests sent to the models, rendered from the jinja2 templates in `templates/`.

Everything a request says comes from the report so far and the project's files; nothing
in it depends on time or on where the project lies, so the same audit asks the same
question (and a cached answer stays valid).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined

from auditor.agent import feedback
from auditor.escalation.policy import WeakModule
from auditor.report import Candidate, Report

MAX_MUTANTS_SHOWN = 40
MAX_FINDINGS_CHARS = 12_000
"""What the audit found about the module (the feedback a fast model gets), at most."""
MAX_TEST_CHARS = 30_000
"""Existing tests beyond this many characters are left out of a request."""

_environment = Environment(
    loader=PackageLoader("auditor.escalation", "templates"),
    undefined=StrictUndefined,
    keep_trailing_newline=True,
    autoescape=False,  # prompts are Markdown for a model, not HTML
)


@dataclass(frozen=True)
class Prompt:
    system: str
    user: str

    def messages(self) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.user},
        ]

    def as_markdown(self) -> str:
        return f"# system\n\n{self.system}\n# user\n\n{self.user}"


def _render(template: str, **values: object) -> str:
    return _environment.get_template(template).render(**values)


def _system() -> str:
    return _render("system.md.j2")


def import_hint(file: str, module: str) -> str:
    return f"from {module} import ..." if module else f"import {Path(file).stem}"


def harden(report: Report, module: WeakModule, module_name: str) -> Prompt:
    """The request for one weak module: its code, its survivors with their witnesses,
    what no test covers, the smells of the tests that cover it, and those tests."""
    assert report.mutation is not None
    source = report.sources.get(module.file, "")
    survivors = set(module.survivors)
    mutants = [m for m in report.mutation.mutants if m.id in survivors]
    shown = [
        {
            "id": m.id,
            "description": m.description,
            "line": m.line,
            "diff": m.diff,
        }
        for m in mutants[:MAX_MUTANTS_SHOWN]
    ]
    covering = sorted(
        {t.file for t in report.baseline.tests if t.reliable and module.file in t.lines}
    )
    test_files, budget = [], MAX_TEST_CHARS
    root = Path(report.project.root)
    for path in covering:
        try:
            text = (root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if len(text) > budget:
            continue
        budget -= len(text)
        test_files.append({"path": path, "text": text})
    user = _render(
        "harden.md.j2",
        module=module,
        import_hint=import_hint(module.file, module_name),
        source_lines=source.splitlines(),
        mutants=shown,
        omitted=max(0, len(mutants) - MAX_MUTANTS_SHOWN),
        findings=feedback.build(report, {module.file}).render(MAX_FINDINGS_CHARS),
        test_files=test_files,
    )
    return Prompt(_system(), user)


def repair(module: WeakModule, rejected: list[Candidate]) -> Prompt:
    return Prompt(_system(), _render("repair.md.j2", module=module, rejected=rejected))


def generate(file: str, module_name: str, source: str) -> Prompt:
    user = _render(
        "generate.md.j2", file=file, import_hint=import_hint(file, module_name), source=source
    )
    return Prompt(_system(), user)
