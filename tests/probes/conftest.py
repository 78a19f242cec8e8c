"""Fixtures of the probe tests."""

from __future__ import annotations

import contextlib
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


@pytest.fixture(autouse=True)
def local_constants_collected() -> None:
    """Hypothesis collects, at its first draw, the constants of every module it takes
    for the user's code: here every test module of the suite. A probe test that forks
    (`child._run_forked`) would collect them all again in each fork, under the fork's
    memory limit (a fork in CI segfaulted there, its stack out of address space).
    Collected here, in the test's process, as the probe process collects them once
    (`child._warm_hypothesis`): a fork then reads only the test's own module."""
    from hypothesis.internal.conjecture import providers

    with contextlib.suppress(AttributeError):  # a private function: may go in a release
        providers._get_local_constants()
