"""Every output of a real audit validates against its published schema or format."""

import json
from xml.etree import ElementTree

import jsonschema

from auditor.report import Report
from tests.schemas import SARIF, STRYKER, published_schema


def test_stryker_json_validates_against_the_mutation_testing_report_schema(rendered):
    document = json.loads(rendered["stryker"].read_text())
    jsonschema.validate(document, published_schema(STRYKER))


def test_stryker_json_lists_every_mutant_with_its_tests(rendered, report):
    files = json.loads(rendered["stryker"].read_text())["files"]
    mutants = {m["id"]: m for file in files.values() for m in file["mutants"]}
    assert set(mutants) == {m.id for m in report.mutation.mutants}
    names = {
        test["id"]: f"{path}::{test['name']}"
        for path, tests in json.loads(rendered["stryker"].read_text())["testFiles"].items()
        for test in tests["tests"]
    }
    killed = next(m for m in report.mutation.mutants if m.status == "Killed")
    assert [names[i] for i in mutants[killed.id]["killedBy"]] == killed.killed_by
    assert [names[i] for i in mutants[killed.id]["coveredBy"]] == killed.covered_by
    assert files["markup/render.py"]["source"] == report.sources["markup/render.py"]


def test_stryker_locations_point_at_the_original_text(rendered, report):
    files = json.loads(rendered["stryker"].read_text())["files"]
    source = report.sources["markup/render.py"].splitlines()
    originals = {m.id: m.original for m in report.mutation.mutants}
    mutants = files["markup/render.py"]["mutants"]
    assert mutants
    for mutant in mutants:
        start, end = mutant["location"]["start"], mutant["location"]["end"]
        lines = source[start["line"] - 1 : end["line"]]
        before_last_line = sum(len(line) + 1 for line in lines[:-1])
        text = "\n".join(lines)[start["column"] - 1 : before_last_line + end["column"] - 1]
        assert text == originals[mutant["id"]], mutant["id"]


def test_sarif_validates_against_the_sarif_2_1_0_schema(rendered):
    document = json.loads(rendered["sarif"].read_text())
    jsonschema.Draft4Validator(published_schema(SARIF)).validate(document)


def test_sarif_has_a_result_per_survivor_and_smell(rendered, report):
    results = json.loads(rendered["sarif"].read_text())["runs"][0]["results"]
    survivors = [m for m in report.mutation.mutants if m.status == "Survived"]
    by_rule = [result["ruleId"] for result in results]
    assert by_rule.count("AM001") == len(survivors)
    assert sorted(r for r in by_rule if r.startswith("AT")) == sorted(
        smell.code for smell in report.smells.findings
    )


def test_junit_has_one_testcase_per_gate_condition(rendered, report):
    suite = ElementTree.parse(rendered["junit"]).getroot().find("testsuite")
    names = [case.get("name") for case in suite.findall("testcase")]
    assert names == ["run", *[condition.name for condition in report.gate.conditions]]
    cases = suite.findall("testcase")
    failed = [case.get("name") for case in cases if case.find("failure") is not None]
    assert failed == ["min_mutation_score"]
    assert suite.get("failures") == "1"


def test_markdown_gives_the_verdict_the_reason_and_the_survivors(rendered, report):
    text = rendered["markdown"].read_text()
    assert text.startswith("## audit: FAIL")
    assert "min_mutation_score" in text
    first = min(
        (m for m in report.mutation.mutants if m.status == "Survived"),
        key=lambda m: (m.file, m.line, m.col, m.id),
    )
    assert f"`{first.file}:{first.line}`" in text


def test_markdown_tables_are_not_broken_by_pipes_or_newlines_in_user_text(report):
    from reports import markdown

    edited = report.model_copy(deep=True)
    edited.smells.findings[0].message = "left | right\nnext line"
    row = next(line for line in markdown.render(edited).splitlines() if "left" in line)
    assert row.replace("\\|", "").count("|") == 4  # three cells
    assert "next line" in row


def test_terminal_warns_when_nothing_bounds_the_sandboxes_processes(report):
    from rich.console import Console

    from auditor.containment import pids
    from reports import terminal

    def sandbox_lines(reason: str, bounded: bool) -> list[str]:
        edited = report.model_copy(deep=True)
        edited.sandbox.level, edited.sandbox.reason = "os", reason
        edited.sandbox.processes_bounded = bounded
        console = Console(record=True, width=200)
        terminal.render(edited, console)
        return [line for line in console.export_text().splitlines() if "sandbox:" in line]

    assert sandbox_lines(f"namespaces; {pids.UNBOUNDED}", bounded=False) == [
        f"sandbox: os (namespaces; {pids.UNBOUNDED})"
    ]
    assert sandbox_lines("namespaces; at most 1024 tasks per sandbox (pids cgroup)", True) == []


def test_terminal_names_a_test_file_the_smell_check_could_not_read(report):
    from rich.console import Console

    from auditor.report import CollectionError
    from reports import terminal

    edited = report.model_copy(deep=True)
    edited.smells.unparsable = [
        CollectionError(file="tests/test_latin.py", line=1, message="invalid encoding")
    ]
    console = Console(record=True, width=200)
    terminal.render(edited, console)
    assert "smells: tests/test_latin.py:1 not analysed: invalid encoding" in (console.export_text())


def test_terminal_folds_long_locations_and_inputs_instead_of_cutting_them(report):
    from rich.console import Console

    from auditor.report import ProbeFinding
    from reports import terminal

    edited = report.model_copy(deep=True)
    location = "src/package/with/a/rather/deep/module_path_name.py"
    call = "parse_the_long_function_name(" + ", ".join(f"'{n:03d}'" for n in range(30)) + ")"
    finding = ProbeFinding(
        kind="unhandled_crash",
        file=location,
        function="parse",
        line=1234,
        message="ValueError at " + location + ":1240",
        input=call,
        observed="raised ValueError",
    )
    assert edited.probes is not None, "the markup fixture's run probes"
    edited.probes.findings = [finding]
    console = Console(record=True, width=80)
    terminal.render(edited, console)
    lines = console.export_text().split("probe findings", 1)[1].splitlines()
    rows = [line.split("│") for line in lines if line.startswith("│")]

    def column(index: int) -> str:  # a folded cell's lines, joined back up
        return "".join(row[index].strip() for row in rows if len(row) > 3)

    assert f"{location}:1234" in column(1)
    assert "".join(call.split()) in "".join(column(3).split())


def test_a_sampled_run_shows_the_estimates_scores_everywhere(report):
    from rich.console import Console

    from auditor.report import Estimate
    from reports import terminal
    from reports.summary import figures

    edited = report.model_copy(deep=True)
    edited.mutation.estimate = Estimate(
        sampled=60, population=400, seed=0, score=88.1, score_low=80.0, score_high=93.0,
        covered_score=90.2, covered_low=83.0, covered_high=95.0, survived=47.6,
        survived_high=80.0,
    )  # fmt: skip
    shown = {figure.key: figure.value for figure in figures(edited)}
    assert (shown["mutation_score"], shown["covered_score"], shown["surviving"]) == (
        88.1,
        90.2,
        48,
    )
    console = Console(record=True, width=200)
    terminal.render(edited, console)
    text = console.export_text()
    assert "mutation score (ESTIMATE)" in text
    assert "88.1%" in text


def test_terminal_and_markdown_list_the_same_first_survivors(report):
    import re

    from rich.console import Console

    from reports import markdown, terminal

    # Mutants listed in an order that is not their place in the code, as ids may be.
    listed_backwards = report.mutation.model_copy(
        update={"mutants": list(reversed(report.mutation.mutants))}
    )
    report = report.model_copy(update={"mutation": listed_backwards})
    console = Console(record=True, width=200)
    terminal.render(report, console)
    text = console.export_text()
    table = text.split("surviving mutants (first 10)", 1)[1]
    shown = re.findall(r"│ (\S+:\d+) +│", table.split("└", 1)[0])
    listed = re.findall(r"^\| `(\S+:\d+)` \|", markdown.render(report), re.M)
    assert len(shown) == 10
    assert shown == listed[:10]


def test_the_json_stores_each_set_of_covering_tests_once(report, tmp_path):
    path = tmp_path / "report.json"
    report.write(path)
    written = json.loads(path.read_text(encoding="utf-8"))["mutation"]
    covered = [m for m in report.mutation.mutants if m.covered_by]
    distinct = {tuple(m.covered_by) for m in covered}
    assert len(covered) > len(distinct)  # mutants on one line share their tests
    assert len(written["coverage_sets"]) == len(distinct)
    assert all("covered_by" not in m for m in written["mutants"])
    assert Report.read(path).mutation.mutants == report.mutation.mutants


def test_terminal_and_html_say_what_the_type_check_saved(report):
    from rich.console import Console

    from auditor.report import TypeCheckSummary
    from reports import html, terminal

    edited = report.model_copy(deep=True)
    edited.mutation.type_check = TypeCheckSummary(
        checker="mypy", checked=30, rejected=12, duration=0.5, cached=30, saved=2.5
    )
    console = Console(record=True, width=400)
    terminal.render(edited, console)
    assert (
        "mypy rejected 12 of 30 function mutants in 0.5s, 30 checked ahead, ~2.5s of runs saved"
        in console.export_text()
    )
    assert "running them would have taken about 2.5s" in html.render(edited)
