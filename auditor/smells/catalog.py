"""The smell catalog: code, name, severity and the fix we suggest for each rule."""

from __future__ import annotations

from dataclasses import dataclass

from auditor.report import Severity, Smell


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    hint: str

    def smell(self, file: str, line: int, test: str, message: str) -> Smell:
        return Smell(
            code=self.code,
            name=self.name,
            severity=self.severity,
            file=file,
            line=line,
            test=test,
            message=message,
            hint=self.hint,
        )


RULES: dict[str, Rule] = {
    rule.code: rule
    for rule in (
        Rule(
            "AT001",
            "assertion-free",
            "high",
            "assert on the returned value or the state the call changed",
        ),
        Rule(
            "AT002",
            "empty test",
            "high",
            "write the test or delete it; mark unfinished work with pytest.mark.skip(reason=...)",
        ),
        Rule(
            "AT003",
            "tautological assert",
            "high",
            "assert on a value computed by the code under test",
        ),
        Rule(
            "AT004",
            "self-comparison",
            "high",
            "compare the result with an expected value written in the test",
        ),
        Rule(
            "AT005",
            "weak oracle",
            "medium",
            "assert the exact value (==) or the property that matters, not only its existence",
        ),
        Rule(
            "AT006",
            "mock-only assertions",
            "medium",
            "also assert on the value returned or the state changed by the code under test",
        ),
        Rule(
            "AT007",
            "over-mocking",
            "low",
            "mock only real boundaries (network, clock, filesystem); never the code under test",
        ),
        Rule(
            "AT008",
            "uncalled mock assertion",
            "high",
            "call the assertion method: add the parentheses and use the assert_ prefix",
        ),
        Rule(
            "AT009",
            "broad raises",
            "medium",
            "expect the specific exception type and add match= for its message",
        ),
        Rule(
            "AT010",
            "several statements in raises",
            "low",
            "keep only the call that should raise inside the `with pytest.raises` block",
        ),
        Rule(
            "AT011",
            "swallowed exception",
            "high",
            "use pytest.raises, or let the exception fail the test",
        ),
        Rule(
            "AT012",
            "returns instead of asserting",
            "high",
            "pytest ignores returned values: assert on the value instead",
        ),
        Rule("AT013", "ignored result", "medium", "assert on the result of the call"),
        Rule(
            "AT014",
            "sleepy test",
            "low",
            "wait on a condition or patch the clock instead of sleeping",
        ),
        Rule(
            "AT015",
            "conditional test logic",
            "low",
            "use pytest.mark.parametrize, or split into tests without branches",
        ),
        Rule(
            "AT016",
            "duplicate assert",
            "low",
            "remove the repeated assertion or assert something new",
        ),
        Rule(
            "AT017",
            "duplicate test",
            "medium",
            "remove the copy, or change it to test a different case",
        ),
        Rule(
            "AT018",
            "skip without reason",
            "low",
            "give the skip a reason, or make it conditional with skipif",
        ),
        Rule(
            "AT019",
            "non-determinism",
            "low",
            "patch the clock, seed the random generator, or inject the value",
        ),
        Rule("AT020", "writes outside tmp", "medium", "write under the tmp_path fixture instead"),
        Rule(
            "AT021",
            "benchmark only",
            "low",
            "a benchmark, not an oracle test: assert on the value `benchmark(...)` returns "
            "if it should also check the result",
        ),
        Rule(
            "AT023",
            "print as oracle",
            "medium",
            "assert on the value instead of printing it: nobody reads a passing test's output",
        ),
        Rule(
            "AT024",
            "mirror oracle",
            "medium",
            "write the expected value out (a literal, or worked out by hand), not computed "
            "by the code under test",
        ),
        Rule(
            "AT025",
            "suboptimal assert",
            "low",
            "use the specific assertion (assertEqual, assertIn, ...) or a plain assert, so a "
            "failure shows both values",
        ),
        Rule(
            "AT026",
            "checks in an autouse fixture",
            "low",
            "move the check into the tests it is about, or into a named fixture they request",
        ),
        Rule(
            "AT022",
            "never checks a value",
            "medium",
            "its kills needed no assertion: check the value the code returns or the state "
            "it changes, not only that it runs",
        ),
    )
}
