"""The command that starts one of audit's own modules in a child Python.

`python -m auditor...` puts the folder it starts in first on `sys.path`. Started in a
project that has its own `auditor`, `mutators` or `reports` package, the child would
import the project's package in place of ours, and run it outside any sandbox. These
commands drop that folder from `sys.path` before importing anything of ours.

The early-sites helper, the MCP server's audit and the OS sandbox's first program start
this way (none of them imports the code under test). Test processes keep `python -m`'s
path: the tests may rely on the project root being importable, as under `python -m
pytest`; discovery refuses a project with a top-level `auditor` of its own."""

from __future__ import annotations

import sys

_RUN_MODULE = """\
import runpy, sys
if sys.path and sys.path[0] == "":
    del sys.path[0]  # the folder it started in (python -P from 3.11 on)
module = sys.argv.pop(1)
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def own_module(module: str, *args: str) -> list[str]:
    """`python -m MODULE ARGS`, but with MODULE and what it imports found only where
    this audit is installed."""
    return [sys.executable, "-c", _RUN_MODULE, module, *args]
