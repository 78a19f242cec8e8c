"""Renderers: each reads a finished `auditor.report.Report` and writes one format.

Every file format is `render(report, previous=None) -> str`, a pure function of the
report (and of the previous report, for the formats that show the change since it);
`terminal.render` writes to a rich console instead."""
