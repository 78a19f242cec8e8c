"""Replay recorded deep-model answers through audit's escalation: a regression table.

    python bench/replay_escalation.py python-slugify [--workdir DIR]
    python bench/replay_escalation.py shop             # a bundled fixture's shallow suite

The answers are `bench/answers/<name>.json`: `{"strip": bool, "answers": {module:
[{"name", "code", "rationale"}, ...]}}`, and `"pypi": {"name", "version", "tests"}` for
a project outside the benchmark. A scripted OpenAI-compatible server on
127.0.0.1 (the tests' own, `tests/escalation/server.py`) answers each module's request
with its list, and nothing else. audit runs as a user runs it, `audit TESTS --escalate
--apply` with default settings otherwise, on a fresh copy (python-slugify 9.2.0 from its
sdist, its assertions stripped when `strip`); the applied files then run under plain
pytest alone and with the suite (both orders). The answers are ours (hand-written in
the shape of real model output), so running them outside audit's sandbox is safe.

Prints candidates, accepted, rejected by reason, each module's score before and after,
and how many written tests pass under plain pytest (100% is the bar)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "bench")]

from compare_mutmut import PROJECTS, fetch, unpack  # noqa: E402
from strip_assertions import strip_tree  # noqa: E402

from tests.escalation.server import Answer, ScriptedServer, structured  # noqa: E402


def prepare(name: str, workdir: Path, recorded: dict) -> tuple[Path, str]:
    """A fresh copy of the project and its tests folder: a fixture, a benchmark project,
    or the sdist the answers name (`"pypi": {"name", "version", "tests"}`)."""
    if "pypi" in recorded:
        pypi = recorded["pypi"]
        PROJECTS.setdefault(pypi["name"], {"version": pypi["version"], "tests": pypi["tests"]})
    if (REPO / "fixtures" / name).is_dir():
        root = workdir / name
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(REPO / "fixtures" / name, root, ignore=shutil.ignore_patterns(".audit"))
        tests = "tests_shallow"
    else:
        project = recorded.get("pypi", {}).get("name", name)
        root = unpack(fetch(project, workdir), workdir / f"{name}-replay")
        tests = PROJECTS[project]["tests"]
    if recorded.get("strip", False):
        strip_tree(root / tests)
    return root, tests


def audit(root: Path, tests: str, answers: dict[str, list[dict]]) -> dict:
    script = [
        Answer(structured(*proposals), match=f"tests for `{module}`")
        for module, proposals in answers.items()
    ]
    with ScriptedServer(script, default=Answer(structured())) as server:
        with (root / "pyproject.toml").open("a") as config:
            config.write(f'\n[tool.audit.escalation]\nbase_url = "{server.base_url}"\n')
        command = [sys.executable, "-m", "auditor", tests, "-q", "--escalate", "--apply"]
        command += ["--json", "replay-report.json"]
        env = {**os.environ, "OPENAI_API_KEY": "sk-replay-0123456789"}
        result = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    if result.returncode not in (0, 1):
        sys.exit(f"audit failed ({result.returncode}): {result.stderr.strip()[-500:]}")
    return json.loads((root / "replay-report.json").read_text())


def plain_pytest(root: Path, tests: str, applied: list[str]) -> tuple[int, int]:
    """Written tests passing in every run (alone, after the suite, before it), of all."""
    outcomes: dict[str, bool] = {}
    for paths in (applied, [tests], [*applied, tests]):
        with tempfile.TemporaryDirectory() as scratch:
            junit = Path(scratch) / "junit.xml"
            plain = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
            subprocess.run([*plain, f"--junitxml={junit}", *paths], cwd=root, capture_output=True)
            for case in ElementTree.parse(junit).iter("testcase"):
                written = any(Path(a).stem in case.get("classname", "") for a in applied)
                if written:
                    key = f"{case.get('classname')}::{case.get('name')}"
                    passed = not any(child.tag in ("failure", "error") for child in case)
                    outcomes[key] = outcomes.get(key, True) and passed
    return sum(outcomes.values()), len(outcomes)


def print_table(name: str, escalation: dict, passing: tuple[int, int]) -> None:
    candidates = escalation["candidates"]
    accepted = [c for c in candidates if c["accepted"]]
    reasons = Counter(c["reason"].split(":")[0] for c in candidates if not c["accepted"])
    print(f"{name}: {len(candidates)} candidates, {len(accepted)} accepted")
    for reason, count in sorted(reasons.items(), key=lambda item: (-item[1], item[0])):
        print(f"  rejected {count}: {reason}")
    print(f"  {'module':32} {'before':>8} {'after':>8} {'accepted':>9}")
    for module in escalation["modules"]:
        before = module["before"]["score"] if module["before"] else None
        after = module["after"]["score"] if module["after"] else None
        print(f"  {module['file']:32} {_pct(before):>8} {_pct(after):>8} {module['accepted']:>9}")
    good, total = passing
    share = f"{100 * good / total:.0f}%" if total else "-"
    print(f"  written tests passing under plain pytest: {good} of {total} ({share})")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="a bench/answers/<name>.json")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "replay")
    args = parser.parse_args()
    recorded = json.loads((REPO / "bench" / "answers" / f"{args.name}.json").read_text())
    args.workdir.mkdir(parents=True, exist_ok=True)
    root, tests = prepare(args.name, args.workdir, recorded)
    report = audit(root, tests, recorded["answers"])
    escalation = report["escalation"]
    print_table(args.name, escalation, plain_pytest(root, tests, escalation["applied_files"]))


if __name__ == "__main__":
    main()
