"""Lambda bodies run only when their lambda is called: a mutant in the body of one that
no test (and nothing at import time) calls has no coverage, whatever its line says."""

import json
import textwrap
from pathlib import Path

import pytest

from auditor.mutation.lambdas import lambda_around, lambda_bodies
from tests.conftest import run_audit


def test_the_lambda_around_a_span_is_the_innermost_whose_body_holds_it():
    source = "pick = lambda rows, key=len: sorted(rows, key=lambda row: row[1])\n"
    bodies = lambda_bodies(source)
    inner = source.index("row[1]")
    assert lambda_around(bodies, inner, inner + 6).start == source.index("row[1]")
    assert lambda_around(bodies, source.index("sorted"), source.index("sorted") + 6).line == 1


def test_a_lambda_s_defaults_are_not_its_body():
    source = "pick = lambda rows, key=len: rows\n"
    default = source.index("len")
    assert lambda_around(lambda_bodies(source), default, default + 3) is None


STUBS = """\
import inspect

SIGNATURES = {
    "abs": lambda x: None,
    "pow": lambda base, exp: None,
}
ORDERED = sorted([("b", 2), ("a", 1)], key=lambda row: row[1])


def arity(name):
    return len(inspect.signature(SIGNATURES[name]).parameters)


def apply(values):
    return list(map(lambda value: value + 1, values))
"""

TESTS = """\
from stubs import ORDERED, apply, arity


def test_arity():
    assert arity("pow") == 2


def test_ordered():
    assert ORDERED[0] == ("a", 1)


def test_apply():
    assert apply([1]) == [2]
"""


@pytest.mark.slow
def test_only_a_lambda_nothing_calls_leaves_its_body_uncovered(tmp_path: Path):
    (tmp_path / "stubs.py").write_text(STUBS)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_stubs.py").write_text(textwrap.dedent(TESTS))
    out = tmp_path / "r.json"
    flags = ("--mutators", "calls,subscripts,arithmetic", "--no-probes", "-q")
    result = run_audit("tests", *flags, "--json", str(out), cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    report = json.loads(out.read_text())
    mutants = report["mutation"]["mutants"]
    by_line = {}
    for mutant in mutants:
        by_line.setdefault(mutant["line"], []).append(mutant)
    stub_bodies = [m for m in by_line[4] + by_line[5] if "lambda body" in m["description"]]
    assert stub_bodies
    assert {(m["status"], m["status_reason"]) for m in stub_bodies} == {
        ("NoCoverage", "no passing test calls the lambda it is in")
    }
    # Called at import time, and by a test: both bodies are covered.
    called = [m for m in by_line[7] if "row[1]" in m["original"]] + by_line[15]
    assert called
    why = [(m["id"], m["status_reason"]) for m in called], report["baseline"]["flaky"]
    assert "NoCoverage" not in {m["status"] for m in called}, why
