"""The HTML report in a real headless Chromium (Debian's `chromium`, driven by Playwright):
what a QA lead sees and clicks. Skips with the reason when no browser is installed (fails
instead where AUDIT_TEST_REQUIRE names chromium, as in CI)."""

import shutil

import pytest
from playwright import sync_api

from reports import html as html_renderer
from tests.conftest import needs

pytestmark = pytest.mark.slow

XSS = "<script>alert(1)</script>"
_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser():
    needs("chromium")
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=_FLAGS)
        yield browser
        browser.close()


@pytest.fixture
def open_report(browser):
    pages = []

    def open_(path):
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.dialogs = []
        page.errors = []
        page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
        page.on("pageerror", lambda error: page.errors.append(str(error)))
        page.goto(path.as_uri())
        pages.append(page)
        return page

    yield open_
    for page in pages:
        page.close()


def visible_column(page, table: str, index: int) -> list[str]:
    return page.eval_on_selector_all(
        f"#{table} tbody tr:not([hidden])",
        f"rows => rows.map(row => row.cells[{index}].textContent.trim())",
    )


def test_the_verdict_and_the_failed_condition_are_visible(open_report, rendered):
    page = open_report(rendered["html"])
    assert page.locator("#verdict .verdict").inner_text() == "FAIL"
    assert "min_mutation_score" in page.locator("#verdict .reasons").inner_text()
    assert page.errors == []


def test_headline_numbers_are_visible(open_report, rendered, report):
    page = open_report(rendered["html"])
    coverage = page.locator('.figure[data-key="line_coverage"] .value').inner_text()
    score = page.locator('.figure[data-key="mutation_score"] .value').inner_text()
    assert coverage == f"{report.coverage.totals.line_percent:.1f}%"
    assert score == f"{report.mutation.scores.score:.1f}%"


def test_a_surviving_mutant_link_opens_its_line_with_the_diff(open_report, rendered, report):
    page = open_report(rendered["html"])
    page.select_option("select[data-status-filter]", "Survived")
    link = page.locator("#mutants-table tbody tr:not([hidden]) a").first
    target = link.inner_text()
    link.click()
    path, line = target.rsplit(":", 1)
    row = page.locator(f'[id="L-{path}-{line}"]')
    assert row.is_visible()
    card = page.locator(f'[id="src-{path}"] .mutant-card').first
    assert card.is_visible()
    assert "Survived" in card.inner_text()


def test_sorting_a_column_orders_its_rows_both_ways(open_report, rendered):
    page = open_report(rendered["html"])
    header = page.locator("#mutants-table thead th", has_text="operator")
    header.click()
    ascending = visible_column(page, "mutants-table", 2)
    assert ascending == sorted(ascending)
    header.click()
    descending = visible_column(page, "mutants-table", 2)
    assert descending == sorted(descending, reverse=True)


def test_filtering_by_status_and_text_hides_other_rows(open_report, rendered, report):
    page = open_report(rendered["html"])
    page.select_option("select[data-status-filter]", "Survived")
    statuses = visible_column(page, "mutants-table", 4)
    survivors = [m for m in report.mutation.mutants if m.status == "Survived"]
    assert statuses == ["Survived"] * len(survivors)
    page.fill('input[data-filter="mutants-table"]', "escape_free_join")
    functions = visible_column(page, "mutants-table", 1)
    assert functions and set(functions) == {"escape_free_join"}


def test_script_in_test_names_and_source_stays_text(open_report, rendered):
    page = open_report(rendered["html"])
    page.locator("details#src-markup\\/render\\.py > summary").click()
    assert XSS in page.locator("#tests-table").inner_text()
    assert XSS in page.locator('[id="src-markup/render.py"]').inner_text()
    assert page.dialogs == []
    assert page.evaluate("document.querySelectorAll('script').length") == 1


def test_five_thousand_mutants_load_paged(open_report, report, tmp_path):
    template = report.mutation.mutants[0]
    many = report.model_copy(deep=True)
    many.mutation.mutants = [
        template.model_copy(update={"id": f"{template.id}-{n:05d}", "line": 1 + n % 12})
        for n in range(5000)
    ]
    path = tmp_path / "many.html"
    path.write_text(html_renderer.render(many), encoding="utf-8")
    page = open_report(path)
    assert len(visible_column(page, "mutants-table", 0)) == 100
    assert "page 1 of 50 (5000 rows)" in page.locator("#mutants .pager").inner_text()
    page.locator("#mutants .pager button", has_text="next").click()
    assert "page 2 of 50" in page.locator("#mutants .pager").inner_text()
    assert page.errors == []


def test_without_thresholds_the_banner_shows_the_rating(open_report, report, tmp_path):
    unjudged = report.model_copy(
        update={"gate": report.gate.model_copy(update={"conditions": [], "verdict": "pass"})}
    )
    path = tmp_path / "rated.html"
    path.write_text(html_renderer.render(unjudged))
    page = open_report(path)
    assert page.locator("#verdict .verdict").inner_text() == report.gate.rating.level.upper()
    assert "rated by the evidence" in page.locator("#verdict").inner_text()
    assert page.errors == []


def test_the_evidence_sections_are_visible_and_sortable(open_report, rendered, report):
    page = open_report(rendered["html"])
    assert page.locator("#survivor-groups tbody tr").first.is_visible()
    assert page.locator("#checks-table tbody tr").count() == len(report.mutation.checks)
    page.locator("#checks-table th", has_text="caught").first.click()
    assert page.errors == []


def test_a_table_sorts_from_the_keyboard(open_report, rendered):
    page = open_report(rendered["html"])
    header = page.locator("#mutants-table thead th").first
    header.focus()
    assert page.evaluate("document.activeElement.tagName") == "TH"
    page.keyboard.press("Enter")
    assert header.get_attribute("aria-sort") == "ascending"
    page.keyboard.press(" ")
    assert header.get_attribute("aria-sort") == "descending"
    assert page.errors == []


def test_every_header_is_reached_with_tab(open_report, rendered):
    page = open_report(rendered["html"])
    headers = page.eval_on_selector_all(
        "table.sortable thead th", "cells => cells.map(c => c.tabIndex)"
    )
    assert headers
    assert set(headers) == {0}


def test_every_table_fits_a_1400_pixel_window(open_report, report, tmp_path):
    # Real projects have long test ids without a space to break at (parametrized ids,
    # nested classes): one such id in every table that names tests.
    long_id = "tests/test_schema.py::TestNested::test_" + "_".join(["nested_field"] * 20)
    tests = [report.baseline.tests[0].model_copy(update={"nodeid": long_id})]
    tests += report.baseline.tests[1:]
    baseline = report.baseline.model_copy(update={"tests": tests})
    path = tmp_path / "report.html"
    path.write_text(html_renderer.render(report.model_copy(update={"baseline": baseline})))
    page = open_report(path)
    page.set_viewport_size({"width": 1400, "height": 900})
    for details in page.query_selector_all("details"):
        details.evaluate("element => { element.open = true; }")
    widths = page.eval_on_selector_all(
        "table", "tables => tables.map(t => Math.ceil(t.getBoundingClientRect().right))"
    )
    assert widths
    assert max(widths) <= 1400
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400


def test_the_first_screen_names_the_tests_worth_writing_first(open_report, rendered, report):
    from reports.summary import survivor_groups

    page = open_report(rendered["html"])
    page.set_viewport_size({"width": 1400, "height": 900})
    first = page.query_selector("#first-tests")
    assert first.is_visible()
    assert first.bounding_box()["y"] < 900
    top = survivor_groups(report)[0]
    assert f"{top.file}::{top.function}" in first.inner_text()
