import shutil

import pytest

from auditor.report import Report
from reports.outputs import write_outputs
from tests.reports.stored_report import STORED

OUTPUTS = {
    "html": "report.html",
    "markdown": "summary.md",
    "sarif": "audit.sarif",
    "stryker": "stryker.json",
    "junit": "gate.xml",
}


@pytest.fixture(scope="session")
def report() -> Report:
    """The stored report of a real audit of the markup fixture (tests/reports/stored_report.py)."""
    return Report.read(STORED)


@pytest.fixture(scope="session")
def rendered(report, tmp_path_factory):
    """Every output rendered from the stored report: {"json": the report's path, format
    name: output path}."""
    out = tmp_path_factory.mktemp("rendered")
    shutil.copyfile(STORED, out / "report.json")
    paths = {name: out / file for name, file in OUTPUTS.items()}
    write_outputs(report, paths, None)
    return {"json": out / "report.json", **paths}
