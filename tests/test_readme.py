"""The README's sample output is what the bundled fixture really gives."""

import pytest

from tests.conftest import FIXTURES

pytestmark = pytest.mark.slow

README = (FIXTURES.parent / "README.md").read_text(encoding="utf-8")


def _sample_line(label: str) -> str:
    return next(line for line in README.splitlines() if label in line and line.startswith("│"))


def test_the_readmes_sample_output_is_the_shallow_shop_suites_real_output(fixture_runs):
    _, report, _, _ = fixture_runs[("shop", "tests_shallow")]
    scores = report["mutation"]["scores"]
    counts = scores["counts"]
    killed_survived = (
        f"{counts['killed']} / {counts['survived']} / {counts['no_coverage']} / {counts['timeout']}"
    )
    assert killed_survived in _sample_line("mutants killed / survived")
    assert f"{scores['score']:.1f}%" in _sample_line("│ mutation score ")
    assert f"of {counts['survived']} surviving mutants" in README


def test_the_readmes_evidence_rows_are_the_shallow_shop_suites_real_output(fixture_runs):
    _, report, _, _ = fixture_runs[("shop", "tests_shallow")]
    scores = report["mutation"]["scores"]
    assert f"{scores['assertion_share']:.1f}%" in _sample_line("kills by assertion")
    assert f"{scores['assertion_score']:.1f}%" in _sample_line("score by assertion kills")
    rating = report["gate"]["rating"]
    assert f"rating: {rating['level'].upper()} ({rating['reason']})" in README
