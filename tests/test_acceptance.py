"""Accepted survivors: `# audit: accept[...]` comments and the `.audit/accepted.toml`
ledger, on real audits of the shop fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.evidence.acceptance import digest
from auditor.report import Report
from tests.conftest import run_audit

pytestmark = pytest.mark.slow

MESSAGE_LINE = '            raise ValueError("quantity must be positive")'
CATEGORY_LINE = '    tax_category: str = "standard"'


def _audit(root: Path, *flags: str) -> tuple[int, Report]:
    result = run_audit("tests_shallow", "-q", "--no-probes", *flags, cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, Report.read(root / ".audit" / "report.json")


def _on_line(report: Report, file: str, line: int):
    return [m for m in report.mutation.mutants if m.file == file and m.line == line]


@pytest.fixture
def shop(project_copy) -> Path:
    return project_copy("shop")


def test_a_comment_on_the_line_accepts_its_survivors_with_the_reason(shop):
    _, before = _audit(shop)
    line = next(m.line for m in before.mutation.mutants if "quantity must be positive" in m.diff)
    survived = [m.id for m in _on_line(before, "shop/cart.py", line) if m.status == "Survived"]
    cart = shop / "shop" / "cart.py"
    cart.write_text(
        cart.read_text().replace(MESSAGE_LINE, MESSAGE_LINE + "  # audit: accept[message text]")
    )
    _, after = _audit(shop)
    accepted = {m.id: m for m in _on_line(after, "shop/cart.py", line) if m.accepted}
    assert survived and sorted(accepted) == sorted(survived)
    assert all(m.status == "Ignored" and m.accepted == "message text" for m in accepted.values())
    assert after.mutation.scores.counts.survived == before.mutation.scores.counts.survived - len(
        survived
    )


def test_the_ledger_accepts_a_survivor_until_its_line_changes(shop):
    _, first = _audit(shop)
    [mutant] = [m for m in _on_line(first, "shop/cart.py", 16) if m.description.endswith("emptied")]
    accepted = run_audit("accept", mutant.id, "--reason", "spelling is not behaviour", cwd=shop)
    assert accepted.returncode == 0, accepted.stderr
    ledger = (shop / ".audit" / "accepted.toml").read_text()
    assert f'mutant = "{mutant.id}"' in ledger and f'digest = "{digest(mutant)}"' in ledger

    _, second = _audit(shop)
    [again] = [m for m in second.mutation.mutants if m.id == mutant.id]
    assert again.status == "Ignored" and again.accepted == "spelling is not behaviour"

    cart = shop / "shop" / "cart.py"
    cart.write_text(
        cart.read_text().replace(CATEGORY_LINE, CATEGORY_LINE.replace("standard", "std"))
    )
    _, third = _audit(shop)
    [changed] = [m for m in third.mutation.mutants if m.id == mutant.id]
    assert changed.status == "Survived" and not changed.accepted
    assert third.mutation.expired_acceptances == [mutant.id]


def test_the_gate_caps_the_accepted_share(shop):
    cart = shop / "shop" / "cart.py"
    cart.write_text(cart.read_text().replace(MESSAGE_LINE, MESSAGE_LINE + "  # audit: accept[x]"))
    code, report = _audit(shop, "--max-accepted-percent", "0.5")
    [condition] = report.gate.conditions
    accepted = sum(1 for m in report.mutation.mutants if m.accepted)
    counted = sum(m.status not in ("Ignored", "CompileError") for m in report.mutation.mutants)
    assert code == 1 and not condition.passed
    assert condition.actual == round(100 * accepted / (counted + accepted), 2)
    assert condition.message.startswith("max_accepted_percent: ")


def test_a_malformed_ledger_stops_the_run_before_any_test_with_one_line(shop):
    (shop / ".audit").mkdir()
    (shop / ".audit" / "accepted.toml").write_text('[[accepted]]\nmutant = "x"\n')
    result = run_audit("tests_shallow", "-q", cwd=shop)
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line == (
        f"audit: accept: {shop / '.audit' / 'accepted.toml'}, entry 1: needs exactly "
        "mutant, reason and digest"
    )
    assert not (shop / ".audit" / "report.json").exists()


def test_accepting_an_unknown_or_killed_mutant_is_refused(shop):
    _, report = _audit(shop)
    killed = next(m for m in report.mutation.mutants if m.status == "Killed")
    unknown = run_audit("accept", "shop/nope.py::f::x@1:1#0", "--reason", "r", cwd=shop)
    refused = run_audit("accept", killed.id, "--reason", "r", cwd=shop)
    assert unknown.returncode == refused.returncode == 2
    assert unknown.stderr.strip().startswith("audit: accept: no mutant 'shop/nope.py::f::x@1:1#0'")
    assert refused.stderr.strip() == f"audit: accept: {killed.id} is Killed, not a surviving mutant"
    assert not (shop / ".audit" / "accepted.toml").exists()
