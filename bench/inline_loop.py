"""Benchmark: the coding agent's loop on a real project, default settings.

    python bench/inline_loop.py marshmallow
    python bench/inline_loop.py tabulate --workdir /tmp/audit-bench

Unpacks the project's sdist into a fresh git repository (the same download and
virtualenv as compare_mutmut.py), then times what an agent asks, each the command line
as the README gives it (`audit TESTS --json REPORT`):

1. cold: the first run, nothing in `.audit/`;
2. warm: the same again, nothing changed;
3. one change at a time: a line of one function rewritten with the same behaviour and a
   new test file that calls the function, then `audit TESTS --diff HEAD`; the change is
   committed before the next, so each run is about one function and one test.

Prints each run's wall time and stage times, the mutants in scope and how many came
from the cache, and the median of the changes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from compare_mutmut import PROJECTS, bench_python, fetch, unpack


@dataclass(frozen=True)
class Change:
    """One step of the loop: `old` (a whole line of `file`) becomes `new`, and `test` is
    a new test file calling the function."""

    file: str
    old: str
    new: str
    test: str


_RAISES = "import pytest\n\nfrom marshmallow import ValidationError, validate, utils\n\n\n"

CHANGES = {
    "marshmallow": [
        Change(
            "src/marshmallow/validate.py",
            "        if self.max is not None and length > self.max:\n",
            "        if self.max is not None and self.max < length:\n",
            _RAISES + "def test_too_long():\n"
            "    with pytest.raises(ValidationError):\n"
            '        validate.Length(max=1)("ab")\n',
        ),
        Change(
            "src/marshmallow/validate.py",
            "        return self.error.format(input=value, other=self.comparable)\n",
            "        return self.error.format(other=self.comparable, input=value)\n",
            _RAISES + "def test_unequal_names_the_other():\n"
            '    with pytest.raises(ValidationError, match="3"):\n'
            "        validate.Equal(3)(4)\n",
        ),
        Change(
            "src/marshmallow/utils.py",
            "    return [d[key] for d in dictlist]\n",
            "    return [item[key] for item in dictlist]\n",
            _RAISES + "def test_pluck():\n"
            '    assert utils.pluck([{"a": 1}, {"a": 2}], "a") == [1, 2]\n',
        ),
        Change(
            "src/marshmallow/utils.py",
            "    return str(val)\n",
            "    return val if type(val) is str else str(val)\n",
            _RAISES + "def test_bytes_become_text():\n"
            '    assert utils.ensure_text_type(b"x") == "x"\n',
        ),
        Change(
            "src/marshmallow/utils.py",
            "    if not callable(obj):\n",
            "    if callable(obj) is False:\n",
            _RAISES + "def test_not_callable():\n"
            "    with pytest.raises(TypeError):\n"
            "        utils.callable_or_raise(1)\n",
        ),
    ],
    "tabulate": [
        Change(
            "tabulate/__init__.py",
            '    fmt = "{0:>%ds}" % width\n',
            '    fmt = "{0:>" + str(width) + "s}"\n',
            "from tabulate import _padleft\n\n\ndef test_padleft():\n"
            '    assert _padleft(4, "ab") == "  ab"\n',
        ),
        Change(
            "tabulate/__init__.py",
            '    fmt = "{0:<%ds}" % width\n',
            '    fmt = "{0:<" + str(width) + "s}"\n',
            "from tabulate import _padright\n\n\ndef test_padright():\n"
            '    assert _padright(4, "ab") == "ab  "\n',
        ),
        Change(
            "tabulate/__init__.py",
            '    fmt = "{0:^%ds}" % width\n',
            '    fmt = "{0:^" + str(width) + "s}"\n',
            "from tabulate import _padboth\n\n\ndef test_padboth():\n"
            '    assert _padboth(4, "ab") == " ab "\n',
        ),
        Change(
            "tabulate/__init__.py",
            "    return type(string) is bool or (\n",
            "    return isinstance(string, bool) or (\n",
            "from tabulate import _isbool\n\n\ndef test_isbool():\n"
            '    assert _isbool("True") and not _isbool(1)\n',
        ),
        Change(
            "tabulate/__init__.py",
            '    return max(map(line_width_fn, re.split("[\\r\\n]", multiline_s)))\n',
            '    return max(line_width_fn(line) for line in re.split("[\\r\\n]", multiline_s))\n',
            "from tabulate import _multiline_width\n\n\ndef test_widest_line():\n"
            '    assert _multiline_width("ab\\ncde") == 3\n',
        ),
    ],
}


@dataclass(frozen=True)
class Step:
    name: str
    wall: float
    timings: dict[str, float]
    mutants: int
    cached: int
    baseline: str


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(
        root,
        "-c",
        "user.email=bench@example.com",
        "-c",
        "user.name=bench",
        "commit",
        "-qm",
        message,
    )


def audit(name: str, python: str, root: Path, tests: str, *flags: str) -> Step:
    report = root.parent / f"{root.name}-report.json"
    command = [python, "-m", "auditor", tests, "--json", str(report), "-q", *flags]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=root, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"{name}: `{' '.join(command[2:])}` exited {done.returncode}: {done.stderr}")
    full = json.loads(report.read_text())
    mutants = full["mutation"]["mutants"]
    return Step(
        name,
        wall,
        full["timings"],
        len(mutants),
        sum(1 for mutant in mutants if mutant["cached"]),
        full["baseline"]["reuse"],
    )


def apply(root: Path, change: Change, number: int, tests: str) -> None:
    path = root / change.file
    text = path.read_text(encoding="utf-8")
    if text.count(change.old) != 1:
        sys.exit(f"{change.file}: the line to change is not there once: {change.old!r}")
    path.write_text(text.replace(change.old, change.new), encoding="utf-8")
    (root / tests / f"test_audit_loop_{number}.py").write_text(change.test, encoding="utf-8")


def print_table(title: str, steps: list[Step]) -> None:
    print(f"\n{title}")
    header = f"{'run':<28}{'wall':>8}{'baseline':>10}{'mutate':>8}{'probe':>8}  mutants (cached)"
    print(header)
    for step in steps:
        t = step.timings
        print(
            f"{step.name:<28}{step.wall:>7.1f}s{t.get('baseline', 0):>9.1f}s"
            f"{t.get('mutate', 0):>7.1f}s{t.get('probe', 0):>7.1f}s"
            f"  {step.mutants} ({step.cached})   baseline {step.baseline}"
        )
    changes = [step.wall for step in steps if step.name.startswith("change")]
    if changes:
        print(
            f"one function + one new test, --diff HEAD: median {statistics.median(changes):.1f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", choices=sorted(CHANGES))
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/audit-bench"))
    parser.add_argument("--venv", type=Path, help="default: WORKDIR/venv")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    name, spec = args.project, PROJECTS[args.project]
    python = bench_python(args.venv or args.workdir / "venv", [name])
    root = unpack(fetch(name, args.workdir), args.workdir / f"{name}-loop")
    git(root, "init", "-q")
    commit(root, "as released")
    tests = spec["tests"]
    steps = [
        audit("cold", python, root, tests),
        audit("warm, nothing changed", python, root, tests),
    ]
    for number, change in enumerate(CHANGES[name], 1):
        apply(root, change, number, tests)
        function = change.old.strip()[:40]
        steps.append(audit(f"change {number}", python, root, tests, "--diff", "HEAD"))
        print(f"change {number}: {change.file}: {function}", file=sys.stderr)
        commit(root, f"change {number}")
    print_table(f"{name} {spec['version']}: the inline loop, default settings", steps)


if __name__ == "__main__":
    main()
