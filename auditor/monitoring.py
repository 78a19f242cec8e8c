"""`sys.monitoring` (Python 3.12+), shared by the baseline's argument recorder and the
probes' record of the code they ran: each takes a tool id of its own."""

from __future__ import annotations

import sys


def free_monitoring_tool() -> int | None:
    """A `sys.monitoring` tool id nobody uses (3.12+), else None."""
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None:
        return None
    for tool in (monitoring.PROFILER_ID, monitoring.OPTIMIZER_ID, 3, 4):
        if monitoring.get_tool(tool) is None:
            return tool
    return None
