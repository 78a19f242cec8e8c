"""The OS sandbox: escapes the audit-hook guard cannot see are stopped by read-only mounts
and an empty network namespace. Skipped (with the reason) where the machine has no user
namespaces (failed instead where AUDIT_TEST_REQUIRE names os-sandbox, as in CI): the
escape suite must never run under the guard alone."""

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from auditor.containment import pids
from auditor.containment.isolation import choose
from tests.conftest import mutants_of, run_audit, tree_digest

ISOLATION = choose("auto")
needs_os_sandbox = pytest.mark.needs("os-sandbox")


@pytest.mark.slow
@needs_os_sandbox
def test_escapes_past_the_guard_are_blocked_by_the_sandbox(project_copy, tmp_path):
    root = project_copy("hostile")
    victim = subprocess.Popen(["sleep", "300"])
    (root / "escapes" / "victim.pid").write_text(str(victim.pid))
    domainname = Path("/proc/sys/kernel/domainname").read_text()
    before = tree_digest(root)
    out = tmp_path / "r.json"
    try:
        result = run_audit(
            "escapes", "-q", "--sandbox", "os", "--timeout", "5", "--json", str(out), cwd=root
        )
        victim_alive = victim.poll() is None
    finally:
        victim.kill()
        victim.wait()
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert report["sandbox"]["level"] == "os"
    tests = {t["nodeid"].split("::")[-1]: t for t in report["baseline"]["tests"]}
    libc = tests["test_writes_through_libc_directly"]
    assert libc["outcome"] == "blocked"
    assert libc["message"].startswith("blocked by sandbox: ")
    assert "Read-only file system" in libc["message"]
    assert tests["test_writes_through_a_shell"]["outcome"] in ("failed", "blocked")
    remount = tests["test_remounts_the_root_writable_first"]
    assert (remount["outcome"], remount["message"]) == (
        "failed",
        "PermissionError: [Errno 1] Operation not permitted: '/'",
    )
    assert tests["test_kills_a_process_of_the_machine"]["outcome"] == "failed"
    assert victim_alive, "a sandboxed test killed a process outside the sandbox"
    assert tests["test_writes_a_kernel_setting"]["outcome"] == "failed"
    assert Path("/proc/sys/kernel/domainname").read_text() == domainname
    assert tests["test_still_audited"]["outcome"] == "passed"
    for escaped in ("ctypes", "shell", "remount"):
        assert not Path(f"/etc/audit-escape-{escaped}").exists()
    assert tree_digest(root) == before


def _tasks_working_in(root: Path) -> int:
    """Processes whose working folder lies in `root`: a test's forks inherit its folder,
    and tests running beside this one (pytest-xdist) do not count."""
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError):
                cwd = os.readlink(f"/proc/{name}/cwd")
                count += cwd == str(root) or cwd.startswith(f"{root}/")
    return count


@pytest.mark.slow
@needs_os_sandbox
def test_a_fork_bomb_is_bounded_and_leaves_nothing_behind(project_copy, tmp_path):
    root = project_copy("hostile")
    peak = [0]
    running = True

    def sample() -> None:
        while running:
            peak.append(_tasks_working_in(root))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    out = tmp_path / "r.json"
    try:
        result = run_audit(
            "fork_bomb", "-q", "--sandbox", "os", "--no-mutation", "--no-probes",
            "--timeout", "5", "--json", str(out), cwd=root,
        )  # fmt: skip
    finally:
        running = False
        sampler.join()
    assert result.returncode == 0, result.stderr
    tests = {
        t["nodeid"].split("::")[-1]: t for t in json.loads(out.read_text())["baseline"]["tests"]
    }
    bomb = tests["test_forks_for_ever"]
    assert bomb["outcome"] in ("timeout", "failed"), bomb
    if bomb["outcome"] == "failed":
        assert "Resource temporarily unavailable" in bomb["message"]
    assert tests["test_fine"]["outcome"] == "passed"
    sandboxes_at_once = 2  # the measured baseline run and its flaky rerun, side by side
    assert 100 < max(peak) < sandboxes_at_once * pids.MAX_TASKS + 50  # + the audit itself
    assert _tasks_working_in(root) == 0


@needs_os_sandbox
def test_inside_the_sandbox_only_the_writable_folders_are_writable(tmp_path):
    writable = tmp_path / "scratch"
    writable.mkdir()
    outside = Path("/etc") / f"written-from-a-sandbox-{os.getpid()}"  # never under /tmp
    probe = (
        "import socket\n"
        "def attempt(action):\n"
        "    try:\n"
        "        action(); return 'done'\n"
        "    except OSError as exc:\n"
        "        return exc.strerror\n"
        f"print(attempt(lambda: open({str(writable / 'f')!r}, 'w').close()))\n"
        f"print(attempt(lambda: open({str(outside)!r}, 'w').close()))\n"
        "print(attempt(lambda: socket.create_connection(('127.0.0.1', 9), timeout=2)))\n"
    )
    command = ISOLATION.wrap([sys.executable, "-c", probe], str(writable))
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines() == [
        "done",
        "Read-only file system",
        "Network is unreachable",
    ], done.stderr
    assert not outside.exists()


@needs_os_sandbox
def test_the_shared_temp_folder_is_writable_inside_and_untouched_outside(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    written = Path("/tmp") / f"written-from-a-sandbox-{os.getpid()}"
    probe = f"open({str(written)!r}, 'w').write('x'); print(open({str(written)!r}).read())"
    command = ISOLATION.wrap([sys.executable, "-c", probe], str(home))
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "x\n"), done.stderr
    assert not written.exists()


@needs_os_sandbox
def test_a_sandbox_killed_as_it_starts_is_gone_at_once(tmp_path):
    # Ctrl-C can arrive before `unshare` has forked its namespace's init: the kill must
    # not wait out the teardown limit for an init it has not seen yet.
    kills = []
    for number in range(5):
        workdir = tmp_path / f"run-{number}"
        workdir.mkdir()
        command = ISOLATION.wrap([sys.executable, "-c", "while True: pass"], str(workdir))
        process = subprocess.Popen(command, cwd=workdir, start_new_session=True)
        began = time.monotonic()
        ISOLATION.kill(process)
        kills.append((time.monotonic() - began, workdir))
        process.wait(timeout=5)
    assert [took < 5 for took, _ in kills] == [True] * 5
    assert [_tasks_working_in(workdir) for _, workdir in kills] == [0] * 5


def test_guard_and_none_are_taken_as_asked():
    assert choose("guard").level == "guard"
    assert choose("none").level == "none"
    assert choose("guard").wrap(["x"], "/tmp", ["/srv"]) == ["x"]


@needs_os_sandbox
def test_an_allowed_folder_is_writable_inside_and_unchanged_outside(tmp_path):
    home, shared = tmp_path / "home", tmp_path / "shared"
    home.mkdir()
    (shared / "sub").mkdir(parents=True)
    (shared / "kept.txt").write_text("original")
    (shared / "removed.txt").write_text("original")
    before = tree_digest(shared)
    probe = (
        "import os, pathlib\n"
        f"shared = pathlib.Path({str(shared)!r})\n"
        "(shared / 'kept.txt').write_text('changed')\n"
        "(shared / 'removed.txt').unlink()\n"
        "(shared / 'sub' / 'new.txt').write_text('new')\n"
        "os.chmod(shared / 'sub', 0o700)\n"
        "print((shared / 'kept.txt').read_text(), sorted(os.listdir(shared)))\n"
    )
    command = ISOLATION.wrap([sys.executable, "-c", probe], str(home), [str(shared)])
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["changed", "['kept.txt',", "'sub']"], done.stderr
    assert tree_digest(shared) == before


@pytest.mark.slow
@needs_os_sandbox
def test_a_test_that_writes_into_the_project_passes_with_allow_write_and_changes_nothing(
    project_copy, tmp_path
):
    root = project_copy("hostile")
    before = tree_digest(root)
    out = tmp_path / "r.json"
    result = run_audit(
        "writes_outside_tmp", "-q", "--sandbox", "os", "--allow-write", ".", "--no-probes",
        "--timeout", "5", "--json", str(out), cwd=root,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    tests = {t["nodeid"].split("::")[-1]: t["outcome"] for t in report["baseline"]["tests"]}
    assert tests["test_writes_into_the_project"] == "passed"
    assert tests["test_writes_to_etc"] == "blocked"
    runs_in_mutants = {  # the mutation runners overlay the project too
        test for m in mutants_of(report) for test in m["covered_by"] + m["killed_by"]
    }
    assert any(test.endswith("::test_writes_into_the_project") for test in runs_in_mutants)
    assert not (root / "written-by-test.txt").exists()
    assert tree_digest(root) == before
