import shutil

import pytest

from auditor.report import Report
from tests.conftest import FIXTURES, run_audit

OUTPUTS = {
    "html": "report.html",
    "markdown": "summary.md",
    "sarif": "audit.sarif",
    "stryker": "stryker.json",
    "junit": "gate.xml",
}


@pytest.fixture(scope="session")
def rendered(tmp_path_factory):
    """One real audit of the markup fixture writing every output:
    {"root": project copy, "json": report path, format name: output path}."""
    root = tmp_path_factory.mktemp("markup") / "markup"
    shutil.copytree(FIXTURES / "markup", root, ignore=shutil.ignore_patterns("__pycache__"))
    out = root.parent / "out"
    flags = [arg for name, file in OUTPUTS.items() for arg in (f"--{name}", str(out / file))]
    result = run_audit(
        "tests",
        "-q",
        "--json",
        str(out / "report.json"),
        "--min-mutation-score",
        "80",
        *flags,
        cwd=root,
    )
    assert result.returncode == 1, result.stderr  # the gate fails: the suite is shallow
    paths = {name: out / file for name, file in OUTPUTS.items()}
    return {"root": root, "json": out / "report.json", **paths}


@pytest.fixture(scope="session")
def report(rendered) -> Report:
    return Report.read(rendered["json"])
