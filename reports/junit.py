"""JUnit XML: one testcase per gate condition, so any CI's test view shows the gate."""

from __future__ import annotations

from xml.etree import ElementTree

from auditor.report import Report


def render(report: Report, previous: Report | None = None) -> str:
    conditions = report.gate.conditions
    failures = sum(not condition.passed for condition in conditions)
    suites = ElementTree.Element("testsuites", name="audit")
    suite = ElementTree.SubElement(
        suites,
        "testsuite",
        name="audit quality gate",
        tests=str(len(conditions) + 1),
        failures=str(failures + (report.status != "complete")),
        errors="0",
        skipped="0",
    )
    complete = ElementTree.SubElement(suite, "testcase", classname="audit.gate", name="run")
    if report.status != "complete":
        ElementTree.SubElement(
            complete, "failure", message="the run is incomplete", type="incomplete"
        ).text = "The audit stopped before every stage finished; its numbers are partial."
    for condition in conditions:
        case = ElementTree.SubElement(
            suite, "testcase", classname="audit.gate", name=condition.name
        )
        if not condition.passed:
            ElementTree.SubElement(
                case, "failure", message=condition.message, type="threshold"
            ).text = f"actual {condition.actual:g}, threshold {condition.threshold:g}"
        else:
            ElementTree.SubElement(case, "system-out").text = condition.message
    ElementTree.indent(suites)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        + ElementTree.tostring(suites, encoding="unicode")
        + "\n"
    )
