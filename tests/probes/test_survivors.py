"""The witness searches run each survivor as the mutation stage ran it: from its job,
without planning its file again."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from auditor.mutation.mutant import MutantSources
from auditor.mutation.protocol import Job, text_digest
from auditor.probes.protocol import SurvivorSpec
from auditor.probes.stage import _survivors
from auditor.report import BaselineSection, MutationSection
from tests.conftest import a_mutant, target_spec

SOURCE = "RATE = 2\n\n\ndef price(n):\n    return n * RATE\n"


def _section(mutant_id: str) -> MutationSection:
    mutant = a_mutant(
        mutant_id,
        file="shop.py",
        function="",
        col=7,
        original="2",
        replacement="3",
        description="2 -> 3",
        path="module",
    )
    return MutationSection.model_construct(mutants=[mutant])


def _baseline() -> BaselineSection:
    return BaselineSection(
        tests=[], collection_errors=[], passed=0, excluded=0, restarts=0, import_time_lines={}
    )


def _module_job(path: Path, mutant_id: str) -> Job:
    start = SOURCE.index("2")
    return Job(
        id=mutant_id,
        path="module",
        file=str(path),
        module_name="shop",
        tests=["tests/test_shop.py::test_price"],
        timeout=1.0,
        source_digest=text_digest(SOURCE),
        patch_start=start,
        patch_end=start + 1,
        replacement="3",
        rerun_lines=[[1, 1]],
    )


def _probed(path: Path) -> dict:
    return {"shop.py::price": target_spec("shop.py::price", str(path), "shop", line=4)}


def test_a_survivor_is_searched_from_the_job_that_ran_it_without_its_tests(tmp_path):
    path = tmp_path / "shop.py"
    path.write_text(SOURCE, encoding="utf-8")
    mutant_id = "shop.py::<module>::constants.number@1:7#0"
    job = _module_job(path, mutant_id)
    specs, unsearchable = _survivors(
        _baseline(), _section(mutant_id), {mutant_id: job}, _probed(path)
    )
    assert unsearchable == []
    [spec] = specs
    assert spec.job == dataclasses.replace(job, tests=[])
    assert spec.targets == ["shop.py::price"]


def test_the_search_applies_the_same_patch_the_mutation_stage_ran(tmp_path):
    path = tmp_path / "shop.py"
    path.write_text(SOURCE, encoding="utf-8")
    mutant_id = "shop.py::<module>::constants.number@1:7#0"
    job = _module_job(path, mutant_id)
    [spec], _ = _survivors(_baseline(), _section(mutant_id), {mutant_id: job}, _probed(path))
    searched = MutantSources().prepare(spec.job)
    assert searched.mutated == MutantSources().prepare(job).mutated
    assert searched.mutated == SOURCE.replace("RATE = 2", "RATE = 3")


def test_a_survivor_whose_file_changed_since_it_ran_is_not_searched(tmp_path):
    path = tmp_path / "shop.py"
    path.write_text(SOURCE.replace("n * RATE", "RATE * n"), encoding="utf-8")
    mutant_id = "shop.py::<module>::constants.number@1:7#0"
    specs, unsearchable = _survivors(
        _baseline(), _section(mutant_id), {mutant_id: _module_job(path, mutant_id)}, _probed(path)
    )
    assert specs == []
    assert [(w.status, w.reason) for w in unsearchable] == [
        ("not probeable", "its file changed during the run")
    ]


def test_a_survivor_with_no_job_such_as_an_imported_verdict_is_not_probeable(tmp_path):
    path = tmp_path / "shop.py"
    path.write_text(SOURCE, encoding="utf-8")
    mutant_id = "shop.py::price::mutmut@2#1"
    specs, unsearchable = _survivors(_baseline(), _section(mutant_id), {}, _probed(path))
    assert specs == []
    assert [(w.status, w.reason) for w in unsearchable] == [
        ("not probeable", "no code of the mutant to run")
    ]


def test_a_witness_search_is_keyed_by_its_mutant_not_by_where_or_how_long_it_ran(tmp_path):
    mutant_id = "shop.py::<module>::constants.number@1:7#0"
    here = SurvivorSpec(
        job=_module_job(tmp_path / "a" / "shop.py", mutant_id), description="", targets=["t"]
    )
    moved = dataclasses.replace(here.job, file=str(tmp_path / "b" / "shop.py"), timeout=9.0)
    other = dataclasses.replace(here.job, replacement="4")
    assert SurvivorSpec(job=moved, description="", targets=["t"]).content() == here.content()
    assert SurvivorSpec(job=other, description="", targets=["t"]).content() != here.content()
