"""Audit's own children killed from outside while they work: the baseline's test
process and a probe process. The run goes on and its report equals an undisturbed run's.
(The parent, a mutation runner, a Dask worker and the warm agent session killed: their
tests live beside the code they test; docs/reliability.md lists them all.)"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path

import pytest

from tests.conftest import descendants, one_module_project, run_audit
from tests.faults.project import SOURCE, TESTS, line_of, start_audit

pytestmark = pytest.mark.slow

_SLOW_TEST = """\
import time

from calc import clamp


def test_clamp_keeps_a_value_inside():
    time.sleep(1)  # the baseline's test process is killed in here
    assert clamp(3, 0, 10) == 3
"""


def _project(root: Path) -> Path:
    return one_module_project(
        root, "calc", SOURCE, {"test_calc.py": TESTS, "test_slow.py": _SLOW_TEST}
    )


def _findings(root: Path) -> dict:
    report = json.loads((root / "report.json").read_text(encoding="utf-8"))
    return {
        "tests": sorted((t["nodeid"], t["outcome"]) for t in report["baseline"]["tests"]),
        "mutants": sorted((m["id"], m["status"]) for m in report["mutation"]["mutants"]),
        "witnesses": sorted((w["mutant_id"], w["status"]) for w in report["probes"]["witnesses"]),
        "probe findings": sorted((f["kind"], f["function"]) for f in report["probes"]["findings"]),
    }


@pytest.fixture(scope="module")
def undisturbed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = _project(tmp_path_factory.mktemp("undisturbed") / "calc")
    result = run_audit("tests", "-q", "--json", "report.json", cwd=root)
    assert result.returncode == 0, result.stderr
    return _findings(root)


def _kill_when_it_runs(module: str, process, after: float) -> None:
    """SIGKILL the first process of this audit running `python -m module`, `after`
    seconds after it is seen, while the audit runs. Only this audit's: the suite runs
    other audits beside it, whose probe processes were killed too and failed them."""
    wanted = f"-m\0{module}\0".encode()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the audit ended before {module} ran"
        for pid in descendants(process.pid):
            with contextlib.suppress(OSError):
                if wanted in Path(f"/proc/{pid}/cmdline").read_bytes():
                    time.sleep(after)
                    os.kill(pid, signal.SIGKILL)
                    return
        time.sleep(0.01)
    raise AssertionError(f"{module} never ran")


@pytest.mark.parametrize(
    ("module", "after", "injected"),
    [
        ("auditor.baseline.child", 0.5, "SIGKILL of the baseline's test process inside a test"),
        ("auditor.probes.child", 0.3, "SIGKILL of a probe process while it probes"),
    ],
)
def test_a_child_killed_from_outside_costs_its_work_again_not_the_report(
    tmp_path, undisturbed, fault, module, after, injected
):
    root = _project(tmp_path / "calc")
    process = start_audit(root, "-q", "--json", "report.json")
    _kill_when_it_runs(module, process, after)
    out, err = process.communicate(timeout=180)
    assert process.returncode == 0, err
    assert _findings(root) == undisturbed
    fault(
        "processes",
        injected,
        did="ran that work again; the report equals an undisturbed run's",
        exit_code=process.returncode,
        saw=line_of(out, "report:").replace(str(root), "<project>"),
        lost="nothing",
    )


_ENDS_ITS_PROBER = '''\
import os
import signal


def double(x: int) -> int:
    return x * 2


def ends_its_prober(x: int) -> int:
    """Kills the probe process that calls it, whichever of its forks calls it."""
    pid = os.getppid()
    while pid > 1:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            if b"auditor.probes.child" in cmdline.read():
                os.kill(pid, signal.SIGKILL)
        with open(f"/proc/{pid}/stat") as stat:
            pid = int(stat.read().rsplit(")", 1)[1].split()[1])
    return x
'''


_TESTS_DOUBLE = """\
from calc import double


def test_double():
    assert double(2) == 4
"""


def test_a_function_whose_probes_end_every_probe_process_is_reported_failed(tmp_path, fault):
    root = one_module_project(
        tmp_path / "calc",
        "calc",
        _ENDS_ITS_PROBER,
        {"test_calc.py": _TESTS_DOUBLE},
    )
    with (root / "pyproject.toml").open("a") as pyproject:
        pyproject.write('\n[tool.audit]\nprobe_allow = ["ends_its_prober"]\n')
    # Our own project, run outside the OS sandbox: inside it, the kill does not reach.
    result = run_audit("tests", "-q", "--sandbox", "none", "--json", "report.json", cwd=root)
    assert result.returncode == 0, result.stderr
    report = json.loads((root / "report.json").read_text(encoding="utf-8"))
    functions = {f["function"]: (f["status"], f["reason"]) for f in report["probes"]["functions"]}
    assert functions["double"] == ("probed", "")
    assert functions["ends_its_prober"][0] == "failed"
    assert "probe processes ended" in functions["ends_its_prober"][1]
    fault(
        "processes",
        "a function whose every call kills the probe process calling it",
        did="reported that function's probes failed, saying why; probed the other one",
        exit_code=result.returncode,
        saw=f"ends_its_prober: {functions['ends_its_prober'][1]}",
        lost="that function's probes",
    )
