"""Several audits of one project at once, with the same and with different options:
each finishes, each report holds the verdicts a lone run gives, the cache stays sound."""

from __future__ import annotations

import pytest

from tests.conftest import run_audit
from tests.faults.project import FLAGS, line_of, make_project, sound, start_audit, verdicts

pytestmark = pytest.mark.slow

_OPTIONS = [
    ("-q", "--no-probes", "--jobs", "1"),
    ("-q", "--no-probes", "--jobs", "1", "--mutators", "comparison"),
    ("-q", "--no-probes", "--jobs", "1", "--timeout", "20"),
    ("-q", "--no-probes", "--jobs", "1", "--no-module-level"),
]


@pytest.fixture(scope="module")
def alone(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = make_project(tmp_path_factory.mktemp("alone") / "calc")
    result = run_audit("tests", *FLAGS, cwd=root)
    assert result.returncode == 0, result.stderr
    return verdicts(root)


@pytest.mark.parametrize(
    ("options", "injected"),
    [
        ([_OPTIONS[0]] * 2, "two audits of one project at once, same options"),
        (_OPTIONS, "four audits of one project at once, each with other options"),
    ],
)
def test_audits_of_one_project_at_once_each_give_a_lone_runs_verdicts(
    tmp_path, alone, fault, options, injected
):
    root = make_project(tmp_path / "calc")
    reports = [f"report-{number}.json" for number in range(len(options))]
    running = [
        start_audit(root, *flags, "--json", report)
        for flags, report in zip(options, reports, strict=True)
    ]
    ended = [process.communicate(timeout=300) for process in running]
    assert [process.returncode for process in running] == [0] * len(running), ended
    found = [verdicts(root, report) for report in reports]
    assert [len(each) > 0 for each in found] == [True] * len(found)
    assert found == [{key: alone[key] for key in each} for each in found]
    assert len(found[0]) == len(alone)
    assert sound(root / ".audit" / "cache.sqlite")
    rerun = run_audit("tests", *FLAGS, cwd=root)
    assert rerun.returncode == 0, rerun.stderr
    assert verdicts(root) == alone
    assert "0 from cache" not in line_of(rerun.stdout, "mutation:")
    fault(
        "load",
        injected,
        did="all finished; each report's verdicts equal a lone run's; the cache is sound",
        exit_code=0,
        saw="(each run's own summary)",
        lost="nothing",
    )
