"""Suites that use pytest-benchmark: its fixture calls the function once under audit."""

import json
import textwrap
from pathlib import Path

import pytest
import pytest_benchmark  # noqa: F401 - a dev extra: a broken install fails here

from tests.conftest import run_audit

pytestmark = pytest.mark.slow


def test_a_benchmarked_function_runs_once_per_test_and_its_checks_still_kill(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "timed"\nversion = "1"\n')
    (tmp_path / "timed.py").write_text(
        "calls = []\n\n\ndef two():\n    calls.append(1)\n    return 2\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_timed.py").write_text(
        textwrap.dedent(
            """
            import timed


            def test_two_is_two_and_called_once(benchmark):
                assert benchmark(timed.two) == 2
                assert len(timed.calls) == 1
            """
        )
    )
    out = tmp_path / "r.json"
    result = run_audit("tests", "-q", "--no-probes", "--json", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert [t["outcome"] for t in report["baseline"]["tests"]] == ["passed"]
    mutant = next(m for m in report["mutation"]["mutants"] if m["replacement"] == "3")
    assert mutant["status"] == "Killed"
