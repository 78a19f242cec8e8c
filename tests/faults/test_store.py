"""Faults of `.audit/`: the cache broken, locked, of another layout or deleted, and the
report's folder deleted. Each costs time at most, never a verdict or the report."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_audit
from tests.faults.project import (
    FLAGS,
    details,
    line_of,
    make_project,
    sound,
    start_audit,
    verdicts,
    when_verdicts_are_written,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A project audited once, undisturbed, and its verdicts."""
    root = make_project(tmp_path_factory.mktemp("audited") / "calc")
    result = run_audit("tests", *FLAGS, cwd=root)
    assert result.returncode == 0, result.stderr
    return root, verdicts(root)


@pytest.fixture
def project(audited: tuple[Path, dict[str, str]], tmp_path: Path) -> Path:
    """A copy of the audited project, its cache full."""
    return Path(shutil.copytree(audited[0], tmp_path / "calc"))


def _cache(root: Path) -> Path:
    return root / ".audit" / "cache.sqlite"


@pytest.mark.parametrize(
    ("injected", "damage"),
    [
        ("cache.sqlite truncated to 100 bytes", lambda data: data[:100]),
        ("cache.sqlite overwritten with garbage", lambda data: bytes(range(256)) * 64),
    ],
)
def test_a_cache_that_is_not_a_database_is_started_again_and_the_run_says_so(
    project, audited, fault, injected, damage
):
    cache = _cache(project)
    cache.write_bytes(damage(cache.read_bytes()))
    result = run_audit("tests", *FLAGS, cwd=project)
    assert result.returncode == 0, result.stderr
    said = line_of(result.stdout, "cache:")
    assert "not a sound database" in said
    assert verdicts(project) == audited[1]
    assert sound(cache)
    fault(
        "store",
        injected,
        did="started the cache again, empty; measured every mutant",
        exit_code=result.returncode,
        saw=said.replace(str(project), "<project>"),
        lost="nothing of this run; the damaged cache costs a cold run's time",
    )


_LOCKER = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("begin exclusive")
print("locked", flush=True)
time.sleep(600)
"""


def test_a_run_checks_the_cache_file_once_however_often_its_stages_open_it(project, monkeypatch):
    """The soundness check reads the whole file; the run's start does it, and a stage
    that opens the cache after it does not again."""
    from auditor.config import AuditConfig
    from auditor.pipeline import run_audit as audit

    opened, checks = [], []
    connect = sqlite3.connect

    def traced(database, *args, **kwargs):
        connection = connect(database, *args, **kwargs)
        if str(database).endswith("cache.sqlite"):
            opened.append(database)
            connection.set_trace_callback(
                lambda statement: checks.append(statement) if "quick_check" in statement else None
            )
        return connection

    monkeypatch.setattr(sqlite3, "connect", traced)
    audit(["tests"], AuditConfig(probes=False), project)
    assert len(opened) >= 4
    assert checks == ["pragma quick_check"]


def test_a_cache_locked_by_another_process_is_read_and_not_waited_for(project, audited, fault):
    cache = _cache(project)
    locker = subprocess.Popen(
        [sys.executable, "-c", _LOCKER, str(cache)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert locker.stdout is not None and locker.stdout.readline() == "locked\n"
        result = run_audit("tests", *FLAGS, cwd=project, timeout=90)
    finally:
        locker.kill()
        locker.wait()
    assert result.returncode == 0, result.stderr
    said = line_of(result.stdout, "cache:")
    assert "locked by another process" in said
    assert verdicts(project) == audited[1]
    assert "from cache" in line_of(result.stdout, "mutation:")
    fault(
        "store",
        "cache.sqlite locked by another process (a write transaction held open)",
        did="read the cached verdicts, wrote none, waited for no lock",
        exit_code=result.returncode,
        saw=said.replace(str(project), "<project>"),
        lost="nothing of this run; its new verdicts are not cached (time)",
    )


def test_cache_tables_of_another_layout_are_emptied_and_the_run_says_so(project, audited, fault):
    cache = _cache(project)
    with sqlite3.connect(cache) as connection:
        connection.execute("drop table results")
        connection.execute("create table results (key text primary key, value text)")
    result = run_audit("tests", *FLAGS, cwd=project)
    assert result.returncode == 0, result.stderr
    said = line_of(result.stdout, "cache:")
    assert "another layout emptied (results)" in said
    assert verdicts(project) == audited[1]
    with sqlite3.connect(cache) as connection:
        columns = [row[1] for row in connection.execute("pragma table_info(results)")]
    assert columns == ["key", "value", "checksum"]
    fault(
        "store",
        "cache.sqlite from an older layout (a table with other columns)",
        did="emptied and made again the tables of another layout",
        exit_code=result.returncode,
        saw=said.replace(str(project), "<project>"),
        lost="nothing of this run; those tables' rows are measured again (time)",
    )


def test_a_cache_deleted_mid_run_costs_the_next_run_time_only(audited, tmp_path, fault):
    root = make_project(tmp_path / "calc")
    process = start_audit(root)
    when_verdicts_are_written(root, process)
    for file in _cache(root).parent.glob("cache.sqlite*"):
        file.unlink()
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert verdicts(root) == audited[1], details(root)
    rerun = run_audit("tests", *FLAGS, cwd=root)
    assert rerun.returncode == 0, rerun.stderr
    assert verdicts(root) == audited[1], details(root)
    assert sound(_cache(root))
    fault(
        "store",
        "cache.sqlite deleted while mutants run",
        did="finished the run; the next run made the cache again",
        exit_code=process.returncode,
        saw=line_of(out, "report:").replace(str(root), "<project>"),
        lost="nothing of this run; the next run measures the deleted rows again (time)",
    )


def test_the_report_folder_deleted_mid_run_is_made_again(audited, tmp_path, fault):
    root = make_project(tmp_path / "calc")
    (root / "out").mkdir()
    process = start_audit(root, "-q", "--no-probes", "--json", "out/report.json")
    when_verdicts_are_written(root, process)
    shutil.rmtree(root / "out")
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert verdicts(root, "out/report.json") == audited[1]
    fault(
        "store",
        "the report's folder deleted while mutants run",
        did="made the folder again and wrote the report",
        exit_code=process.returncode,
        saw=line_of(out, "report:").replace(str(root), "<project>"),
        lost="nothing",
    )


def _audit_with_audit_folder_mounted(root: Path, mount: str) -> subprocess.CompletedProcess[str]:
    """The audit, in a mount namespace of its own where `mount` has put something on
    `.audit/` (a mount namespace: the machine's own mounts stay untouched)."""
    (root / ".audit").mkdir(exist_ok=True)
    command = " ".join([mount, "&&", "exec", sys.executable, "-m", "auditor", "tests", *FLAGS])
    return subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", command],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "COLUMNS": "200"},
    )


@pytest.mark.needs("os-sandbox")
@pytest.mark.parametrize(
    ("injected", "mount", "reason"),
    [
        (
            "`.audit/` on a read-only mount",
            "mount --bind .audit .audit && mount -o remount,bind,ro .audit",
            "unable to open database file",
        ),
        (
            "`.audit/` on a full file system (a 48 KB tmpfs)",
            "mount -t tmpfs -o size=48k tmpfs .audit"
            " && { head -c 64k /dev/zero > .audit/fill 2>/dev/null; true; }",
            "database or disk is full",
        ),
    ],
)
def test_an_audit_folder_that_cannot_be_written_keeps_the_cache_in_memory(
    audited, tmp_path, fault, injected, mount, reason
):
    root = make_project(tmp_path / "calc")
    result = _audit_with_audit_folder_mounted(root, mount)
    assert result.returncode == 0, result.stderr
    said = line_of(result.stdout, "cache:")
    assert f"cannot be used ({reason})" in said
    assert verdicts(root) == audited[1], details(root)
    fault(
        "store",
        injected,
        did="kept the cache in memory for the run; wrote the report where it was asked",
        exit_code=result.returncode,
        saw=said.replace(str(root), "<project>"),
        lost="nothing of this run; its verdicts are not cached (time)",
    )
