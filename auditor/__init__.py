"""audit: a quality auditor for machine-generated pytest suites."""

__version__ = "0.1.0"
