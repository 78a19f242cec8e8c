"""How a process becomes a job's mutant: the one way the engine's children and the
witness searches apply it (`PreparedMutant`)."""

from __future__ import annotations

import importlib
import marshal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from auditor.mutation.mutant import (
    MutantCompileError,
    MutantImportError,
    MutantSources,
)
from auditor.mutation.protocol import Job, text_digest
from auditor.mutation.swap import SwapError, live_functions

RATES = "RATE = 2\n\n\ndef price(n):\n    return n * RATE\n"
MENU = "from rates_under_test import RATE\n\nDOUBLE = RATE * 2\n"


@pytest.fixture
def modules(tmp_path: Path) -> Iterator[Path]:
    """Two modules of a throwaway project, imported under names of their own."""
    (tmp_path / "rates_under_test.py").write_text(RATES, encoding="utf-8")
    (tmp_path / "menu_under_test.py").write_text(MENU, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    importlib.import_module("menu_under_test")
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for name in ("rates_under_test", "menu_under_test"):
        sys.modules.pop(name, None)


def _patch_job(root: Path, replacement: str, **fields: object) -> Job:
    start = RATES.index("2")
    return Job(
        id="rates_under_test.py::<module>::number@1:7#0",
        path="module",
        file=str(root / "rates_under_test.py"),
        module_name="rates_under_test",
        tests=[],
        timeout=1.0,
        source_digest=text_digest(RATES),
        patch_start=start,
        patch_end=start + 1,
        replacement=replacement,
        **fields,  # type: ignore[arg-type]
    )


def test_a_module_job_runs_its_statements_again_then_the_modules_that_read_them(modules):
    consumer = [str(modules / "menu_under_test.py"), "menu_under_test", 3, 3]
    job = _patch_job(modules, "3", rerun_lines=[[1, 1]], consumers=[consumer])
    MutantSources().prepare(job).apply(functions={})
    assert sys.modules["rates_under_test"].RATE == 3
    assert sys.modules["rates_under_test"].price(1) == 3
    assert sys.modules["menu_under_test"].DOUBLE == 6


def test_a_swap_job_replaces_the_code_of_the_live_function(modules):
    mutated = RATES.replace("n * RATE", "n + RATE")
    code = compile(mutated, str(modules / "rates_under_test.py"), "exec")
    [function_code] = [c for c in code.co_consts if getattr(c, "co_name", "") == "price"]
    job = Job(
        id="rates_under_test.py::price::operator@5:11#0",
        path="swap",
        file=str(modules / "rates_under_test.py"),
        module_name="rates_under_test",
        tests=[],
        timeout=1.0,
        target_line=4,
        target_name="price",
        code_b64=Job.encode_code(marshal.dumps(function_code)),
    )
    price = sys.modules["rates_under_test"].price
    MutantSources().prepare(job).apply(live_functions({job.file}))
    assert price(10) == 12


def test_a_file_changed_since_the_job_was_planned_is_not_prepared(modules):
    (modules / "rates_under_test.py").write_text(RATES.replace("2", "5"), encoding="utf-8")
    with pytest.raises(SwapError, match="changed on disk during the run"):
        MutantSources().prepare(_patch_job(modules, "3"))


def test_a_mutant_that_does_not_compile_is_a_compile_error(modules):
    prepared = MutantSources().prepare(_patch_job(modules, "3 +"))
    with pytest.raises(MutantCompileError, match="SyntaxError"):
        prepared.compile_module()
    with pytest.raises(MutantCompileError, match="SyntaxError"):
        prepared.apply(functions={})


def test_a_mutant_whose_module_raises_when_run_is_an_import_failure(modules):
    prepared = MutantSources().prepare(_patch_job(modules, "1 / 0"))
    with pytest.raises(MutantImportError, match="import fails: ZeroDivisionError"):
        prepared.apply(functions={})
