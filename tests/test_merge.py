"""`audit merge` on shard reports built from the stored report: what adds up across
shards and what is the slowest shard's."""

from pathlib import Path

from auditor.merge import merge_reports
from auditor.report import Report, Scope, TypeCheckSummary
from tests.reports.stored_report import STORED


def _shard(report: Report, index: int, type_check: TypeCheckSummary | None) -> Report:
    """Shard `index` of 2: every other mutant, and the given type-check summary."""
    mutation = report.mutation.model_copy(
        update={
            "mutants": report.mutation.mutants[index - 1 :: 2],
            "scope": Scope(kind="shard", shard=f"{index}/2"),
            "type_check": type_check,
        }
    )
    return report.model_copy(update={"mutation": mutation})


def test_merged_shards_add_up_their_type_checks_and_keep_the_slowest_s_time():
    report = Report.read(STORED)
    first = TypeCheckSummary(
        checker="mypy", checked=10, rejected=4, duration=2.0, cached=10, saved=1.5
    )
    second = TypeCheckSummary(
        checker="mypy", checked=6, rejected=1, duration=3.0, cached=0, saved=0.5
    )
    merged = merge_reports(
        [(Path("s1.json"), _shard(report, 1, first)), (Path("s2.json"), _shard(report, 2, second))]
    )
    assert merged.mutation.type_check == TypeCheckSummary(
        checker="mypy", checked=16, rejected=5, duration=3.0, cached=10, saved=1.5
    )


def test_shards_without_a_type_check_merge_without_one():
    report = Report.read(STORED)
    merged = merge_reports([(Path(f"s{i}.json"), _shard(report, i, None)) for i in (1, 2)])
    assert merged.mutation.type_check is None
