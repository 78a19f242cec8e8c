"""A probe call's timeout (`alarm`), and calls that hang where it cannot stop them.

A probe's call timeout is a signal whose handler raises between two bytecodes. A loop
inside C never gets back to the interpreter (`deque(range(10**18), maxlen=1)`, a
backtracking regular expression, `sum` over a huge range), so the handler never runs and
only the forked probe's whole time budget ends it, with every result of that probe lost.

So each call a forked probe makes is numbered, in memory its parent shares, and also
gets a CPU-time timer whose signal nothing handles (SIGPROF: the kernel ends the
process). The parent then knows which call was running and runs the work again, that
call counted as hung without being made. The work is deterministic (derandomized inputs,
the same calls in the same order), so the n-th call of the rerun is the same call."""

from __future__ import annotations

import contextlib
import gc
import mmap
import os
import signal
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass


class CallTimeout(BaseException):
    """The call did not return in time: a BaseException so `except Exception` misses it."""


_TIMERS: dict[int, int] = {
    signal.SIGALRM: signal.ITIMER_REAL,
    signal.SIGVTALRM: signal.ITIMER_VIRTUAL,
}

_kept = False
"""Whether `keep_alarm_handlers` installed the handlers for good."""

_armed: dict[int, tuple[float, Callable[[], bool] | None]] = {}
"""The armed alarm of each timer: its seconds and its `late`."""


def _on_alarm(signum: int, frame: object) -> None:
    timer = _TIMERS[signum]
    if timer not in _armed:
        return  # fired as its block ended: the block is no longer there to stop
    seconds, late = _armed[timer]
    if late is not None and not late():
        signal.setitimer(timer, seconds)
        return
    raise CallTimeout


def keep_alarm_handlers() -> None:
    """Installs the alarms' signal handlers for good, in a probe process before its
    first fork: installing and restoring them around each call was half of what a
    probe call costs, and a probe process makes hundreds of thousands. A handler the
    code under test installs over one stays for the rest of its fork's work; a call
    that then does not return is ended by `guarded_call`'s timer."""
    global _kept
    for signal_number in _TIMERS:
        signal.signal(signal_number, _on_alarm)
    _kept = True


@contextlib.contextmanager
def alarm(
    seconds: float, cpu: bool = False, late: Callable[[], bool] | None = None
) -> Iterator[None]:
    """CallTimeout inside the block after `seconds` of wall time, or of this process's
    CPU time (`cpu`: what the block computes, whatever the load). `late`, when given, is
    asked each time the timer fires: while it says the block is not late (the load, not
    the block, made the clock run), the timer is set again. No garbage-collector
    callback runs meanwhile: the interpreter ignores what one raises, so an alarm
    handled inside one (Hypothesis keeps one; code that allocates fast collects all the
    time) would never stop the block. Disarmed before the block's exception is seen;
    the handler is installed for the block unless `keep_alarm_handlers` installed it."""
    signal_number = signal.SIGVTALRM if cpu else signal.SIGALRM
    timer = _TIMERS[signal_number]
    kept = _kept  # asking the signal module which handler is installed costs 3 us
    previous = None if kept else signal.signal(signal_number, _on_alarm)
    outer = _armed.get(timer)
    _armed[timer] = (seconds, late)
    callbacks = gc.callbacks[:]
    gc.callbacks.clear()
    signal.setitimer(timer, seconds)
    try:
        yield
    finally:
        signal.setitimer(timer, 0)
        if outer is None:
            del _armed[timer]
        else:
            _armed[timer] = outer
        if not kept:
            signal.signal(signal_number, previous)
        gc.callbacks[:] = callbacks


RERUNS = 4
"""Runs of one piece of work after calls hung in C, at most: each run repeats the calls
before the hung one."""


SHORTEST_CPU_SECONDS = 0.5
"""CPU time a call with a shorter timeout still gets before it counts as stuck in C: most
loops in C that end (an allocation up to the memory limit) end within it, and waiting
for one costs less than running the work again."""


class CallNumbers:
    """The number of calls a forked process started, in memory shared with its parent."""

    def __init__(self) -> None:
        self._memory = mmap.mmap(-1, 8)  # anonymous and shared: the fork writes, we read

    @property
    def started(self) -> int:
        return int(struct.unpack_from("q", self._memory)[0])

    def start_one(self) -> int:
        number = self.started
        struct.pack_into("q", self._memory, 0, number + 1)
        return number

    def close(self) -> None:
        self._memory.close()


@dataclass(frozen=True)
class _Numbering:
    numbers: CallNumbers
    hung: frozenset[int]
    """Calls that hung inside C in earlier runs of the same work."""


_numbering: _Numbering | None = None


def number_calls(numbers: CallNumbers, hung: frozenset[int]) -> None:
    """In a forked process, before its work: number its calls in `numbers`."""
    global _numbering
    _numbering = _Numbering(numbers, hung)
    signal.signal(signal.SIGPROF, signal.SIG_DFL)


def in_forked_probe() -> bool:
    """Whether this process is a forked probe (Hypothesis warmed up in its parent, the
    calls numbered)."""
    return _numbering is not None


@contextlib.contextmanager
def guarded_call(timeout: float) -> Iterator[bool]:
    """Around one call that has `timeout` seconds: yields whether to make it (not when it
    hung inside C in an earlier run). A call still busy when it has used a quarter more
    than its timeout in CPU time (user and system: the call's own timer counts user
    time, and comes first otherwise), or `SHORTEST_CPU_SECONDS`, is stuck where no
    handler runs: the process ends."""
    if _numbering is None:  # not in a forked probe: nothing would run the work again
        yield True
        return
    if _numbering.numbers.start_one() in _numbering.hung:
        yield False
        return
    signal.setitimer(signal.ITIMER_PROF, max(1.25 * timeout + 0.05, SHORTEST_CPU_SECONDS))
    try:
        yield True
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)


def hung_in_c(status: int) -> bool:
    """Whether a forked probe's wait status says a call's CPU timer ended it."""
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGPROF
