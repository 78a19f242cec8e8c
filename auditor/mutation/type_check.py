"""The type-checker pre-filter: mutants the project's own type checker rejects never run.

A mutant that does not type-check (`len(x) + 1` -> `len(x) + "XX"`) would be caught
by the project's CI before any test, so it says nothing about the tests. When the
project configures mypy, pyright or ty, each mutated function is type-checked in one
batch per run: every source file with mutants is replaced by a copy that holds, right
after each function, one renamed copy of it per mutant (`_audit_mutant_7`), so one
checker run checks them all in the module's own context (imports, class, config). mypy
reads the copies as shadow files (`--shadow-file`); pyright and ty, which have none,
check an overlay of the project. An error inside a copy that the original function
does not have at the same place rejects that mutant: status `CompileError`, "rejected
by mypy: ...".

Only function-body mutants are checked (import-time code has no function to copy),
and not those of property setters, deleters or overloads (a renamed copy would not mean
the same).

The check costs no wall time where it can run early: on a whole-project run the sites
helper (`early_sites`) checks every function-body mutant on the core the baseline leaves
idle, and the verdicts are cached under the checker, its version, the project's sources
and its configuration; the stage then checks only what the cache does not hold.
"""

from __future__ import annotations

import configparser
import hashlib
import importlib.metadata
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from auditor.errors import TypeCheckError
from mutators.sites import Site

if TYPE_CHECKING:  # the sites helper runs the check without planning or pydantic
    from auditor.mutation.cache import ResultCache
    from auditor.mutation.plan import PlannedMutant
    from auditor.report import TypeCheckSummary

FASTEST_FIRST = ("ty", "mypy", "pyright")
"""The checkers, fastest first (docs/engine.md): where a project configures several,
`auto` takes the fastest one installed."""
_MYPY_ERROR = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?:\d+:)? error: (?P<message>.*)$")
_TY_ERROR = re.compile(
    r"^(?P<path>.+?):(?P<line>\d+):\d+: error\[(?P<code>[^\]]+)\] (?P<message>.*)$"
)
_SKIPPED_DECORATORS = re.compile(r"@\s*(?:\w+\.)*(?:setter|deleter|overload)\b")
_MADE_BY_THE_COPY = re.compile(r"\[no-redef\]$")
"""What a copy of a function gets for being a copy: mypy's "Attribute "x" already
defined on line N" where the copied `__init__` declares `self.x: int = ...` again."""
_TIMEOUT = 600


def configured_checkers(root: Path) -> list[str]:
    """The type checkers the project configures, fastest first."""
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8", errors="replace") if pyproject.is_file() else ""
    configured = {
        "mypy": "[tool.mypy]" in text
        or (root / "mypy.ini").is_file()
        or (root / ".mypy.ini").is_file()
        or _setup_cfg_has_mypy(root / "setup.cfg"),
        "pyright": "[tool.pyright]" in text or (root / "pyrightconfig.json").is_file(),
        "ty": "[tool.ty]" in text or (root / "ty.toml").is_file(),
    }
    return [checker for checker in FASTEST_FIRST if configured[checker]]


def _setup_cfg_has_mypy(setup_cfg: Path) -> bool:
    if not setup_cfg.is_file():
        return False
    parser = configparser.ConfigParser()
    try:
        parser.read(setup_cfg, encoding="utf-8")
    except configparser.Error:
        return False
    return parser.has_section("mypy")


def chosen_checker(setting: str, root: Path) -> str | None:
    """`auto`: the fastest configured checker that is installed; a named one must be."""
    if setting == "off":
        return None
    if setting == "auto":
        installed = (c for c in configured_checkers(root) if importlib.util.find_spec(c))
        return next(installed, None)
    if importlib.util.find_spec(setting) is None:
        raise TypeCheckError(f"{setting} is not installed in this environment")
    return setting


@dataclass(frozen=True)
class Checkable:
    """A function-body mutant as the checker sees it: its file, the file's text, the
    site."""

    file: str
    source: str
    site: Site

    @property
    def key(self) -> str:
        return f"{self.site.start}:{self.site.end}:{self.site.replacement}"


@dataclass
class _Copy:
    mutant: Checkable
    first_line: int
    last_line: int
    original_first_line: int


def type_errors(
    checker: str, mutants: list[Checkable], root: Path, source_files: list[Path], cache_dir: Path
) -> dict[str, dict[str, str]]:
    """One checker run over `mutants`: by file, each checked mutant's key and the error
    that rejects it ('' when none does). Setters, deleters and overloads are left out."""
    by_file: dict[str, list[Checkable]] = defaultdict(list)
    for mutant in mutants:
        by_file[mutant.file].append(mutant)
    copies: dict[str, list[_Copy]] = {}
    with tempfile.TemporaryDirectory(prefix="audit-typecheck-") as scratch:
        shadows = []
        for number, (path, group) in enumerate(sorted(by_file.items())):
            source = group[0].source
            starts = _line_starts(source)
            group = [m for m in group if not _skipped(m, starts)]
            if not group:
                continue
            text, placed = _with_copies(source, starts, group)
            shadow = Path(scratch) / f"shadow_{number}.py"
            shadow.write_text(text, encoding="utf-8")
            shadows.append((path, shadow))
            copies[path] = placed
        if not shadows:
            errors = {}
        elif checker == "mypy":
            errors = _run_mypy(root, shadows, cache_dir)
        else:
            overlay = Path(scratch) / "overlay"
            errors = _run_on_overlay(checker, root, source_files, shadows, overlay)
    return {
        path: {copy.mutant.key: _new_error(copy, errors.get(path, [])) for copy in placed}
        for path, placed in copies.items()
    }


def verdicts_key(checker: str, root: Path, source_files: list[Path]) -> str | None:
    """What the checker's verdicts depend on: the checker and its version, every source
    file, the project's configuration files; None when a file cannot be read."""
    digest = hashlib.sha256(checker.encode())
    try:
        digest.update(importlib.metadata.version(checker).encode())
        for path in sorted(source_files):
            digest.update(str(path).encode() + b"\0" + path.read_bytes())
        for name in _CONFIG_FILES:
            if (root / name).is_file():
                digest.update(name.encode() + b"\0" + (root / name).read_bytes())
    except (OSError, importlib.metadata.PackageNotFoundError):
        return None
    return digest.hexdigest()


_CONFIG_FILES = (
    "pyproject.toml",
    "setup.cfg",
    "mypy.ini",
    ".mypy.ini",
    "pyrightconfig.json",
    "ty.toml",
)


def check_and_keep(
    checker: str,
    mutants: list[Checkable],
    root: Path,
    source_files: list[Path],
    cache: ResultCache,
) -> tuple[dict[str, dict[str, str]], int]:
    """The verdicts on `mutants`: the cached ones, and one checker run for the rest,
    cached in turn (by file); and how many the checker ran on."""
    key = verdicts_key(checker, root, source_files)
    if key:
        cache.keep_type_checks(f"{key}:")
    known: dict[str, dict[str, str]] = {}
    missing = []
    for mutant in mutants:
        if mutant.file not in known:
            known[mutant.file] = (
                cache.get_type_checks(f"{key}:{mutant.file}") if key else None
            ) or {}
        if mutant.key not in known[mutant.file]:
            missing.append(mutant)
    if missing:
        for path, found in type_errors(
            checker, missing, root, source_files, root / ".audit" / "mypy-cache"
        ).items():
            known[path].update(found)
            if key:
                cache.put_type_checks(f"{key}:{path}", known[path])
    return known, len(missing)


def reject_ill_typed(
    mutants: list[PlannedMutant],
    root: Path,
    source_files: list[Path],
    setting: str,
    cache: ResultCache,
) -> TypeCheckSummary | None:
    """Type-check the runnable function-body mutants; those the checker rejects get
    status `CompileError` (in place). None when no checker applies."""
    from auditor.report import TypeCheckSummary

    checker = chosen_checker(setting, root)
    if checker is None:
        return None
    started = time.perf_counter()
    candidates = {
        id(mutant): Checkable(mutant.abs_path, mutant.source, mutant.site)
        for mutant in mutants
        if mutant.runnable and mutant.site.function
    }
    verdicts, fresh = check_and_keep(checker, list(candidates.values()), root, source_files, cache)
    checked = rejected = 0
    for mutant in mutants:
        candidate = candidates.get(id(mutant))
        reason = verdicts.get(candidate.file, {}).get(candidate.key) if candidate else None
        if reason is None:
            continue  # not checked: a setter, deleter or overload
        checked += 1
        if reason:
            mutant.status = "CompileError"
            mutant.path = "none"
            mutant.status_reason = f"{rejected_by(checker)}{reason}"
            rejected += 1
    return TypeCheckSummary(
        checker=checker,
        checked=checked,
        rejected=rejected,
        duration=round(time.perf_counter() - started, 3),
        cached=checked - min(fresh, checked),
    )


def rejected_by(checker: str) -> str:
    """How the status reason of a mutant the checker rejected begins."""
    return f"rejected by {checker}: "


def _skipped(mutant: Checkable, starts: list[int]) -> bool:
    start = starts[mutant.site.function_first_line - 1]
    head = mutant.source[start : mutant.source.find("def ", start) + 4]
    return bool(_SKIPPED_DECORATORS.search(head))


def _line_starts(source: str) -> list[int]:
    """The offset where each line begins (index 0: line 1)."""
    return [0, *(match.end() for match in re.finditer("\n", source))]


def _with_copies(
    source: str, starts: list[int], mutants: list[Checkable]
) -> tuple[str, list[_Copy]]:
    """The source with each mutant's renamed function copy right after the function,
    and where each copy lies (1-based lines in the returned text)."""
    by_function: dict[int, list[Checkable]] = defaultdict(list)
    for mutant in mutants:
        by_function[mutant.site.function_end].append(mutant)
    parts, placed, position, line = [], [], 0, 1
    for end in sorted(by_function):
        group = by_function[end]
        start = starts[group[0].site.function_first_line - 1]
        before = source[position:end]
        original_start = line + source[position:start].count("\n")
        parts.append(before)
        line += before.count("\n")
        if not before.endswith("\n"):
            parts.append("\n")
            line += 1
        for mutant in sorted(group, key=lambda m: (m.site.start, m.site.end, m.key)):
            text = _renamed(_mutated_function(source, mutant, start), mutant, len(placed))
            text = text if text.endswith("\n") else text + "\n"
            parts.append(text)
            lines = text.count("\n")
            placed.append(_Copy(mutant, line, line + lines - 1, original_start))
            line += lines
        position = end
    parts.append(source[position:])
    return "".join(parts), placed


def _mutated_function(source: str, mutant: Checkable, start: int) -> str:
    site = mutant.site
    return source[start : site.start] + site.replacement + source[site.end : site.function_end]


def _renamed(text: str, mutant: Checkable, number: int) -> str:
    name = mutant.site.function.rpartition(".")[2]
    return re.sub(rf"\bdef\s+{re.escape(name)}\b", f"def _audit_mutant_{number}", text, count=1)


def _run_mypy(
    root: Path, shadows: list[tuple[str, Path]], cache_dir: Path
) -> dict[str, list[tuple[int, str]]]:
    """One mypy run over the shadowed files, with the project's config: errors by file."""
    command = [sys.executable, "-m", "mypy", "--no-error-summary", "--no-pretty"]
    command += ["--show-error-codes", "--no-color-output", "--cache-dir", str(cache_dir)]
    if _has_workers_option():
        # One process: a project's `num_workers` multiplies mypy's memory, beside the
        # mutation runners, for no gain on a batch this size.
        command += ["--num-workers", "0"]
    for path, shadow in shadows:
        command += ["--shadow-file", path, str(shadow)]
    command += [path for path, _ in shadows]
    done = _checker_run(command, root, "mypy", shadows[0][0])
    errors: dict[str, list[tuple[int, str]]] = defaultdict(list)
    resolved = {str(Path(path).resolve()): path for path, _ in shadows}
    for text in done.stdout.splitlines():
        match = _MYPY_ERROR.match(text)
        if match is None:
            continue
        where = str((root / match["path"]).resolve())
        if where in resolved:
            errors[resolved[where]].append((int(match["line"]), match["message"]))
    return errors


def _run_on_overlay(
    checker: str,
    root: Path,
    source_files: list[Path],
    shadows: list[tuple[str, Path]],
    overlay: Path,
) -> dict[str, list[tuple[int, str]]]:
    """ty and pyright have no shadow files: they check an overlay of the project (its
    config and the code under test, the shadowed files replaced), third-party imports
    resolved from this environment."""
    shadow_of = {str(Path(path).resolve()): shadow for path, shadow in shadows}
    for source in source_files:
        target = overlay / source.resolve().relative_to(root.resolve())
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shadow_of.get(str(source.resolve()), source), target)
    for name in ("pyproject.toml", "ty.toml", "pyrightconfig.json"):
        if (root / name).is_file():
            shutil.copyfile(root / name, overlay / name)
    checked = {
        Path(path).resolve().relative_to(root.resolve()).as_posix(): path for path, _ in shadows
    }
    if checker == "ty":
        command = [sys.executable, "-m", "ty", "check", "--output-format", "concise"]
        command += ["--python", sys.executable, "--color", "never", *sorted(checked)]
        found = _ty_errors(_checker_run(command, overlay, "ty", shadows[0][0]).stdout)
    else:
        command = [sys.executable, "-m", "pyright", "--outputjson"]
        command += ["--pythonpath", sys.executable, *sorted(checked)]
        done = _checker_run(command, overlay, "pyright", shadows[0][0])
        found = _pyright_errors(done.stdout, overlay)
    errors: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for path, line, message in found:
        if path in checked:
            errors[checked[path]].append((line, message))
    return errors


def _ty_errors(output: str) -> list[tuple[str, int, str]]:
    found = []
    for text in output.splitlines():
        match = _TY_ERROR.match(text)
        if match is not None:
            message = f"{match['message']}  [{match['code']}]"
            found.append((match["path"], int(match["line"]), message))
    return found


def _pyright_errors(output: str, overlay: Path) -> list[tuple[str, int, str]]:
    """pyright's `--outputjson`: errors with 0-based lines and absolute paths."""
    try:
        diagnostics = json.loads(output).get("generalDiagnostics", [])
    except ValueError:
        return []
    found = []
    for item in diagnostics:
        if item.get("severity") != "error":
            continue
        path = Path(item["file"]).resolve().relative_to(overlay.resolve()).as_posix()
        rule = f"  [{item['rule']}]" if item.get("rule") else ""
        found.append((path, item["range"]["start"]["line"] + 1, item["message"] + rule))
    return found


def _checker_run(
    command: list[str], cwd: Path, checker: str, first_file: str
) -> subprocess.CompletedProcess[str]:
    """Exit 0 (no error) or 1 (errors found); anything else is a one-line error."""
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise TypeCheckError(f"{checker} ran past {_TIMEOUT}s on {first_file}") from None
    if done.returncode not in (0, 1):
        lines = (done.stderr or done.stdout).strip().splitlines()
        last = lines[-1] if lines else f"exit {done.returncode}"
        raise TypeCheckError(
            f"{checker} failed on {first_file}: {last} (--type-check off skips it)"
        )
    return done


def _has_workers_option() -> bool:
    """Newer mypy checks in worker processes when the project's config asks for them."""
    try:
        from mypy.options import Options
    except ImportError:
        return False
    return hasattr(Options(), "num_workers")


def _new_error(copy: _Copy, errors: list[tuple[int, str]]) -> str:
    """The first error inside the copy that the original function does not have at the
    same offset (the copy's name taken out of the message)."""
    name = copy.mutant.site.function.rpartition(".")[2]
    inside = [
        (line, message)
        for line, message in errors
        if copy.first_line <= line <= copy.last_line and not _MADE_BY_THE_COPY.search(message)
    ]
    if not inside:
        return ""
    original = {
        (line - copy.original_first_line, message.replace(f'"{name}"', '"?"'))
        for line, message in errors
    }
    for line, message in inside:
        renamed = re.sub(r'"_audit_mutant_\d+"', '"?"', message)
        if (line - copy.first_line, renamed) not in original:
            return re.sub(r"_audit_mutant_\d+", name, message)
    return ""
