"""The guard's decisions, called directly (an installed audit hook cannot be removed)."""

import os
import socket

import pytest

from auditor.containment.guard import Blocked, Guard, GuardViolation


@pytest.fixture
def blocked():
    return []


@pytest.fixture
def guard(tmp_path, blocked):
    return Guard([str(tmp_path)], blocked.append)


def test_write_outside_allowed_folders_is_refused_and_recorded(guard, blocked):
    with pytest.raises(GuardViolation, match="blocked by audit guard: open-for-write /etc/x"):
        guard("open", ("/etc/x", "w", os.O_WRONLY | os.O_CREAT))
    assert blocked == [Blocked("open-for-write", "/etc/x")]


def test_reading_anywhere_is_allowed(guard, blocked):
    guard("open", ("/etc/hostname", "r", os.O_RDONLY))
    assert blocked == []


def test_writing_inside_an_allowed_folder_is_allowed(guard, tmp_path, blocked):
    guard("open", (str(tmp_path / "sub" / "f.txt"), "w", os.O_WRONLY | os.O_CREAT))
    assert blocked == []


def test_os_open_with_write_flags_is_refused(guard):
    with pytest.raises(GuardViolation):
        guard("open", ("/usr/x", None, os.O_RDWR))


def test_symlink_escape_from_allowed_folder_is_refused(guard, tmp_path):
    (tmp_path / "link").symlink_to("/etc")
    with pytest.raises(GuardViolation):
        guard("open", (str(tmp_path / "link" / "passwd"), "a", os.O_APPEND | os.O_WRONLY))


@pytest.mark.parametrize(
    ("event", "args"),
    [
        ("os.chmod", ("/usr/bin/env", 0o777, None)),
        ("os.remove", ("/etc/hosts", None)),
        ("os.rename", ("/etc/a", "/etc/b", None, None)),
        ("shutil.rmtree", ("/usr", None)),
        ("os.mkdir", ("/opt/new", 0o777, None)),
    ],
)
def test_filesystem_changes_outside_allowed_folders_are_refused(guard, event, args):
    with pytest.raises(GuardViolation, match=event):
        guard(event, args)


def test_rename_into_an_allowed_folder_from_outside_is_refused(guard, tmp_path):
    with pytest.raises(GuardViolation):
        guard("os.rename", ("/etc/hosts", str(tmp_path / "hosts"), None, None))


def test_network_connections_are_refused(guard):
    with socket.socket() as sock, pytest.raises(GuardViolation, match="network"):
        guard("socket.connect", (sock, ("127.0.0.1", 80)))


def test_name_resolution_is_refused(guard):
    with pytest.raises(GuardViolation, match="network resolve"):
        guard("socket.getaddrinfo", ("example.com", 80, 0, 0, 0))


def test_unix_sockets_are_allowed(guard, blocked):
    with socket.socket(socket.AF_UNIX) as sock:
        guard("socket.connect", (sock, "/tmp/some.sock"))
    assert blocked == []


def test_dev_null_is_writable(guard):
    guard("open", ("/dev/null", "w", os.O_WRONLY))


def test_writing_under_the_shared_temp_folder_is_allowed(guard, blocked):
    guard("open", ("/tmp/some-test-output/f.txt", "w", os.O_WRONLY | os.O_CREAT))
    guard("os.chmod", ("/tmp/some-test-output/f.txt", 0o600, None))
    assert blocked == []


def test_the_project_is_protected_even_inside_the_temp_folder(tmp_path, blocked):
    project = tmp_path / "project"
    guard = Guard([str(project / ".audit" / "run")], blocked.append, [str(project)])
    with pytest.raises(GuardViolation):
        guard("open", (str(project / "data.csv"), "w", os.O_WRONLY | os.O_CREAT))
    guard("open", (str(project / ".audit" / "run" / "f"), "w", os.O_WRONLY | os.O_CREAT))
    guard("open", (str(tmp_path / "next-to-it"), "w", os.O_WRONLY | os.O_CREAT))
    assert blocked == [Blocked("open-for-write", str(project / "data.csv"))]


@pytest.mark.parametrize(
    ("event", "target"),
    [
        ("os.kill", os.getppid()),
        ("os.kill", -1),
        ("os.kill", 1),
        ("os.killpg", os.getpgid(os.getppid())),
    ],
    ids=["the parent", "every process", "init", "the parent's group"],
)
def test_a_signal_that_reaches_the_auditor_is_refused(guard, event, target):
    with pytest.raises(GuardViolation, match="blocked by audit guard: signal"):
        guard(event, (target, 9))


def test_a_signal_to_a_process_of_the_test_s_own_is_allowed(guard, blocked):
    guard("os.kill", (os.getpid() + 1_000_000, 15))
    assert blocked == []


def test_events_the_guard_does_not_watch_pass(guard, blocked):
    guard("builtins.id", (object(),))
    guard("sys._getframe", (None,))
    assert blocked == []
