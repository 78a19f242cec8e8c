"""Renderers: each reads a finished `auditor.report.Report` and writes one format."""
