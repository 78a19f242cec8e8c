"""A project with packages named like ours: audit never imports its `mutators` or
`reports`, its tests get their own, and a top-level `auditor` is refused up front."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from auditor.agent.mcp_server import AuditCall, audit_in_session
from auditor.agent.session import WarmSession
from auditor.containment.launch import own_module

pytestmark = pytest.mark.slow

_MARKS_ITS_IMPORT = """
from pathlib import Path
try:  # the sandbox refuses the write: only an import outside it leaves the mark
    Path(__file__).parent.parent.joinpath("IMPORTED-" + __name__).touch()
except BaseException:
    pass
NAME = "the project's " + __name__
"""


def _project(root: Path) -> Path:
    for name in ("mutators", "reports"):
        (root / name).mkdir(parents=True)
        (root / name / "__init__.py").write_text(_MARKS_ITS_IMPORT, encoding="utf-8")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    # Enough source for audit to find its mutation sites in a helper during the baseline.
    padding = "".join(f"# {'padding ' * 8}{n}\n" for n in range(800))
    (root / "pkg" / "core.py").write_text(
        padding + "def double(n):\n    return n * 2\n", encoding="utf-8"
    )
    (root / "tests").mkdir()
    (root / "tests" / "test_core.py").write_text(
        textwrap.dedent(
            """
            import reports
            from pkg.core import double

            def test_double():
                assert double(3) == 6

            def test_the_projects_own_reports_package():
                assert reports.NAME == "the project's reports"
            """
        ),
        encoding="utf-8",
    )
    (root / "pyproject.toml").write_text(
        '[project]\nname = "pkg"\nversion = "0"\n'
        '[tool.setuptools]\npackages = ["pkg"]\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["."]\n',
        encoding="utf-8",
    )
    return root


def _imported(root: Path) -> list[str]:
    return sorted(path.name for path in root.glob("IMPORTED-*"))


def test_the_audit_command_imports_none_of_the_projects_packages_named_like_ours(tmp_path):
    root = _project(tmp_path / "project")
    done = subprocess.run(
        [str(Path(sys.executable).parent / "audit"), "tests", "--no-probes", "--json", "r.json"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "2 passed" in done.stderr
    # The baseline and the mutants' runs imported the project's `reports` (its tests
    # did), inside the sandbox, where it cannot write: no mark at all.
    assert _imported(root) == []


def test_the_mcp_servers_audit_imports_none_of_them(tmp_path):
    root = _project(tmp_path / "project")
    session = WarmSession(root)
    try:
        result = audit_in_session(session, root, AuditCall(["tests"], None, None, "r.json"))
    finally:
        session.close()
    assert (result.exit_code, result.survived) == (0, 0)
    assert _imported(root) == []


def test_our_module_runs_from_a_folder_holding_a_package_named_like_ours(tmp_path):
    root = _project(tmp_path / "project")
    (root / "auditor").mkdir()
    (root / "auditor" / "__init__.py").write_text(_MARKS_ITS_IMPORT, encoding="utf-8")
    done = subprocess.run(
        own_module("auditor", "--version"), cwd=root, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("audit")
    assert _imported(root) == []


def test_a_project_with_a_top_level_auditor_module_is_refused_in_one_line(tmp_path):
    root = _project(tmp_path / "project")
    (root / "auditor.py").write_text(_MARKS_ITS_IMPORT, encoding="utf-8")
    done = subprocess.run(
        [str(Path(sys.executable).parent / "audit"), "tests"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "audit: discover: auditor.py: a top-level module named 'auditor' would be imported "
        "in place of audit's own in the test processes; audit cannot run this project"
    )
    assert _imported(root) == []
