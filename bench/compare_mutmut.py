"""Benchmark: audit against mutmut on the same real project, same run, default settings.

    python bench/compare_mutmut.py all            # the six projects below
    python bench/compare_mutmut.py toolz --tools audit --variants default,no-probes

Downloads the project's sdist from PyPI (its tests ship in it), unpacks one copy per run,
runs each tool with 2 workers from the same virtualenv (`--venv`, made on first use with
only this checkout of audit, editable, mutmut 3.8.1 and what the project's tests need:
what a developer's own environment holds besides, such as pytest plugins every test
process would load, stays out of the figures), and prints for each: mutants, status
counts, score, wall time, mutants per second and peak memory of the whole process tree,
sampled from /proc every 50 ms: RSS summed over processes (pages shared after fork
counted once per process) and PSS (shared pages split between the processes sharing
them), the stage times and audit's overhead per mutant beyond the tests' own time.

The headline row is `audit TESTS` exactly as the README tells a user (probes included);
`stripped` runs the same on the project's suite with its assertions removed
(strip_assertions.py: almost every mutant survives). Other `--variants` are extra rows.

Setup notes, as measured here with mutmut 3.8.1:
- toolz 1.2.0: mutmut only runs when `toolz/curried/*` and `toolz/__init__.py` are left
  unmutated (its injected names break two tests); both tools skip them (audit through
  `[tool.audit] src`, the only project where the bench configures audit at all). The
  tests live in `toolz/tests/`, which mutmut must be told not to mutate.
- mutmut runs the tests from a copy under `mutants/`: `*.egg-info`, sibling packages
  (toolz's `tlz`) and whatever else the tests read (humanize's `scripts/`, slugify's
  `tools/` and README) must be in its `also_copy`, or its run stops.
- tabulate 0.10.0: `tabulate/__init__.py`, tests in `test/`. python-slugify 9.2.0: tests
  in `tests/`, three of which run `python -m slugify`. humanize 4.17.0: `src/` layout.
  more-itertools 11.2.1: two modules, slow prime tests (4-10 s under coverage).
  marshmallow 4.4.0: `src/` layout, its conftest imports simplejson.
- mutmut is given MUTMUT_LIMIT seconds (an hour) on a project; a run stopped there is a
  row with the mutants it finished, and says so.

Each audit row also prints the physical floor (`mutation.floor_seconds`: each mutant's
tests up to the first failing one plus one fork, over the workers) and audit's whole wall
time as a multiple of it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from strip_assertions import strip_tree

PROJECTS = {
    "toolz": {
        "version": "1.2.0",
        "package": "toolz",
        "tests": "toolz/tests",
        "do_not_mutate": ["toolz/curried/*", "toolz/__init__.py"],
        "mutmut_also_skip": ["toolz/tests/*"],
    },
    "tabulate": {
        "version": "0.10.0",
        "package": "tabulate",
        "tests": "test",
        "do_not_mutate": [],
        "mutmut_also_skip": [],
        "test_requires": ["wcwidth"],  # its wide-character tests skip without it
    },
    "python-slugify": {
        "version": "9.2.0",
        "package": "slugify",
        "tests": "tests",
        "do_not_mutate": [],
        "mutmut_also_skip": [],
        "test_requires": ["text-unidecode"],
        # its release tests import tools/ and read the README
        "mutmut_also_copy": ["tools", "README.md"],
    },
    "humanize": {
        "version": "4.17.0",
        "package": "src/humanize",
        "tests": "tests",
        "do_not_mutate": [],
        "mutmut_also_skip": [],
        "test_requires": ["freezegun", "pytest-benchmark"],
        # its translation tests run scripts/update-translations.sh from the project
        "mutmut_also_copy": ["scripts"],
        # mutmut runs the suite twice in one process (stats, then clean tests), and stops
        # when the second run fails: test_naturalsize negates its own parameter lists in
        # place (negating a copy checks the same and runs twice), and one case of
        # test_natural_list takes a generator, empty the second time (left out).
        "mutmut_pytest_args": [
            "--deselect",
            "tests/test_lists.py::test_natural_list[test_args12-one, two and three]",
        ],
        "mutmut_patch": {
            "tests/test_filesize.py": (
                "    # Retest with negative input\n",
                "    # Retest with negative input\n    test_args = list(test_args)\n",
            )
        },
    },
    "more-itertools": {
        "version": "11.2.1",
        "package": "more_itertools",
        "tests": "tests",
        "do_not_mutate": [],
        "mutmut_also_skip": [],
    },
    "marshmallow": {
        "version": "4.4.0",
        "package": "src/marshmallow",
        "tests": "tests",
        "do_not_mutate": [],
        "mutmut_also_skip": [],
        "test_requires": ["simplejson"],  # its conftest imports it
        # Three tests count the schema class registry's entries, which the first of
        # mutmut's two runs in one process has already filled (left out for mutmut).
        "mutmut_pytest_args": [
            "--deselect",
            "tests/test_registry.py::"
            "test_serializer_class_registry_register_same_classname_different_module",
            "--deselect",
            "tests/test_registry.py::"
            "test_serializer_class_registry_override_if_same_classname_same_module",
            "--deselect",
            "tests/test_schema.py::test_class_registry_returns_schema_type",
        ],
    },
}


@dataclass
class Measurement:
    tool: str
    counts: dict[str, int] = field(default_factory=dict)
    wall: float = 0.0
    peak_rss_mb: float = 0.0
    peak_pss_mb: float = 0.0
    floor: float | None = None
    """The physical floor of audit's mutants (`mutation.floor_seconds`)."""
    note: str = ""

    @property
    def mutants(self) -> int:
        return sum(self.counts.values())

    @property
    def score(self) -> float | None:
        detected = self.counts.get("killed", 0) + self.counts.get("timeout", 0)
        valid = detected + self.counts.get("survived", 0) + self.counts.get("no_coverage", 0)
        return 100.0 * detected / valid if valid else None


class _ProcessTree:
    """A process and its descendants, sampled again and again. Each process's parent is
    read from /proc once, when it first appears: reading every process's `stat` at every
    sample cost a fifth of a core, taken from the tools being measured (this kernel has
    no `/proc/PID/task/TID/children`). A pid is forgotten once it is gone; one used again
    within a sample's 50 ms would need the whole pid space in that time."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.parents: dict[int, int] = {}

    def pids(self) -> set[int]:
        present = {int(entry) for entry in os.listdir("/proc") if entry.isdigit()}
        for gone in self.parents.keys() - present:
            del self.parents[gone]
        for pid in present - self.parents.keys():
            self.parents[pid] = _parent(pid)
        tree = {self.pid}
        changed = True
        while changed:
            changed = False
            for child, parent in self.parents.items():
                if parent in tree and child not in tree:
                    tree.add(child)
                    changed = True
        return tree


def _parent(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0  # it ended meanwhile


def _memory_kb(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of one process in kB. PSS splits pages shared after fork between the
    processes that share them, so a tree's PSS sum does not count them twice."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except OSError:
        pass
    return rss, pss


OUTPUT_LOG = "bench-output.log"


def run_measured(
    command: list[str], cwd: Path, env: dict[str, str] | None = None, limit: float | None = None
) -> tuple[float, float, float]:
    """Wall time, and peak RSS and PSS of the whole process tree (MB), of a command;
    stopped (its whole process group) after `limit` seconds, if given. Its output is kept
    in `cwd/OUTPUT_LOG`, to read when a tool ends without results."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    peak_rss = peak_pss = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak_rss, peak_pss
        tree = _ProcessTree(process.pid)
        while not done.is_set():
            sizes = [_memory_kb(pid) for pid in tree.pids()]
            peak_rss = max(peak_rss, sum(rss for rss, _ in sizes))
            peak_pss = max(peak_pss, sum(pss for _, pss in sizes))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        output, _ = process.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        done.set()
        sampler.join()
        (cwd / OUTPUT_LOG).write_text(output)
        raise StoppedAt(time.perf_counter() - started, peak_rss / 1024, peak_pss / 1024) from None
    done.set()
    sampler.join()
    wall = time.perf_counter() - started
    (cwd / OUTPUT_LOG).write_text(output)
    if process.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)} failed ({process.returncode}):\n{output[-3000:]}")
    return wall, peak_rss / 1024, peak_pss / 1024


class StoppedAt(Exception):
    """A measured command ran past its limit: its wall time and peak memory then."""

    def __init__(self, wall: float, rss: float, pss: float) -> None:
        super().__init__(wall)
        self.wall, self.rss, self.pss = wall, rss, pss


MUTMUT = "mutmut==3.8.1"
MUTMUT_LIMIT = 3600.0
"""Seconds mutmut is given on a project; a run stopped there is a row that says so."""


def bench_python(venv: Path, projects: list[str]) -> str:
    """The interpreter both tools run with: a virtualenv holding audit, mutmut and what
    the projects' tests need, nothing else."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        repo = Path(__file__).resolve().parent.parent
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "-e", str(repo), MUTMUT],
            check=True,
        )
    needed = [r for name in projects for r in PROJECTS[name].get("test_requires", [])]
    if needed:
        subprocess.run([str(python), "-m", "pip", "install", "-q", *needed], check=True)
    return str(python)


def fetch(name: str, workdir: Path) -> Path:
    spec = PROJECTS[name]
    # sdists are named after the normalized project name (python_slugify-9.2.0.tar.gz)
    archive = workdir / f"{name.replace('-', '_')}-{spec['version']}.tar.gz"
    if not archive.exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-binary",
                ":all:",
                "--no-deps",
                f"{name}=={spec['version']}",
                "-d",
                str(workdir),
            ],
            check=True,
            capture_output=True,
        )
    return archive


def unpack(archive: Path, target: Path) -> Path:
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(target, filter="data")
    (root,) = list(target.iterdir())
    return root


AUDIT_VARIANTS = {
    "default": [],
    "stripped": [],
    "no-probes": ["--no-probes"],
    "function-bodies": ["--no-probes", "--no-module-level"],
    "in-process": ["--no-probes", "--no-module-level", "--no-copy-path"],
    "no-type-check": ["--type-check", "off"],
}
"""default: `audit TESTS` as the README tells a user, probes included (the headline);
stripped: the same on the project's suite with its assertions removed
(strip_assertions.py); the others are extra rows: without probes, without import-time
mutants (the code mutmut mutates), and without the copy-path fallback too; without the
type-checker pre-filter (it applies when the project configures mypy and the venv has
it: humanize)."""


def run_audit(name: str, root: Path, jobs: int, variant: str, python: str) -> Measurement:
    spec = PROJECTS[name]
    report = root / "audit-report.json"
    flags = AUDIT_VARIANTS[variant]
    if variant == "stripped":
        removed = strip_tree(root / spec["tests"])
        print(f"{name}: stripped {removed} assertions from {spec['tests']}", file=sys.stderr)
    command = [python, "-m", "auditor", spec["tests"], "--json", str(report), "-q"]
    command += ["--jobs", str(jobs), *flags]
    if spec["do_not_mutate"]:
        # Only where mutmut cannot run on some files: both tools leave them out.
        src = [
            p.relative_to(root).as_posix()
            for p in sorted((root / spec["package"]).rglob("*.py"))
            if not any(
                p.match(pattern) or p.relative_to(root).match(pattern)
                for pattern in spec["do_not_mutate"]
            )
            and spec["tests"] not in p.relative_to(root).as_posix()
        ]
        pyproject = root / "pyproject.toml"
        original = pyproject.read_text() if pyproject.exists() else ""
        pyproject.write_text(original + "\n[tool.audit]\nsrc = " + json.dumps(src) + "\n")
    wall, rss, pss = run_measured(command, root)
    full = json.loads(report.read_text())
    data = full["mutation"]
    counts = data["scores"]["counts"]
    counts = {key: value for key, value in counts.items() if key != "ignored"}
    label = f"audit {variant}" + (f" ({' '.join(flags)})" if flags else "")
    timings = full["timings"]
    return Measurement(
        label,
        counts,
        wall,
        rss,
        pss,
        floor=data.get("floor_seconds"),
        note=(
            f"mutation stage {timings.get('mutate', 0):.1f} s ({data['mutants_per_second']} "
            f"mutants/s), baseline {timings.get('baseline', 0):.1f} s, probes "
            f"{timings.get('probe', 0):.1f} s; overhead beyond the tests' own time "
            f"{data.get('overhead_ms')} ms per mutant (mean over the stage), median "
            f"{data.get('child_overhead_ms')} ms in a mutant's child; paths {data['paths']}"
        ),
    )


def run_mutmut(name: str, root: Path, jobs: int, python: str) -> Measurement:
    spec = PROJECTS[name]
    config = [
        "",
        "[tool.mutmut]",
        f'source_paths = ["{spec["package"]}/"]',
        f'pytest_add_cli_args_test_selection = ["{spec["tests"]}"]',
    ]
    if spec.get("mutmut_pytest_args"):
        config.append("pytest_add_cli_args = " + json.dumps(spec["mutmut_pytest_args"]))
    skipped = spec["do_not_mutate"] + spec["mutmut_also_skip"]  # audit never mutates tests
    if skipped:
        config.append("do_not_mutate = " + json.dumps(skipped))
    # mutmut runs from a copy under mutants/: without the metadata, version checks fail,
    # and sibling packages the tests import (toolz's `tlz`) must come along.
    siblings = [p.name for p in root.iterdir() if (p / "__init__.py").is_file()]
    extra = sorted(p.name for p in root.glob("*.egg-info")) + sorted(
        name for name in siblings if name != spec["package"]
    )
    extra += spec.get("mutmut_also_copy", [])
    config.append("also_copy = " + json.dumps(extra))
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n".join(config) + "\n")
    for file, (old, new) in spec.get("mutmut_patch", {}).items():
        text = (root / file).read_text()
        if old not in text:
            raise RuntimeError(f"{name}: the mutmut patch no longer applies to {file}")
        (root / file).write_text(text.replace(old, new, 1))
    env = dict(os.environ)
    note = ""
    command = [python, "-m", "mutmut", "run", "--max-children", str(jobs)]
    try:
        wall, rss, pss = run_measured(command, root, env, limit=MUTMUT_LIMIT)
    except StoppedAt as stopped:
        wall, rss, pss = stopped.wall, stopped.rss, stopped.pss
        note = f"stopped at {MUTMUT_LIMIT:.0f} s, unfinished: its counts are the mutants done"
    subprocess.run(
        [python, "-m", "mutmut", "export-cicd-stats"],
        cwd=root,
        check=True,
        capture_output=True,
    )
    stats = json.loads((root / "mutants" / "mutmut-cicd-stats.json").read_text())
    counts = {
        "killed": stats.get("killed", 0),
        "survived": stats.get("survived", 0),
        "timeout": stats.get("timeout", 0),
        "no_coverage": stats.get("no_tests", 0),
        "runtime_error": stats.get("segfault", 0) + stats.get("suspicious", 0),
    }
    if note:
        note += f" ({sum(counts.values())} of {stats.get('total', '?')})"
    if not sum(counts.values()):
        tail = (root / OUTPUT_LOG).read_text()[-3000:]
        note = f"no results after {wall:.0f} s; the end of its output:\n{tail}"
    return Measurement("mutmut", counts, wall, rss, pss, note=note)


def print_table(name: str, rows: list[Measurement]) -> None:
    print(f"\n== {name} ==")
    header = (
        f"{'tool':<26}{'mutants':>8}{'killed':>8}{'surv.':>7}{'t/out':>7}{'no cov':>7}"
        f"{'score':>8}{'wall s':>9}{'mut/s':>8}{'RSS MB':>8}{'PSS MB':>8}"
        f"{'floor s':>9}{'x floor':>9}"
    )
    print(header)
    for row in rows:
        score = f"{row.score:.1f}" if row.score is not None else "-"
        rate = row.mutants / row.wall if row.wall else 0
        floor = (
            f"{row.floor:>9.1f}{row.wall / row.floor:>9.2f}" if row.floor else f"{'-':>9}{'-':>9}"
        )
        print(
            f"{row.tool:<26}{row.mutants:>8}{row.counts.get('killed', 0):>8}"
            f"{row.counts.get('survived', 0):>7}{row.counts.get('timeout', 0):>7}"
            f"{row.counts.get('no_coverage', 0):>7}{score:>8}{row.wall:>9.1f}{rate:>8.1f}"
            f"{row.peak_rss_mb:>8.0f}{row.peak_pss_mb:>8.0f}{floor}"
        )
    baseline = next((r for r in rows if r.tool == "mutmut"), None)
    if baseline:
        for row in rows:
            if row is baseline:
                continue
            ours = row.mutants / row.wall
            theirs = baseline.mutants / baseline.wall
            if not theirs:
                break
            print(
                f"{row.tool}: {ours / theirs:.1f}x mutmut's mutants/s, "
                f"{row.wall / baseline.wall:.2f} of its wall time, "
                f"{100 * row.peak_rss_mb / baseline.peak_rss_mb:.0f}% of its peak RSS, "
                f"{100 * row.peak_pss_mb / baseline.peak_pss_mb:.0f}% of its peak PSS"
            )
    default = next((r for r in rows if r.tool == "audit default"), None)
    stripped = next((r for r in rows if r.tool == "audit stripped"), None)
    if default and stripped:
        ratio = stripped.wall / default.wall
        print(f"assertions stripped: {ratio:.2f}x the real suite's wall time")
    for row in rows:
        if row.note:
            print(f"{row.tool}: {row.note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", choices=[*PROJECTS, "all"])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/audit-bench"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--venv", type=Path, help="default: WORKDIR/venv")
    parser.add_argument("--tools", default="audit,mutmut", help="comma-separated: audit,mutmut")
    parser.add_argument(
        "--variants",
        default="default,stripped",
        help=f"comma-separated audit variants: {', '.join(AUDIT_VARIANTS)}",
    )
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    names = list(PROJECTS) if args.project == "all" else [args.project]
    python = bench_python(args.venv or args.workdir / "venv", names)
    for name in names:
        archive = fetch(name, args.workdir)
        rows = []
        tools = args.tools.split(",")
        variants = args.variants.split(",") if "audit" in tools else []
        for variant in variants:
            root = unpack(archive, args.workdir / f"{name}-audit-{variant}")
            rows.append(run_audit(name, root, args.jobs, variant, python))
        if "mutmut" in tools:
            root = unpack(archive, args.workdir / f"{name}-mutmut")
            rows.append(run_mutmut(name, root, args.jobs, python))
        print_table(f"{name} {PROJECTS[name]['version']}", rows)


if __name__ == "__main__":
    main()
