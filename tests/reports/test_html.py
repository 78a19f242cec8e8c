"""The HTML report as text: self-contained, escaped, deterministic."""

import re
from html import escape
from pathlib import Path

from reports import html as html_renderer
from tests.conftest import run_audit

XSS = "<script>alert(1)</script>"


def test_html_loads_nothing_from_the_network(rendered):
    html = rendered["html"].read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "@import" not in html


def test_user_text_is_escaped_everywhere(rendered):
    html = rendered["html"].read_text()
    assert XSS not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_rerendering_a_saved_report_gives_identical_bytes(rendered, tmp_path):
    again = tmp_path / "again.html"
    result = run_audit("report", str(rendered["json"]), "--html", str(again), cwd=tmp_path)
    assert result.returncode == 1, result.stderr  # the saved gate verdict is FAIL
    assert again.read_bytes() == rendered["html"].read_bytes()


def test_every_output_rerenders_identically(rendered, tmp_path):
    flags = []
    for name in ("markdown", "sarif", "stryker", "junit"):
        flags += [f"--{name}", str(tmp_path / name)]
    run_audit("report", str(rendered["json"]), *flags, cwd=tmp_path)
    for name in ("markdown", "sarif", "stryker", "junit"):
        assert (tmp_path / name).read_bytes() == rendered[name].read_bytes(), name


def test_compare_shows_the_change_since_a_previous_report(rendered, report, tmp_path):
    previous = report.model_copy(deep=True)
    previous.coverage.totals.line_percent = report.coverage.totals.line_percent - 10
    old = tmp_path / "old.json"
    previous.write(old)
    out = tmp_path / "compare.md"
    run_audit(
        "report", str(rendered["json"]), "--markdown", str(out), "--compare", str(old), cwd=tmp_path
    )
    assert "| line coverage |" in out.read_text()
    assert "+10 pts" in out.read_text()


def test_a_file_that_is_not_a_report_is_a_one_line_error(tmp_path):
    bogus = tmp_path / "bogus.json"
    bogus.write_text('{"hello": 1}')
    result = run_audit("report", str(bogus), "--html", str(tmp_path / "x.html"), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("audit: report: ")
    assert "bogus.json is not an audit JSON report" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.html").exists()


def test_an_unwritable_output_path_is_a_one_line_error(rendered, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = run_audit(
        "report", str(rendered["json"]), "--html", str(blocker / "r.html"), cwd=tmp_path
    )
    assert result.returncode == 2
    assert result.stderr.startswith("audit: report: cannot write ")


def test_survivor_cards_show_their_witness_and_checked_test(rendered, report):
    html = rendered["html"].read_text()
    found = [w for w in report.probes.witnesses if w.status == "found" and w.test]
    assert found
    assert html.count('<div class="witness"><b>Witness</b>') == len(
        [w for w in report.probes.witnesses if w.status == "found"]
    )
    assert "suggested test (checked: passes on the original, fails on the mutant)" in html
    assert "def " + found[0].test.split("def ", 1)[1].split("(", 1)[0] in html


def test_probe_findings_are_listed_in_their_own_section(rendered, report):
    html = rendered["html"].read_text()
    section = html.split('<section id="probes">', 1)[1].split("</section>", 1)[0]
    for finding in report.probes.findings:
        assert finding.message.replace("'", "&#39;").split(";")[0] in section
    assert 'data-key="probes"' in html


def test_survivors_are_grouped_by_function_the_largest_group_first(rendered, report):
    from reports.summary import survivor_groups

    groups = survivor_groups(report)
    functions = [g for g in groups if g.function != "<module>"]
    module_level = [g for g in groups if g.function == "<module>"]
    assert functions and module_level  # the stored run has both kinds
    # Functions first, the largest first; module-level code after every function.
    assert groups == functions + module_level
    assert [len(g.survivors) for g in functions] == sorted(
        (len(g.survivors) for g in functions), reverse=True
    )
    html = rendered["html"].read_text()
    section = html[html.index('<section id="survivors-by-function">') :]
    section = section[: section.index("</section>")]
    names = [escape(f"{group.file}::{group.function}") for group in groups]
    assert section.index(names[0]) <= section.index(names[-1])


def test_every_section_is_linked_from_the_nav(rendered):
    html = rendered["html"].read_text()
    nav = html[html.index("<nav>") : html.index("</nav>")]
    sections = re.findall(r'<section id="([\w-]+)"', html)
    assert "survivors-by-function" in sections
    assert [name for name in sections if f'href="#{name}"' not in nav] == []


def _relative_luminance(colour: str) -> float:
    def linear(channel: int) -> float:
        value = channel / 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)


def test_grey_notes_meet_wcag_aa_contrast_on_white():
    css = (Path(html_renderer.__file__).parent / "templates" / "report.css").read_text()
    muted = re.search(r"--muted: (#[0-9a-fA-F]{6})", css)[1]
    contrast = 1.05 / (_relative_luminance(muted) + 0.05)
    assert contrast >= 4.5  # WCAG AA for normal text: the notes are 12 px


def test_the_mutants_table_lists_what_no_test_killed_and_counts_the_rest(rendered, report):
    html = rendered["html"].read_text()
    section = html.split('<section id="mutants">', 1)[1].split("</section>", 1)[0]
    listed = re.findall(r'<tr data-status="(\w+)"', section)
    counts = report.mutation.scores.counts
    not_killed = counts.survived + counts.no_coverage + counts.timeout + counts.runtime_error
    assert counts.killed > 0
    assert len(listed) == not_killed
    assert "Killed" not in listed
    assert f"{counts.killed} killed" in section


def test_source_lines_get_an_id_only_where_another_section_links(rendered, report):
    html = rendered["html"].read_text()
    section = html.split('<section id="source">', 1)[1].split("</section>", 1)[0]
    ids = set(re.findall(r'<tr id="(L-[^"]+)"', section))
    links = set(re.findall(r'href="#(L-[^"]+)"', html))
    assert links and links <= ids
    source_lines = sum(len(text.splitlines()) for text in report.sources.values())
    assert len(ids) < source_lines
