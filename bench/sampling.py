"""How honest is `--sample`? On a benchmark project from PyPI: one full run, then sampled
runs with several seeds (served from the full run's cache, so only the choice of mutants
differs), and how often the full score lies inside the reported 95% interval.

    python bench/sampling.py toolz --size 200 --seeds 20
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from compare_mutmut import PROJECTS, fetch, unpack


def audit(root: Path, tests: str, *flags: str) -> dict:
    out = root / "sampling-report.json"
    command = [sys.executable, "-m", "auditor", tests, "-q", "--json", str(out), *flags]
    subprocess.run(command, cwd=root, check=False, capture_output=True)
    return json.loads(out.read_text())["mutation"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", choices=sorted(PROJECTS))
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/audit-bench"))
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    spec = PROJECTS[args.project]
    root = unpack(fetch(args.project, args.workdir), args.workdir / f"{args.project}-sampling")
    flags = ["--no-module-level", "--src", spec["package"]]
    full = audit(root, spec["tests"], *flags)["scores"]["score"]
    inside = 0
    widths = []
    for seed in range(args.seeds):
        estimate = audit(
            root, spec["tests"], *flags, "--sample", str(args.size), "--sample-seed", str(seed)
        )["estimate"]
        hit = estimate["score_low"] <= full <= estimate["score_high"]
        inside += hit
        widths.append(estimate["score_high"] - estimate["score_low"])
        print(
            f"seed {seed:2d}: {estimate['score']:5.1f}% "
            f"[{estimate['score_low']:5.1f}, {estimate['score_high']:5.1f}] "
            f"{'contains' if hit else 'MISSES'} the full {full:.1f}%"
        )
    print(
        f"{args.project}: full score {full:.1f}%; {inside}/{args.seeds} intervals of "
        f"{args.size}-mutant samples contain it; mean width {sum(widths) / len(widths):.1f} pts"
    )


if __name__ == "__main__":
    main()
