"""Which generator wrote each test file, and a scorecard per generator.

The first source that says wins: `[tool.audit.generators]` path globs (`fast =
["tests/gen/**"]`), a `# generated-by: <name>` comment in the file's first lines, then the
git trailers of the commit that added the file (`Generated-by: <name>`, or a
`Co-authored-by:` naming a model or a bot). Files none of them name are `unattributed`.
"""

from __future__ import annotations

import fnmatch
import re
import subprocess
from collections import defaultdict
from pathlib import Path

from auditor.report import (
    BaselineSection,
    GeneratorCard,
    MutationSection,
    ProvenanceSection,
    SmellsSection,
    TestOrigin,
)

UNATTRIBUTED = "unattributed"
_HEADER = re.compile(r"^\s*#\s*generated[- ]by\s*:\s*(?P<name>\S.*?)\s*$", re.I | re.M)
_HEADER_LINES = 10
_GENERATED_BY = re.compile(r"^generated-by:\s*(?P<name>\S.*?)\s*$", re.I | re.M)
_CO_AUTHOR = re.compile(r"^co-authored-by:\s*(?P<name>[^<\n]+?)\s*(<[^>\n]*>)?\s*$", re.I | re.M)
_MACHINE = re.compile(
    r"\[bot\]|\bbot\b|claude|gpt|openai|copilot|codex|gemini|devin|cursor|aider|llm|model",
    re.I,
)
_GIT_TIMEOUT = 30.0


def origins(root: Path, test_files: list[str], globs: dict[str, list[str]]) -> list[TestOrigin]:
    """Where each test file (relative to root) came from, sorted by file."""
    added = _git_trailers(root, test_files)
    found = []
    for file in sorted(test_files):
        found.append(_origin(root, file, globs, added.get(file)))
    return found


def _origin(root: Path, file: str, globs: dict[str, list[str]], trailers: str | None) -> TestOrigin:
    for name, patterns in sorted(globs.items()):
        if any(_matches(file, pattern) for pattern in patterns):
            return TestOrigin(file=file, generator=name, source="config glob")
    try:
        head = "\n".join((root / file).read_text(errors="replace").splitlines()[:_HEADER_LINES])
    except OSError:
        head = ""
    header = _HEADER.search(head)
    if header:
        return TestOrigin(file=file, generator=header["name"], source="header comment")
    if trailers:
        named = _GENERATED_BY.search(trailers)
        if named:
            return TestOrigin(file=file, generator=named["name"], source="git trailer")
        for co_author in _CO_AUTHOR.finditer(trailers):
            if _MACHINE.search(co_author.group(0)):
                name = co_author["name"].strip()
                return TestOrigin(file=file, generator=name, source="git co-author")
    return TestOrigin(file=file, generator=UNATTRIBUTED, source="")


def _matches(file: str, pattern: str) -> bool:
    """A glob where `**` spans folders (`tests/gen/**` holds `tests/gen/a/test_x.py`)."""
    if fnmatch.fnmatchcase(file, pattern):
        return True
    return pattern.endswith("/**") and file.startswith(pattern[:-2])


def _git_trailers(root: Path, files: list[str]) -> dict[str, str]:
    """File -> the message of the commit that added it, from one `git log`; empty outside
    a repository or without git."""
    if not files:
        return {}
    try:
        result = subprocess.run(
            [
                "git",
                "-C",
                str(root),
                "log",
                "--diff-filter=A",
                "--name-only",
                "--format=%x01%B%x02",
                "--",
                *files,
            ],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    if result.returncode != 0:
        return {}
    prefix = _repository_prefix(root)
    wanted = set(files)
    found: dict[str, str] = {}
    for entry in result.stdout.split("\x01")[1:]:
        message, _, names = entry.partition("\x02")
        for name in names.split():
            relative = name[len(prefix) :] if prefix and name.startswith(prefix) else name
            if relative in wanted:
                found.setdefault(relative, message)  # newest first: keep the latest add
    return found


def _repository_prefix(root: Path) -> str:
    """The project root's path inside its git repository (`pkg/` in a monorepo)."""
    try:
        result = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--show-prefix"],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return result.stdout.strip() if result.returncode == 0 else ""


def scorecards(
    found: list[TestOrigin],
    baseline: BaselineSection,
    smells: SmellsSection,
    mutation: MutationSection | None,
) -> list[GeneratorCard]:
    """Per generator: its tests, how they kill, their smells, and their blocked or flaky
    tests. Unique kills and the score of its tests alone need every killer of every
    mutant (`--all-killers`); without it they are None."""
    generator_of = {origin.file: origin.generator for origin in found}
    tests_of: dict[str, list[str]] = defaultdict(list)
    troubled: dict[str, int] = defaultdict(int)
    for test in baseline.tests:
        name = generator_of.get(test.file, UNATTRIBUTED)
        tests_of[name].append(test.nodeid)
        troubled[name] += bool(test.blocked or test.flaky)
    smell_count: dict[str, int] = defaultdict(int)
    for smell in smells.findings:
        smell_count[generator_of.get(smell.file, UNATTRIBUTED)] += 1
    states = {test.nodeid: test for test in mutation.tests} if mutation else {}
    exact = mutation is not None and mutation.all_killers
    unique = _unique_kills(mutation, generator_of) if exact else {}
    cards = []
    for name in sorted(tests_of):
        nodeids = tests_of[name]
        mine = set(nodeids)
        by_check = sum(states[n].killed for n in nodeids if n in states)
        other = sum(states[n].crash_kills for n in nodeids if n in states)
        cards.append(
            GeneratorCard(
                generator=name,
                tests=len(nodeids),
                kills_by_check=by_check,
                other_kills=other,
                assertion_share=round(100.0 * by_check / (by_check + other), 2)
                if by_check + other
                else None,
                unique_kills=unique.get(name, 0) if exact else None,
                score_alone=_score_alone(mutation, mine) if exact else None,
                smells=smell_count[name],
                smells_per_test=round(smell_count[name] / len(nodeids), 2),
                blocked_or_flaky=troubled[name],
            )
        )
    return cards


def _unique_kills(mutation: MutationSection, generator_of: dict[str, str]) -> dict[str, int]:
    """Per generator, the mutants only its tests kill."""
    found: dict[str, int] = defaultdict(int)
    for mutant in mutation.mutants:
        by = {generator_of.get(test.split("::", 1)[0], UNATTRIBUTED) for test in mutant.killed_by}
        if len(by) == 1 and mutant.status == "Killed":
            found[by.pop()] += 1
    return found


def _score_alone(mutation: MutationSection | None, tests: set[str]) -> float | None:
    """Of the mutants these tests cover, the share they kill themselves."""
    if mutation is None:
        return None
    covered = killed = 0
    for mutant in mutation.mutants:
        if mutant.status not in ("Killed", "Timeout", "Survived"):
            continue
        if not tests & set(mutant.covered_by):
            continue
        covered += 1
        killed += bool(tests & set(mutant.killed_by))
    return round(100.0 * killed / covered, 2) if covered else None


def provenance(
    root: Path,
    test_files: list[str],
    globs: dict[str, list[str]],
    baseline: BaselineSection,
    smells: SmellsSection,
    mutation: MutationSection | None,
) -> ProvenanceSection:
    found = origins(root, test_files, globs)
    return ProvenanceSection(files=found, generators=scorecards(found, baseline, smells, mutation))
