"""The time a probe's calls take of their own: the CPU they use and the time they sleep,
not the time they wait for a CPU the machine gives to other processes.

What the probes keep depends on how long calls take (an input the original is slow on
is no trial, a search stops at its time budget, a call past its timeout hangs). Timed by
the clock, that depends on the load: beside the other probe process or a CI job, an
input that takes 30 ms idle takes 80 ms, and the report differs from run to run. Linux
counts the time a thread waits on a run queue (`/proc/thread-self/schedstat`); the clock
less that wait, and at least the CPU time the thread used, is the call's own time. Where
the kernel does not say, it is the clock's."""

from __future__ import annotations

import os
import threading
import time

_SCHEDSTAT = "/proc/thread-self/schedstat"

_opened: tuple[int, int, int] = (0, 0, -1)
"""(process, thread, descriptor) of the open schedstat file: a probe makes hundreds of
thousands of calls of microseconds, and opening it for each took longer than most."""


def _queued_seconds() -> float:
    """Seconds this thread has waited on a run queue; 0 where the kernel does not say."""
    global _opened
    here = (os.getpid(), threading.get_native_id())
    if _opened[:2] != here:  # a fork reads its parent's thread through the inherited one
        if _opened[2] >= 0:
            os.close(_opened[2])
        try:
            descriptor = os.open(_SCHEDSTAT, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            descriptor = -1
        _opened = (*here, descriptor)
    try:
        return int(os.pread(_opened[2], 64, 0).split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


class Stopwatch:
    """Started when made: whether the own time since is over some seconds."""

    def __init__(self) -> None:
        self._ran = time.thread_time()
        self._queued = _queued_seconds()
        self._clock = time.perf_counter()

    def over(self, seconds: float) -> bool:
        clock = time.perf_counter() - self._clock
        if clock <= seconds:  # own time is never more than the clock's
            return False
        queued = _queued_seconds() - self._queued
        # The scheduler updates the run-queue figure at its own accounting points, up
        # to a clock tick late or early: the time this thread ran is the floor.
        return max(time.thread_time() - self._ran, clock - queued) > seconds


class Budget:
    """`seconds` of own time for a run of calls, and the clock's `backstop` after which
    the run stops whatever the load (a machine so loaded that the work's own deadline
    would come first)."""

    def __init__(self, seconds: float, backstop: float) -> None:
        self._watch = Stopwatch()
        self._seconds = seconds
        self._backstop = time.monotonic() + backstop

    def spent(self) -> bool:
        return self._watch.over(self._seconds) or time.monotonic() > self._backstop
