"""Smells the mutation run proves (with `--all-killers`): a test that caught injected bugs
only because the code raised, crashed or hung, and ran on surviving mutants without a
check failing.

Static rules see what a test's checks look like; this one sees what they did. A test with
asserts that are too weak to fail (`assert result is not None`) and an assertion-free
test both kill a mutant that makes the code raise: the kill is no evidence of an oracle.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from auditor.discovery.test_source import read_test_source
from auditor.evidence.checks import split_nodeid
from auditor.report import MutationSection, SmellsSection
from auditor.smells.analyzer import smells_section
from auditor.smells.catalog import RULES

_RULE = RULES["AT022"]
PROVEN_BY_MUTANTS = _RULE.code
"""The one smell the mutation run adds; the others come from reading the tests."""
_CHECKS_NOTHING = frozenset({"AT001", "AT002"})


def with_mutation_evidence(
    smells: SmellsSection, mutation: MutationSection, root: Path, disabled: list[str]
) -> SmellsSection:
    """The smells, with AT022 for each test whose kills all came without a failing check."""
    if _RULE.code in disabled or not mutation.all_killers:
        # Without every killer known, a test's exact check may simply never have come
        # first: a faster test caught those mutants, and the rule would accuse it.
        return smells
    lines: dict[str, Mapping[str, int]] = {}
    found = list(smells.findings)
    # an assertion-free or empty test is already flagged for what this would say
    flagged = {(s.file, s.test) for s in found if s.code in _CHECKS_NOTHING}
    passed_on: dict[str, int] = {}
    for mutant in mutation.mutants:
        # in a function the test ran (import-time survivors reach tests by the names
        # they may read, which says less about a test's checks)
        if mutant.status == "Survived" and mutant.function:
            for nodeid in mutant.covered_by:
                passed_on[nodeid] = passed_on.get(nodeid, 0) + 1
    for test in mutation.tests:
        # A test whose mutants all made the code raise had no chance to check a value;
        # one that also ran on survivors and never failed a check had that chance.
        if test.killed or not test.crash_kills or not passed_on.get(test.nodeid):
            continue
        file, qualname = split_nodeid(test.nodeid)
        if (file, qualname) in flagged:
            continue
        if file not in lines:
            lines[file] = read_test_source(root / file).functions
        survivors = passed_on[test.nodeid]
        found.append(
            _RULE.smell(
                file,
                lines[file].get(qualname, 1),
                qualname,
                f"its {test.crash_kills} kill{'s' if test.crash_kills != 1 else ''} all came "
                "from the code raising, crashing or hanging, and it passed on "
                f"{survivors} surviving mutant{'s' if survivors != 1 else ''}: none of its "
                "checks ever failed",
            )
        )
    return smells_section(found, smells.unparsable)
