"""Fixtures of the probe tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import source_module


@pytest.fixture
def module(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, Path]]:
    """The test file's `SOURCE` as an importable module of its own: (name, path)."""
    name, path = source_module(request.module.SOURCE, tmp_path, monkeypatch)
    yield name, path
    sys.modules.pop(name, None)
