"""Run every smell rule over the test files and build the report's smells section."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

import libcst as cst

from auditor.report import CollectionError, Smell, SmellsSection
from auditor.smells import known
from auditor.smells.assertions import CheckFinder
from auditor.smells.catalog import RULES
from auditor.smells.known import SmellStore
from auditor.smells.rules import MODULE_RULES, TEST_RULES
from auditor.smells.rules.base import Finding, TestContext
from auditor.smells.source import TestModule, forget_walks, module_functions, parse_test_module

_SUPPRESSION = re.compile(r"#\s*audit:\s*ignore(?:\[(?P<codes>[A-Z0-9,\s]+)\])?")


def _suppressed(module: TestModule, line: int, code: str) -> bool:
    if not 0 < line <= len(module.source_lines):
        return False
    match = _SUPPRESSION.search(module.source_lines[line - 1])
    if match is None:
        return False
    codes = match.group("codes")
    return codes is None or code in {part.strip() for part in codes.split(",")}


class _Conftests:
    """The conftest files between the root and each test file, read and parsed once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._raw: dict[Path, bytes] = {}
        self._functions: dict[Path, dict[str, cst.FunctionDef]] = {}

    def _chain(self, test_file: Path) -> list[Path]:
        folders = [
            folder
            for folder in test_file.parents
            if folder == self.root or self.root in folder.parents
        ]
        return [folder / "conftest.py" for folder in reversed(folders)]

    def _read(self, conftest: Path) -> bytes:
        if conftest not in self._raw:
            try:
                self._raw[conftest] = conftest.read_bytes() if conftest.is_file() else b""
            except OSError:
                self._raw[conftest] = b""
        return self._raw[conftest]

    def contents(self, test_file: Path) -> list[bytes]:
        return [self._read(conftest) for conftest in self._chain(test_file)]

    def functions(self, test_file: Path) -> dict[str, cst.FunctionDef]:
        """Their functions, the nearest conftest's winning."""
        merged: dict[str, cst.FunctionDef] = {}
        for conftest in self._chain(test_file):
            if conftest not in self._functions:
                try:
                    raw = self._read(conftest)
                    self._functions[conftest] = module_functions(raw) if raw else {}
                except (SyntaxError, ValueError, cst.ParserSyntaxError):
                    self._functions[conftest] = {}  # pytest reports a conftest it cannot import
            merged.update(self._functions[conftest])
        return merged


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _parse_error(file: str, error: Exception, raw: bytes) -> CollectionError:
    """Python's own message and line where it has one (libcst's point at where its
    parser gave up, often the end of the statement)."""
    try:
        ast.parse(raw)
    except SyntaxError as python_says:
        return CollectionError(file=file, message=python_says.msg, line=python_says.lineno)
    except ValueError:
        pass
    line = error.raw_line if isinstance(error, cst.ParserSyntaxError) else None
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:  # Python reads it; libcst does not
        line = raw[: bad.start].count(b"\n") + 1
    return CollectionError(file=file, message=_first_line(error), line=line)


def analyze_module(module: TestModule, assertion_helpers: set[str]) -> list[Finding]:
    findings: list[Finding] = []
    try:
        finder = CheckFinder(module, assertion_helpers)
        for test in module.tests:
            context = TestContext(test=test, module=module, finder=finder)
            for rule in TEST_RULES:
                context.earlier.extend(rule(context))
            findings.extend(context.earlier)
        for module_rule in MODULE_RULES:
            findings.extend(module_rule(module))
    finally:
        forget_walks()
    return findings


def analyze(
    test_files: Iterable[Path],
    root: Path,
    packages: set[str],
    assertion_helpers: Iterable[str] = (),
    disabled: Iterable[str] = (),
    store: SmellStore | None = None,
) -> SmellsSection:
    """The smells of the test files; each file's from `store` where the same file, with
    the same conftests around it, was analysed before."""
    disabled_codes, helpers = set(disabled), set(assertion_helpers)
    conftests = _Conftests(root)
    known_salt = known.salt(packages, helpers)
    smells: list[Smell] = []
    unparsable: list[CollectionError] = []
    keys: set[str] = set()
    for path in sorted(test_files):
        relative = path.relative_to(root).as_posix() if root in path.parents else str(path)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            unparsable.append(CollectionError(file=relative, message=_first_line(exc)))
            continue
        key = known.key(known_salt, relative, raw, conftests.contents(path))
        keys.add(key)
        found = known.known(store, key)
        if found is None:
            found = _file_smells(relative, raw, packages, conftests.functions(path), helpers)
            if store is not None:
                store.put_smells(key, found.model_dump_json())
        unparsable.extend([found.error] if found.error else [])
        smells.extend(smell for smell in found.smells if smell.code not in disabled_codes)
    if store is not None:
        store.keep_smells(keys)
    return smells_section(smells, unparsable)


def _file_smells(
    relative: str,
    raw: bytes,
    packages: set[str],
    fixtures: dict[str, cst.FunctionDef],
    assertion_helpers: set[str],
) -> known.FileSmells:
    """What one test file shows, its suppression comments heeded."""
    try:
        module = parse_test_module(relative, raw, packages, fixtures)
    except (SyntaxError, ValueError, cst.ParserSyntaxError) as exc:
        # SyntaxError: libcst reads the encoding as Python does, and a byte that is
        # not UTF-8 in a file without a coding line is "invalid or missing encoding".
        return known.FileSmells(error=_parse_error(relative, exc, raw))
    tests_by_name = {test.qualname: test for test in module.tests}
    smells = []
    for finding in analyze_module(module, assertion_helpers):
        test = tests_by_name.get(finding.test)
        lines = {finding.line, test.line if test else finding.line}
        if any(_suppressed(module, line, finding.code) for line in lines):
            continue
        rule = RULES[finding.code]
        smells.append(rule.smell(relative, finding.line, finding.test, finding.message))
    return known.FileSmells(smells=smells)


def smells_section(smells: list[Smell], unparsable: list[CollectionError]) -> SmellsSection:
    """The findings in report order (each once), counted by severity."""
    unique = {(s.file, s.line, s.code, s.test, s.message): s for s in smells}
    ordered = [unique[key] for key in sorted(unique)]
    counts = {severity: 0 for severity in ("high", "medium", "low")}
    for smell in ordered:
        counts[smell.severity] += 1
    return SmellsSection(findings=ordered, counts=counts, unparsable=unparsable)


def analyze_paths(paths: list[Path], cwd: Path) -> SmellsSection:
    """The static check alone, as `audit smells` runs it: the test files under `paths`
    (by pytest's `python_files`, as discovery finds them), with the project's config and
    packages found from the first path; file names in the findings are relative to the
    project root."""
    from auditor.config import load_config
    from auditor.discovery.project import discover, find_rootdir, is_test_file, test_file_patterns
    from auditor.errors import DiscoveryError

    for path in paths:
        if not path.exists():
            raise DiscoveryError(f"test path '{path}' does not exist")
    anchor = paths[0] if paths[0].is_dir() else paths[0].parent
    root, _, ini_options = find_rootdir(anchor, cwd.resolve())
    patterns = test_file_patterns(ini_options)
    pyproject = root / "pyproject.toml"
    config = load_config(pyproject if pyproject.is_file() else None, {})
    try:
        packages = set(discover([str(anchor)], config.src, cwd).source_package_names)
    except DiscoveryError:
        packages = set()
    test_files = sorted(
        {
            file
            for path in paths
            for file in (path.rglob("*.py") if path.is_dir() else [path])
            if file.suffix == ".py" and (path == file or is_test_file(file, patterns))
        }
    )
    return analyze(test_files, root, packages, config.assertion_helpers, config.disable_smells)
