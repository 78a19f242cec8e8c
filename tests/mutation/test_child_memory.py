"""How much a mutant's child may grow before it is stopped as a runaway."""

import os
import time

from auditor.containment.memory import MemoryWatch, resident_bytes
from auditor.mutation.protocol import Job, OriginalCost, TestBudget
from auditor.mutation.runner import _read_until, _Watched
from auditor.mutation.workers import child_growth_limit_mb
from auditor.report import BaselineSection


def baseline(memory_growth_mb: float) -> BaselineSection:
    return BaselineSection(
        tests=[],
        collection_errors=[],
        passed=0,
        excluded=0,
        restarts=0,
        import_time_lines={},
        memory_growth_mb=memory_growth_mb,
    )


def test_a_child_may_grow_twice_what_the_suite_grew_by_in_the_baseline():
    assert child_growth_limit_mb(baseline(100.4), memory_limit_mb=4096) == 201


def test_a_child_of_a_suite_that_barely_grows_may_still_grow_16_mb():
    assert child_growth_limit_mb(baseline(0.8), memory_limit_mb=4096) == 16


def test_a_child_never_may_grow_beyond_the_memory_limit():
    assert child_growth_limit_mb(baseline(3000.0), memory_limit_mb=4096) == 4096


def test_a_child_may_grow_twice_what_the_original_grew_by_in_a_child_like_it():
    assert OriginalCost(cpu=(), growth_mb=30.2).growth_limit_mb(memory_limit_mb=4096) == 77


def _growing(megabytes: int, then_forever: bool = False) -> tuple[int, int]:
    """A forked process that takes `megabytes` of memory, then writes "done" and exits
    (or, `then_forever`, keeps taking more)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        held = [bytearray(megabytes * 2**20)]
        time.sleep(0.3)  # long enough for the watch to see it
        while then_forever:
            held.append(bytearray(2**20))
            time.sleep(0.001)
        os.write(write_end, b"done\n")
        os._exit(0)
    os.close(write_end)
    return pid, read_end


def _watched(pid: int) -> _Watched:
    job = Job(id="m", path="swap", file="f.py", module_name="f", tests=[], timeout=30.0)
    memory = MemoryWatch(pid, resident_bytes(os.getpid()), growth_limit_mb=16)
    return _Watched(pid, TestBudget(job, ()), memory, memory_limit_mb=4096)


def test_a_child_that_grows_as_much_as_the_original_does_is_no_runaway():
    pid, read_end = _growing(40)
    child = _watched(pid)
    output, past = _read_until(read_end, child, lambda: OriginalCost(cpu=(), growth_mb=40.0))
    os.waitpid(pid, 0)
    os.close(read_end)
    assert (output, past, child.memory.exceeded) == (b"done\n", None, False)


def test_a_child_that_grows_past_twice_the_original_s_growth_is_a_runaway():
    pid, read_end = _growing(40, then_forever=True)
    child = _watched(pid)
    output, past = _read_until(read_end, child, lambda: OriginalCost(cpu=(), growth_mb=40.0))
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    os.close(read_end)
    assert (output, past, child.memory.exceeded) == (b"", None, True)
    assert child.memory.growth_limit_mb == 96
