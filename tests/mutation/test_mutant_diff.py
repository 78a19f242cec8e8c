"""The diff a report shows for a mutant: every line the mutant changes, before and after."""

from auditor.mutation.plan import Planner, PlanSettings, TimeoutPolicy, plan
from auditor.report import BaselineSection
from mutators.registry import operators

NO_TESTS = BaselineSection(
    tests=[], collection_errors=[], passed=0, excluded=0, restarts=0, import_time_lines={}
)


def diffs_of(tmp_path, source: str) -> dict[str, str]:
    path = tmp_path / "module.py"
    path.write_text(source)
    planner = Planner(tmp_path, NO_TESTS, PlanSettings(operators(), TimeoutPolicy(3.0, 2.0)))
    return {mutant.site.description: mutant.diff for mutant in plan(planner, [path])}


def test_a_one_line_change_shows_that_line_before_and_after(tmp_path):
    diffs = diffs_of(tmp_path, "def total(a, b):\n    return a + b\n")
    assert diffs["+ -> -"] == "-    return a + b\n+    return a - b"


def test_dropping_a_last_argument_on_its_own_line_shows_the_comma_it_takes_along(tmp_path):
    source = "def call(f, a, b):\n    return f(a,\n             b)\n"
    diffs = diffs_of(tmp_path, source)
    assert diffs["argument `, b` dropped"] == (
        "-    return f(a,\n-             b)\n+    return f(a)"
    )
