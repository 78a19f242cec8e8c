"""The installed distributions, digested: what a kept baseline and every verdict depend
on besides the project (a new version of a dependency can change what a test does)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from pathlib import Path


def packages_digest() -> str:
    """The installed distributions (their metadata folders' names carry the versions)
    and the `.pth` files (editable installs), on every folder of `sys.path`; not where
    those folders are, so a cache restored on another machine still holds. Not in the
    folder audit was started from either: `python -m auditor` puts it on `sys.path`, the
    `audit` script and the MCP server's session do not, and how audit was started must
    not change what every verdict is keyed by (an sdist's `*.egg-info` is there)."""
    digest = hashlib.sha256()
    started_in = Path.cwd().resolve()
    for entry in sys.path:
        if Path(entry or ".").resolve() == started_in:
            continue
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                digest.update(f"{name}\n".encode())
            elif name.endswith(".pth"):
                digest.update(f"{name}\n".encode())
                with contextlib.suppress(OSError):
                    digest.update(Path(entry or ".", name).read_bytes())
    return digest.hexdigest()
