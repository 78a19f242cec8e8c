"""A mutant's child is stopped by the CPU time it burns, with wall time as the backstop
for a hang that waits: real forked processes, watched as the runner watches them."""

import os
import time

from auditor.containment.cpu import cpu_seconds
from auditor.containment.memory import MemoryWatch, resident_bytes
from auditor.mutation.protocol import Job, OriginalCost, TestBudget, wall_allowed
from auditor.mutation.runner import _Progress, _read_until, _verdict, _Watched


def _child(work) -> tuple[int, int]:
    """A forked process that does `work`, writes "done" and exits."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        work()
        os.write(write_end, b"done\n")
        os._exit(0)
    os.close(write_end)
    return pid, read_end


def _watch(work, cpu: float, wall: float = 0.0) -> tuple[bytes, str | None, float]:
    """What the child wrote, what it ran past, and the CPU seconds it had used then."""
    pid, read_end = _child(work)
    job = Job(id="m", path="swap", file="f.py", module_name="f", tests=[], timeout=cpu)
    watched = _Watched(pid, TestBudget(job, ()), MemoryWatch(pid, resident_bytes(pid), 512), wall)
    output, past = _read_until(read_end, watched)
    used = cpu_seconds(pid)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    os.close(read_end)
    return output, past, used


def _spin() -> None:
    while True:
        pass


def test_a_child_that_waits_longer_than_its_cpu_allowance_finishes():
    output, past, _ = _watch(lambda: time.sleep(0.6), cpu=0.1)
    assert (output, past) == (b"done\n", None)


def test_a_child_that_computes_forever_is_stopped_once_past_its_cpu_allowance():
    started = time.monotonic()
    output, past, used = _watch(_spin, cpu=0.2, wall=30.0)
    assert output == b""
    assert past == "more than 0.20s of CPU time"
    assert 0.2 < used < 1.0
    assert time.monotonic() - started < 30.0


def test_a_child_that_waits_forever_is_stopped_by_the_wall_backstop():
    output, past, used = _watch(lambda: time.sleep(60), cpu=0.1, wall=0.5)
    assert output == b""
    assert past == "no verdict within 0.5s"
    assert used < 0.1


def test_a_verdict_written_in_time_counts_though_the_runner_reads_it_late():
    pid, read_end = _child(lambda: None)
    os.waitpid(pid, 0)
    job = Job(id="m", path="swap", file="f.py", module_name="f", tests=[], timeout=0.1)
    memory = MemoryWatch(pid, resident_bytes(os.getpid()), 512)
    # The runner was kept from a core for ten seconds after the child started.
    late = _Watched(pid, TestBudget(job, ()), memory, wall=0.5, started=time.monotonic() - 10)
    output, past = _read_until(read_end, late)
    os.close(read_end)
    assert (output, past) == (b"done\n", None)


def _compute(seconds: float) -> None:
    started = time.process_time()
    while time.process_time() - started < seconds:
        pass


def _crowded_out() -> None:
    """Compute for 5 ms of CPU on the core two spinners hold, as an idle-class process:
    the kernel lets it run a slice about once a second, so it waits for a core longer
    than the backstop at a stretch."""
    os.sched_setaffinity(0, {0})
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    _compute(0.005)


def test_a_child_kept_from_a_core_by_the_load_is_not_stopped_by_the_wall_backstop():
    spinners = []
    for _ in range(2):
        spinner = os.fork()
        if spinner == 0:
            os.sched_setaffinity(0, {0})
            _spin()
        spinners.append(spinner)
    try:
        started = time.monotonic()
        output, past, _ = _watch(_crowded_out, cpu=1.0, wall=0.5)
        took = time.monotonic() - started
    finally:
        for spinner in spinners:
            os.kill(spinner, 9)
            os.waitpid(spinner, 0)
    assert took > 0.5  # it did wait past the backstop, for a core
    assert (output, past) == (b"done\n", None)


def test_the_wall_backstop_follows_the_cpu_allowance():
    assert wall_allowed(0.4) > 3 * 0.4


def _spinning_in_a_test() -> tuple[int, int]:
    """A forked process that reports a test's start, as a mutant's child does, and then
    computes forever."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        os.write(write_end, b'{"start": "t.py::test_quick"}\n')
        _spin()
    os.close(write_end)
    return pid, read_end


def _stopped(budget: TestBudget, original: OriginalCost | None = None) -> tuple[str | None, float]:
    """What a spinning child ran past under `budget`, and the CPU it had used then."""
    pid, read_end = _spinning_in_a_test()
    watched = _Watched(pid, budget, MemoryWatch(pid, resident_bytes(pid), 512))
    _, past = _read_until(read_end, watched, (lambda: original) if original else None)
    used = cpu_seconds(pid)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    os.close(read_end)
    return past, used


def _per_test_job(tests: int, timeout: float) -> Job:
    names = ["t.py::test_quick", "t.py::test_slow"][:tests]
    return Job(
        id="m",
        path="swap",
        file="f.py",
        module_name="f",
        tests=names,
        timeout=timeout,
        timeout_factor=3.0,
        timeout_constant=0.1,
    )


def test_a_hang_in_a_quick_test_is_stopped_at_that_test_s_cost_not_the_job_s():
    job = _per_test_job(tests=2, timeout=3.0 * 5.01 + 0.1)
    past, used = _stopped(TestBudget(job, baseline=(0.01, 5.0)))
    assert past == "more than 0.13s of CPU time"
    assert used < 1.0


def test_a_child_past_what_the_original_took_too_is_stopped_at_the_larger_allowance():
    budget = TestBudget(_per_test_job(tests=1, timeout=0.13), baseline=(0.01,))
    past, _ = _stopped(budget, OriginalCost(cpu=(0.1,), growth_mb=0.0))
    assert past == "more than 0.40s of CPU time"


def _spinning_in_a_marked_test(progress: _Progress, position: int) -> tuple[int, int]:
    """A forked process that marks which test it is in, as a mutant's child does, says
    nothing on its pipe, and computes forever."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        progress.enter(position)
        _spin()
    os.close(write_end)
    return pid, read_end


def test_a_hang_in_a_test_marked_in_shared_memory_is_stopped_at_that_test_s_cost():
    progress = _Progress()
    progress.reset()
    pid, read_end = _spinning_in_a_marked_test(progress, 0)
    job = _per_test_job(tests=2, timeout=3.0 * 5.01 + 0.1)
    watched = _Watched(
        pid, TestBudget(job, (0.01, 5.0)), MemoryWatch(pid, resident_bytes(pid), 512)
    )
    _, past = _read_until(read_end, watched, None, progress)
    used = cpu_seconds(pid)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    os.close(read_end)
    assert past == "more than 0.13s of CPU time"
    assert used < 1.0


def test_a_timeout_names_the_test_the_shared_memory_marks():
    marked = ("t.py::test_quick", "t.py::test_slow")
    verdict = _verdict("m", b"", "more than 0.13s of CPU time", 9, 0.5, marked)
    assert verdict["status"] == "Timeout"
    assert verdict["killed_by"] == ["t.py::test_slow"]
    assert verdict["ran"] == 2
    assert verdict["detail"] == "more than 0.13s of CPU time (running t.py::test_slow)"


def test_a_child_that_dies_inside_a_marked_test_is_killed_by_it():
    verdict = _verdict("m", b"", None, 11, 0.1, ("t.py::test_quick",))
    assert (verdict["status"], verdict["killed_by"]) == ("Killed", ["t.py::test_quick"])
    assert verdict["kill_kind"] == "crash"
