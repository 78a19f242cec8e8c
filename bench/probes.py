"""How long the probes take, and what they find, on every fixture (a copy of each).

    python bench/probes.py

Prints per fixture and suite: the probe stage's wall time, findings by kind, and the
witnesses found for surviving mutants; then the total probe time.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SUITES = [
    ("ledger", "tests_shallow"),
    ("ledger", "tests_strong"),
    ("shop", "tests_shallow"),
    ("shop", "tests_strong"),
    ("textkit", "tests_shallow"),
    ("textkit", "tests_strong"),
    ("markup", "tests"),
    ("traps", "tests"),
]


def main() -> None:
    total = 0.0
    print(f"{'fixture':28} {'probe s':>8} {'crash':>6} {'paths':>6} {'edges':>6} {'witnessed':>12}")
    with tempfile.TemporaryDirectory() as scratch:
        for name, suite in SUITES:
            root = Path(scratch) / f"{name}-{suite}"
            shutil.copytree(FIXTURES / name, root, ignore=shutil.ignore_patterns("__pycache__"))
            out = root / "report.json"
            command = [sys.executable, "-m", "auditor", suite, "-q", "--json", str(out)]
            subprocess.run(command, cwd=root, capture_output=True, check=False)
            report = json.loads(out.read_text())
            seconds = report["timings"]["probe"]
            total += seconds
            counts = report["probes"]["counts"]
            survivors = sum(v for k, v in counts.items() if k.startswith("witness"))
            print(
                f"{name + ' ' + suite:28} {seconds:8.1f} {counts.get('unhandled_crash', 0):6} "
                f"{counts.get('untested_error_path', 0):6} {counts.get('untried_edge_class', 0):6} "
                f"{counts.get('witness found', 0):5} of {survivors:4}"
            )
    print(f"{'total':28} {total:8.1f}")


if __name__ == "__main__":
    main()
