"""Run every smell rule over the test files and build the report's smells section."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import libcst as cst

from auditor.report import CollectionError, Smell, SmellsSection
from auditor.smells.assertions import CheckFinder
from auditor.smells.catalog import RULES
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


def _conftest_functions(
    test_file: Path, root: Path, cache: dict[Path, dict[str, cst.FunctionDef]]
) -> dict[str, cst.FunctionDef]:
    """Functions from conftest.py files between the root and the test file; nearest wins."""
    merged: dict[str, cst.FunctionDef] = {}
    folders = [folder for folder in test_file.parents if folder == root or root in folder.parents]
    for folder in reversed(folders):
        conftest = folder / "conftest.py"
        if conftest not in cache:
            try:
                cache[conftest] = (
                    module_functions(conftest.read_bytes()) if conftest.is_file() else {}
                )
            except (OSError, cst.ParserSyntaxError):
                cache[conftest] = {}
        merged.update(cache[conftest])
    return merged


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
) -> SmellsSection:
    disabled_codes = set(disabled)
    smells: list[Smell] = []
    unparsable: list[CollectionError] = []
    conftest_cache: dict[Path, dict[str, cst.FunctionDef]] = {}
    for path in sorted(test_files):
        relative = path.relative_to(root).as_posix() if root in path.parents else str(path)
        try:
            module = parse_test_module(
                relative,
                path.read_bytes(),
                packages,
                _conftest_functions(path, root, conftest_cache),
            )
        except (OSError, cst.ParserSyntaxError, UnicodeDecodeError) as exc:
            first_line = (
                str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            )
            unparsable.append(CollectionError(file=relative, message=first_line))
            continue
        tests_by_name = {test.qualname: test for test in module.tests}
        for finding in analyze_module(module, set(assertion_helpers)):
            if finding.code in disabled_codes:
                continue
            test = tests_by_name.get(finding.test)
            lines = {finding.line, test.line if test else finding.line}
            if any(_suppressed(module, line, finding.code) for line in lines):
                continue
            rule = RULES[finding.code]
            smells.append(
                Smell(
                    code=rule.code,
                    name=rule.name,
                    severity=rule.severity,
                    file=relative,
                    line=finding.line,
                    test=finding.test,
                    message=finding.message,
                    hint=rule.hint,
                )
            )
    smells.sort(key=lambda s: (s.file, s.line, s.code, s.test, s.message))
    counts = {severity: 0 for severity in ("high", "medium", "low")}
    for smell in smells:
        counts[smell.severity] += 1
    return SmellsSection(findings=smells, counts=counts, unparsable=unparsable)
