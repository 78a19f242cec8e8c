"""How audit hands the probe work to its probe processes: an item at a time, to whichever
process asks, longest items first; a probe process stops when audit dies."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from auditor.config import AuditConfig
from auditor.containment import isolation, wire
from auditor.context import RunContext
from auditor.discovery.project import discover
from auditor.mutation.protocol import Job
from auditor.probes.processes import ProbeProcesses
from auditor.probes.protocol import (
    SEARCH_CHUNK,
    FunctionResult,
    ProbeSpec,
    ProbeWork,
    SurvivorSpec,
    TargetSpec,
    search_items,
)
from auditor.probes.stage import _Dispatcher, _work_items
from auditor.probes.targets import find_targets
from tests.conftest import one_module_project, target_spec


def _target(key: str) -> TargetSpec:
    return target_spec(key, key.partition("::")[0], "pkg")


def _survivor(mutant_id: str, path: str, targets: tuple[str, ...] = ("a::f",)) -> SurvivorSpec:
    job = Job(id=mutant_id, path="swap", file=path, module_name="", tests=[], timeout=1.0)
    return SurvivorSpec(job=job, description="", targets=list(targets))


def test_witness_searches_come_first_largest_group_first_then_function_probes():
    survivors = [
        _survivor("a1", "/p/a.py"),
        _survivor("b1", "/p/b.py"),
        _survivor("b2", "/p/b.py"),
        _survivor("b3", "/p/b.py", ("b::g", "b::h")),
        _survivor("c1", "/p/c.py"),
    ]
    items = _work_items([_target("pkg.py::f"), _target("pkg.py::g")], survivors)
    assert items == [
        ("search", "/p/b.py::a::f#0"),
        ("search", "/p/a.py::a::f#0"),
        ("search", "/p/b.py::b::g,b::h#0"),
        ("search", "/p/c.py::a::f#0"),
        ("probe", "pkg.py::f"),
        ("probe", "pkg.py::g"),
    ]


def test_a_large_group_is_searched_in_parts_each_in_mutant_order():
    survivors = [_survivor(f"m{n:03}", "/p/a.py") for n in reversed(range(SEARCH_CHUNK + 1))]
    items = search_items(survivors)
    assert list(items) == ["/p/a.py::a::f#0", "/p/a.py::a::f#1"]
    assert [s.mutant_id for s in items["/p/a.py::a::f#1"]] == [f"m{SEARCH_CHUNK:03}"]
    assert items["/p/a.py::a::f#0"][0].mutant_id == "m000"


def test_a_process_is_given_the_searches_through_functions_it_generated_inputs_for():
    generates = [frozenset(keys) for keys in ({"a", "b"}, {"c"}, {"a"}, {"b"}, set())]
    dispatcher = _Dispatcher([], generates)
    first, second = 1, 2
    assert dispatcher.next_for(first) == 0
    assert dispatcher.next_for(second) == 1  # touches nothing the first generated
    assert dispatcher.next_for(first) == 2  # "a": generated already
    assert dispatcher.next_for(second) == 4  # a probe rather than "b" a second time
    assert dispatcher.next_for(first) == 3
    assert dispatcher.next_for(second) is None


def test_a_process_left_with_only_anothers_searches_takes_the_next_one():
    dispatcher = _Dispatcher([], [frozenset({"a"}), frozenset({"a"}), frozenset({"a"})])
    assert [dispatcher.next_for(1), dispatcher.next_for(2), dispatcher.next_for(1)] == [0, 1, 2]


_WORKER = """
import os, sys, time
pause, record = float(sys.argv[1]), open(sys.argv[2], "w")
while True:
    os.write(1, b"\\n")
    line = sys.stdin.readline()
    if line in ("", "\\n"):
        break
    record.write(line)
    record.flush()
    time.sleep(pause)
"""


@pytest.mark.slow
def test_each_item_goes_once_to_whichever_process_asks(tmp_path):
    records = [tmp_path / "slow.txt", tmp_path / "fast.txt"]
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, pause, str(record)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        for pause, record in zip(["1.0", "0"], records, strict=True)
    ]
    dispatcher = _Dispatcher(processes, [frozenset()] * 20)
    deadline = time.monotonic() + 30
    while any(p.poll() is None for p in processes) and time.monotonic() < deadline:
        dispatcher.serve(timeout=0.1)
    for process in processes:
        process.wait(timeout=5)
        assert process.returncode == 0
    slow, fast = ([int(n) for n in record.read_text().split()] for record in records)
    assert sorted(slow + fast) == list(range(20))
    assert len(slow) <= 3 < len(fast)


@pytest.mark.slow
def test_the_work_is_done_without_waiting_for_a_process_still_starting(tmp_path):
    """A second process started beside an early one takes seconds to start; with every
    item done it would only be told there is no more."""
    record = tmp_path / "record.txt"
    worker = subprocess.Popen(
        [sys.executable, "-c", _WORKER, "0", str(record)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    starting = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    dispatcher = _Dispatcher([worker, starting], [frozenset()] * 3)
    deadline = time.monotonic() + 30
    while not dispatcher.finished and time.monotonic() < deadline:
        dispatcher.serve(timeout=0.1)
    done = record.read_text().split()
    still_starting = starting.poll() is None
    for process in (worker, starting):
        process.kill()
        process.wait()
    assert dispatcher.finished and still_starting
    assert [int(n) for n in done] == [0, 1, 2]


_DIES_ON_ITS_FIRST_ITEM = """
import os, sys
os.write(1, b"\\n")
sys.stdin.readline()
os._exit(1)
"""


@pytest.mark.slow
def test_the_item_of_a_process_that_died_goes_to_another_once(tmp_path):
    record = tmp_path / "record.txt"
    dying = subprocess.Popen(
        [sys.executable, "-c", _DIES_ON_ITS_FIRST_ITEM],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    dispatcher = _Dispatcher([dying], [frozenset()] * 3)
    while dying.poll() is None:
        dispatcher.serve(timeout=0.1)
    dispatcher.serve(timeout=1)  # its end of file
    other = subprocess.Popen(
        [sys.executable, "-c", _WORKER, "0", str(record)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    dispatcher.add(other)
    deadline = time.monotonic() + 30
    while other.poll() is None and time.monotonic() < deadline:
        dispatcher.serve(timeout=0.1)
    assert [int(n) for n in record.read_text().split()] == [0, 1, 2]
    assert not dispatcher.left


def test_a_probe_process_that_dies_before_its_order_arrives_leaves_the_run_going(tmp_path):
    """Its order fails to reach it once (a dead process's missing results say what it
    lost): closing its pipe afterwards does not fail too. It did, and ended the whole run
    with exit 1 and nothing printed."""
    root = one_module_project(tmp_path / "pkg", "pkg", _CODE, {"test_pkg.py": _TEST})
    run = RunContext.start(discover(["tests"], [], root), AuditConfig(sandbox="none"))
    processes = ProbeProcesses(run, ["pkg"], [], searches=False)
    target = find_targets(root / "pkg.py", "pkg.py", "pkg")[0]
    spec = target_spec(target.key, str(root / "pkg.py"), "pkg", target.line)
    processes.hand(ProbeWork(targets=[spec], survivors=[], items=[("probe", target.key)]))
    process = processes.start()
    dispatcher = _Dispatcher([process], [frozenset()])
    assert _asks(process)  # its request for an item, read by the test, not the dispatcher
    process.kill()
    process.wait(timeout=10)
    dispatcher._send(process, 0)
    processes.close()
    assert process.returncode == -9


_TEST = """
from pkg import halve


def test_halve():
    assert halve(4) == 2
"""


_CODE = """
def halve(n: int) -> int:
    return n // 2
"""


def _spec(tmp_path: Path) -> ProbeSpec:
    (tmp_path / "pkg.py").write_text(textwrap.dedent(_CODE), encoding="utf-8")
    (tmp_path / "results.jsonl").touch()
    return ProbeSpec(
        root=str(tmp_path),
        source_files=[str(tmp_path / "pkg.py")],
        allowed_roots=[str(tmp_path)],
        guard=False,
        memory_limit_mb=2048,
        log_file=str(tmp_path / "output.log"),
        results_file=str(tmp_path / "results.jsonl"),
        max_examples=20,
        witness_examples=60,
        time_budget=10,
        call_timeout=0.5,
        expected_exceptions=[],
        modules=["pkg"],
    )


def _start(tmp_path: Path, sandbox: str = "none", handed: bool = True) -> subprocess.Popen[bytes]:
    """A probe process of `pkg.halve`; `handed`: given its work (probe `halve`) at once."""
    wire.write(tmp_path / "spec.json", _spec(tmp_path))
    command = [sys.executable, "-m", "auditor.probes.child", str(tmp_path / "spec.json")]
    process = subprocess.Popen(
        isolation.choose(sandbox).wrap(command, home=str(tmp_path)),
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    if handed:
        _hand(process, tmp_path)
    return process


def _hand(process: subprocess.Popen[bytes], tmp_path: Path) -> None:
    """The work: probing `halve`, with what the baseline saw of it (nothing)."""
    assert process.stdin is not None
    target = find_targets(tmp_path / "pkg.py", "pkg.py", "pkg")[0]
    spec = target_spec(target.key, str(tmp_path / "pkg.py"), "pkg", target.line)
    work = ProbeWork(targets=[spec], survivors=[], items=[("probe", target.key)])
    wire.write(tmp_path / "work.json", work)
    process.stdin.write(f"{tmp_path / 'work.json'}\n".encode())
    process.stdin.flush()


def _asks(process: subprocess.Popen[bytes]) -> bool:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], 30)
    return bool(ready) and os.read(process.stdout.fileno(), 1) == b"\n"


def _does_the_one_item(process: subprocess.Popen[bytes]) -> int:
    """Hands the process item 0 when it asks, then no more when it asks again; its exit
    code."""
    assert process.stdin is not None
    assert _asks(process)
    process.stdin.write(b"0\n")
    process.stdin.flush()
    assert _asks(process)
    process.stdin.write(b"\n")
    process.stdin.flush()
    return process.wait(timeout=30)


@pytest.mark.slow
def test_the_probe_process_runs_what_it_is_handed_and_ends_when_told(tmp_path):
    process = _start(tmp_path)
    assert _does_the_one_item(process) == 0
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    results = [wire.decode(FunctionResult, line) for line in lines]
    assert [result.probe.function for result in results] == ["halve"]


@pytest.mark.slow
def test_a_probe_process_started_before_its_work_waits_for_it_then_does_it(tmp_path):
    process = _start(tmp_path, handed=False)
    assert process.stdout is not None and process.stdin is not None
    ready, _, _ = select.select([process.stdout], [], [], 5)
    assert not ready  # it asks for no item before it has the work
    _hand(process, tmp_path)
    assert _does_the_one_item(process) == 0
    (line,) = (tmp_path / "results.jsonl").read_text().splitlines()
    assert wire.decode(FunctionResult, line).probe.status == "probed"


def test_a_probe_process_told_there_is_no_work_ends_with_no_results(tmp_path):
    process = _start(tmp_path, handed=False)
    assert process.stdin is not None
    process.stdin.write(b"\n")
    process.stdin.flush()
    assert process.wait(timeout=30) == 0
    assert (tmp_path / "results.jsonl").read_text() == ""


def test_a_probe_process_waiting_for_its_work_stops_when_audit_dies(tmp_path):
    process = _start(tmp_path, handed=False)
    assert process.stdin is not None
    process.stdin.close()  # what audit's death does to the pipe
    assert process.wait(timeout=30) == -9
    assert (tmp_path / "results.jsonl").read_text() == ""


def test_the_probe_process_stops_when_audit_dies(tmp_path):
    process = _start(tmp_path)
    assert process.stdin is not None
    assert _asks(process)
    process.stdin.close()  # what audit's death does to the pipe
    assert process.wait(timeout=10) == -9
    assert (tmp_path / "results.jsonl").read_text() == ""


@pytest.mark.needs("os-sandbox")
def test_the_probe_process_stops_when_audit_dies_in_the_sandbox_too(tmp_path):
    """There it is PID 1 of its namespace, which a signal it sends itself does not stop:
    it leaves by itself, and the sandbox with it."""
    process = _start(tmp_path, "os")
    assert process.stdin is not None
    assert _asks(process)
    process.stdin.close()  # what audit's death does to the pipe
    process.wait(timeout=10)
    assert (tmp_path / "results.jsonl").read_text() == ""


def test_an_order_that_is_not_one_stops_the_probe_process(tmp_path):
    """Only audit writes there; anything else means the channel is broken: the process
    must not wait for an order that cannot come."""
    process = _start(tmp_path)
    assert process.stdin is not None
    assert _asks(process)
    process.stdin.write(b"not an order\n")
    process.stdin.flush()
    process.wait(timeout=10)
    assert (tmp_path / "results.jsonl").read_text() == ""
