"""The installed distributions as every verdict's key sees them."""

from __future__ import annotations

import subprocess
import sys

DIGEST = "from auditor.discovery.installed import packages_digest; print(packages_digest())"


def _digest(cwd, path_setup: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", f"import sys; {path_setup}; {DIGEST}"],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_the_folder_audit_starts_in_does_not_change_the_digest(tmp_path):
    """`python -m auditor` puts that folder on `sys.path`, the `audit` script and the MCP
    server's session do not; an sdist unpacked there holds an `*.egg-info`."""
    (tmp_path / "project.egg-info").mkdir()
    on_path = _digest(tmp_path, "sys.path.insert(0, '')")
    off_path = _digest(tmp_path, "sys.path[:] = [p for p in sys.path if p not in ('', '.')]")
    assert on_path == off_path


def test_a_distribution_installed_elsewhere_on_the_path_changes_it(tmp_path):
    site = tmp_path / "site"
    (site / "newdep-1.0.dist-info").mkdir(parents=True)
    assert _digest(tmp_path, "pass") != _digest(tmp_path, f"sys.path.append({str(site)!r})")
