"""A child's CPU time, read from /proc.

A mutant that loops forever burns CPU at the same rate on an idle machine and a busy
one, while its wall time stretches with the load: timing a hang in CPU seconds lets the
allowance be a fraction of a second without calling a slow machine's tests hangs. The
wall-time backstop (for a hang that sleeps) leaves out the time the child spent ready
to run but waiting for a core, and holds while it is ready to run, for the same reason."""

from __future__ import annotations

import os

_TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[bytes]:
    """The fields of /proc/PID/stat from the third (the state) on; empty when it is gone
    (or /proc is not there)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            # The command name may hold spaces and parentheses: the fields follow its
            # last ")".
            return stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return []


def cpu_seconds(pid: int) -> float:
    """User and system time of the process and of the children it waited for; 0.0 when
    it is gone (or /proc is not there)."""
    fields = _stat_fields(pid)  # utime, stime, cutime and cstime are fields 14 to 17
    try:
        return sum(int(ticks) for ticks in fields[11:15]) / _TICKS_PER_SECOND
    except ValueError:
        return 0.0


def queued_seconds(pid: int) -> float:
    """Seconds the process was ready to run and waited for a core (the kernel's
    scheduler statistics); 0.0 when it is gone or the kernel keeps none."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as schedstat:
            return int(schedstat.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def runnable(pid: int) -> bool:
    """Whether the process is running or ready to run (state R), or held by the machine
    in an uninterruptible wait (D: the disk, a page fault under memory pressure), rather
    than waiting for something its code asked for; False when it is gone. The kernel
    adds a wait for a core to the statistics only once the wait ends: this is how one
    under way is seen."""
    return _stat_fields(pid)[:1] in ([b"R"], [b"D"])
