"""A mutant of a table another module builds a registry from at import time."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from auditor.config import AuditConfig
from auditor.pipeline import run_audit

pytestmark = pytest.mark.slow

FILES = {
    "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
    "pkg/_tables.py": """
        units = {}
        units["length"] = {"m": 1, "km": 1000}

        registry = {}


        def build_registry(units=units, registry=registry):
            for table in units.values():
                registry.update(table)
        """,
    "pkg/__init__.py": """
        from pkg import _tables
        from pkg.convert import to_metres

        _tables.build_registry()
        """,
    "pkg/convert.py": """
        from pkg import _tables


        def to_metres(amount, unit):
            return amount * _tables.registry[unit]
        """,
    "tests/test_convert.py": """
        from pkg import to_metres


        def test_kilometres():
            assert to_metres(2, "km") == 2000
        """,
}


def test_the_registry_another_module_builds_sees_the_mutated_table(tmp_path: Path):
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip())
    report = run_audit(["tests"], AuditConfig(probes=False, verify_sample=6), tmp_path)
    status = {
        mutant.id.split("::", 1)[1]: mutant.status
        for mutant in report.mutation.mutants
        if mutant.file == "pkg/_tables.py" and mutant.function == ""
    }
    # `"km": 1000` changed: the registry `pkg/__init__` builds holds the new factor.
    assert {status[f"<module>::constants.number@2:33#{n}"] for n in range(3)} == {"Killed"}
    # `"m": 1` changed: no test converts metres (a fresh import agrees: it survives;
    # re-running the table alone used to leave the registry empty, a false kill).
    assert {status[f"<module>::constants.number@2:24#{n}"] for n in range(3)} == {"Survived"}
    verification = report.mutation.verification
    assert verification.agreed == verification.checked
