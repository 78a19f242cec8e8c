"""The programs audit starts get the same addresses in every run, so a set that hashes
by address (`None` before Python 3.12, an object without `__hash__`) orders its members
alike in the baseline and in every runner, run after run."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

_ADDR_NO_RANDOMIZE = 0x0040000

_STARTS_THREE = """
import subprocess, sys
from auditor.containment.layout import fix_child_address_layout
assert fix_child_address_layout()
for _ in range(3):
    subprocess.run([sys.executable, "-c", "print(id(None))"], check=True)
"""


def test_programs_started_after_the_fix_have_the_same_addresses():
    started = subprocess.run(
        [sys.executable, "-c", _STARTS_THREE], capture_output=True, text=True, check=True
    )
    addresses = started.stdout.split()
    assert len(addresses) == 3
    assert len(set(addresses)) == 1


def _personality(pid: int) -> int:
    return int(Path(f"/proc/{pid}/personality").read_text(), 16)


def _first_child(pid: int, within: float) -> int:
    deadline = time.monotonic() + within
    children = Path(f"/proc/{pid}/task/{pid}/children")
    while time.monotonic() < deadline:
        found = children.read_text().split()
        if found:
            return int(found[0])
        time.sleep(0.01)
    raise AssertionError(f"audit started no child within {within}s")


def test_the_audit_command_starts_its_children_with_the_fixed_layout(project_copy):
    root = project_copy("hostile")
    process = subprocess.Popen(
        [sys.executable, "-m", "auditor", "hang", "-q"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        child = _first_child(process.pid, within=60)
        assert _personality(child) & _ADDR_NO_RANDOMIZE
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
