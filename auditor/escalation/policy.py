"""Which modules are weak, and in which order they go to the deep model.

A module is a source file together with the tests that cover it. It is weak when its
score on covered code is below the threshold, it has pseudo-tested functions, tests
without a real oracle cover it, or the probes crashed it; weak modules are ranked by the
surviving mutants a new test could still kill (likely equivalent ones left out).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from auditor.report import BaselineSection, MutationSection, ProbesSection, Smell, SmellsSection

ORACLE_SMELLS = {"AT001": "assertion-free", "AT005": "weak-oracle"}


@dataclass
class WeakModule:
    file: str
    reasons: list[str]
    survivors: list[str]
    """Ids of surviving mutants that are not likely equivalent, sorted."""
    uncovered: list[str] = field(default_factory=list)
    """Ids of NoCoverage mutants: new tests may reach and kill them too."""
    equivalent: list[str] = field(default_factory=list)
    """Ids of survivors the probes call likely equivalent: not asked for (the label is
    no proof), but a test that kills one shows it was not, and is kept."""

    unchecked: list[str] = field(default_factory=list)
    """Ids of mutants the suite detects only by an error, a crash or a timeout (its first
    killer's): a test whose check catches one turns a crash into evidence."""

    @property
    def targets(self) -> list[str]:
        """The mutants a candidate gets credit for killing."""
        return sorted({*self.survivors, *self.uncovered, *self.equivalent})


def smell_nodeid(smell: Smell) -> str:
    """The pytest node id of the test a smell was found in (`Class.test_x` -> `::`)."""
    return f"{smell.file}::{smell.test.replace('.', '::')}"


def weak_modules(
    baseline: BaselineSection,
    smells: SmellsSection,
    mutation: MutationSection,
    probes: ProbesSection | None,
    weak_below: float,
) -> list[WeakModule]:
    """Weak modules, most surviving mutants first (then by path, for a stable order)."""
    equivalent = {
        w.mutant_id for w in (probes.witnesses if probes else []) if w.status == "likely_equivalent"
    }
    smelly: dict[str, set[str]] = {}
    for smell in smells.findings:
        if smell.code in ORACLE_SMELLS and smell.test:
            smelly.setdefault(smell_nodeid(smell), set()).add(smell.code)
    crashes: dict[str, int] = {}
    for finding in probes.findings if probes else []:
        if finding.kind == "unhandled_crash":
            crashes[finding.file] = crashes.get(finding.file, 0) + 1
    pseudo: dict[str, list[str]] = {}
    for name in mutation.pseudo_tested:
        file, function = name.split("::", 1)
        pseudo.setdefault(file, []).append(function)

    modules = []
    for file_scores in mutation.files:
        file = file_scores.path
        reasons = []
        covered = file_scores.scores.covered_score
        if covered is not None and covered < weak_below:
            reasons.append(f"score on covered code {covered:g}% < {weak_below:g}%")
        if file in pseudo:
            reasons.append(f"pseudo-tested: {', '.join(sorted(pseudo[file]))}")
        codes = sorted(
            {
                code
                for test in baseline.tests
                if test.reliable and file in test.lines
                for code in smelly.get(test.nodeid, ())
            }
        )
        for code in codes:
            reasons.append(f"covered by {ORACLE_SMELLS[code]} tests ({code})")
        if file in crashes:
            reasons.append(f"{crashes[file]} unhandled crashes found by the probes")
        if not reasons:
            continue
        mutants = [m for m in mutation.mutants if m.file == file]
        survivors = sorted(
            m.id for m in mutants if m.status == "Survived" and m.id not in equivalent
        )
        uncovered = sorted(m.id for m in mutants if m.status == "NoCoverage")
        labelled = sorted(m.id for m in mutants if m.status == "Survived" and m.id in equivalent)
        unchecked = sorted(
            m.id
            for m in mutants
            if m.status == "Timeout" or (m.status == "Killed" and m.kill_kind != "assertion")
        )
        modules.append(WeakModule(file, reasons, survivors, uncovered, labelled, unchecked))
    modules.sort(key=lambda module: (-len(module.survivors), module.file))
    return modules
