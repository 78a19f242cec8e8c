"""A rerun takes each unchanged source's mutation sites from `.audit/` instead of parsing
it again, and plans exactly the same mutants."""

import os
import shutil
import subprocess
import sys

import pytest

from auditor.mutation import compiler as compiler_module
from auditor.mutation import plan as plan_module
from auditor.mutation.cache import ResultCache
from auditor.mutation.plan import Planner, PlanSettings, TimeoutPolicy, plan
from auditor.mutation.selection import DiffScope
from auditor.report import BaselineSection
from mutators.registry import operators


@pytest.fixture
def shop(fixture_runs):
    _, report, root, _ = fixture_runs["shop", "tests_shallow"]
    baseline = BaselineSection.model_validate(report["baseline"])
    return root, baseline, sorted((root / "shop").glob("*.py"))


def planner(root, baseline, cache) -> Planner:
    return Planner(root, baseline, PlanSettings(operators(), TimeoutPolicy(3.0, 2.0)), cache)


def planned(mutants) -> list[tuple]:
    return [(m.id, m.status, m.path, m.cache_key, m.diff, m.tests) for m in mutants]


@pytest.mark.slow
def test_a_rerun_plans_the_same_mutants_without_parsing_or_compiling(shop, tmp_path, monkeypatch):
    root, baseline, files = shop
    cache = ResultCache(tmp_path)
    first = plan(planner(root, baseline, cache), files)

    def again(*args):
        raise AssertionError("an unchanged source was parsed or compiled again")

    monkeypatch.setattr(plan_module, "find_mutations", again)
    monkeypatch.setattr(compiler_module, "compile_module", again)
    rerun = plan(planner(root, baseline, cache), files)
    assert any(m.path == "swap" for m in first)
    assert planned(rerun) == planned(first)
    assert [m.function_code for m in rerun] == [m.function_code for m in first]


@pytest.mark.slow
def test_a_changed_source_is_parsed_again(shop, tmp_path, monkeypatch):
    root, baseline, _ = shop
    cache = ResultCache(tmp_path)
    copy = tmp_path / "pricing.py"
    copy.write_text((root / "shop" / "pricing.py").read_text())
    plan(planner(tmp_path, baseline, cache), [copy])
    copy.write_text(copy.read_text() + "\n\ndef added(x):\n    return x + 1\n")
    parsed = []
    real = plan_module.find_mutations
    monkeypatch.setattr(plan_module, "find_mutations", lambda *a: parsed.append(1) or real(*a))
    mutants = plan(planner(tmp_path, baseline, cache), [copy])
    assert parsed == [1]
    assert any(m.site.function == "added" for m in mutants)


@pytest.mark.slow
def test_an_edit_compiles_again_only_the_function_it_touched(shop, tmp_path, monkeypatch):
    """In the agent's loop one function changes at a time: the file's other functions
    keep their compiled mutants, and plan as a cold planning of the edited file does."""
    root, baseline, _ = shop
    copy = tmp_path / "shop" / "pricing.py"  # where the baseline saw tests run it
    copy.parent.mkdir()
    copy.write_text((root / "shop" / "pricing.py").read_text())
    plan(planner(tmp_path, baseline, ResultCache(tmp_path)), [copy])
    text = copy.read_text()
    copy.write_text(text.replace('return Decimal("0")\n', 'return Decimal("0.00")\n'))
    compiled = []
    real = compiler_module.FunctionCompiler.mutated
    monkeypatch.setattr(
        compiler_module.FunctionCompiler,
        "mutated",
        lambda self, site, text: compiled.append(site.function) or real(self, site, text),
    )
    edited = plan(planner(tmp_path, baseline, ResultCache(tmp_path)), [copy])
    assert set(compiled) == {"bulk_discount"}
    monkeypatch.undo()
    cold = plan(planner(tmp_path, baseline, ResultCache(tmp_path / "cold")), [copy])
    assert planned(edited) == planned(cold)
    assert [m.function_code for m in edited] == [m.function_code for m in cold]


def test_a_set_literals_code_has_the_same_fingerprint_in_every_process():
    """Sets print in hash order, which changes with each process: a cache key built from
    them would never match on a rerun."""
    program = (
        "import json\n"
        "from auditor.mutation.compiler import fingerprint\n"
        'code = compile(\'def f(x):\\n    return x in {"alpha", "beta", "gamma"}\\n\','
        " 'm.py', 'exec')\n"
        "print(json.dumps(fingerprint(code.co_consts[0]), default=str))\n"
    )
    printed = {
        subprocess.run(
            [sys.executable, "-c", program],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in range(1, 6)
    }
    assert len(printed) == 1


@pytest.mark.slow
def test_the_plans_of_a_file_s_earlier_versions_are_dropped(shop, tmp_path):
    root, baseline, _ = shop
    cache = ResultCache(tmp_path)
    copy = tmp_path / "shop" / "pricing.py"  # where the baseline saw tests run it
    copy.parent.mkdir()
    copy.write_text((root / "shop" / "pricing.py").read_text())
    for version in range(3):
        copy.write_text(copy.read_text() + f"\n\ndef added_{version}(x):\n    return x + 1\n")
        plan(planner(tmp_path, baseline, cache), [copy])
    rows = [
        cache.connection.execute(f"select count(*) from {table}").fetchone()[0]
        for table in ("sites", "swaps")
    ]
    assert rows == [1, 1]


@pytest.mark.slow
def test_a_file_left_unplanned_keeps_its_sites_and_code(shop, tmp_path, monkeypatch):
    """A diff run plans only the files its change reaches; the next full run still
    finds every other file's plans in the cache."""
    root, baseline, files = shop
    cache = ResultCache(tmp_path)
    plan(planner(root, baseline, cache), files)
    change = DiffScope("HEAD", {"shop/pricing.py": {37}}, [], {})
    assert plan(planner(root, baseline, cache), files, change)

    def again(*args):
        raise AssertionError("a file left unplanned lost its plans")

    monkeypatch.setattr(plan_module, "find_mutations", again)
    monkeypatch.setattr(compiler_module, "compile_module", again)
    assert plan(planner(root, baseline, cache), files)


@pytest.mark.slow
def test_the_sites_and_code_made_during_the_baseline_are_the_ones_planning_uses(
    shop, tmp_path, monkeypatch
):
    """The early-sites helper fills the cache; planning then parses and compiles
    nothing, and plans exactly what it plans on its own. (Compared as plans: two runs'
    verdicts would also compare the machine's load.)"""
    import json

    from auditor.config import AuditConfig
    from auditor.containment.launch import own_module

    root, baseline, _ = shop
    copy = tmp_path / "shop"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".audit", "__pycache__"))
    files = sorted((copy / "shop").glob("*.py"))
    own = plan(planner(copy, baseline, ResultCache(tmp_path / "own")), files)
    config = AuditConfig()
    spec = {
        "root": str(copy),
        "files": [str(path) for path in files],
        "mutators": config.mutators,
        "disable": config.disable_mutators,
        "type_check": None,
        "source_files": [str(path) for path in files],
    }
    helper = own_module("auditor.mutation.early_sites")
    subprocess.run(helper, input=json.dumps(spec), text=True, check=True, timeout=120)

    def not_again(*args):
        raise AssertionError("planning parsed or compiled what the helper had")

    monkeypatch.setattr(plan_module, "find_mutations", not_again)
    monkeypatch.setattr(compiler_module, "compile_module", not_again)
    helped = plan(planner(copy, baseline, ResultCache(copy)), files)
    assert any(m.path == "swap" for m in own)
    assert planned(helped) == planned(own)
    assert [m.function_code for m in helped] == [m.function_code for m in own]


def test_a_small_project_gets_no_helper_to_find_its_sites(project_copy):
    from auditor.config import AuditConfig
    from auditor.discovery.project import discover
    from auditor.mutation.early_sites import EarlySites

    root = project_copy("ledger")
    (root / ".audit").mkdir()
    project = discover(["tests_strong"], None, root)
    assert EarlySites.start(project, AuditConfig()).process is None
