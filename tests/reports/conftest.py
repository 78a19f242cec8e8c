import shutil

import pytest

from auditor.report import Report
from tests.conftest import copy_fixture, run_audit, shared_between_workers

OUTPUTS = {
    "html": "report.html",
    "markdown": "summary.md",
    "sarif": "audit.sarif",
    "stryker": "stryker.json",
    "junit": "gate.xml",
}


@pytest.fixture(scope="session")
def rendered(tmp_path_factory):
    """One real audit of the markup fixture writing every output (once for all xdist
    workers): {"root": project copy, "json": report path, format name: output path}."""
    with shared_between_workers(tmp_path_factory, "markup") as base:
        root, out = base / "markup", base / "out"
        if not (out / "report.json").exists():
            _render_every_output(root, out)
    paths = {name: out / file for name, file in OUTPUTS.items()}
    return {"root": root, "json": out / "report.json", **paths}


def _render_every_output(root, out) -> None:
    shutil.rmtree(root, ignore_errors=True)
    copy_fixture("markup", root)
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


@pytest.fixture(scope="session")
def report(rendered) -> Report:
    return Report.read(rendered["json"])
