"""Process set-up for test processes: Hypothesis is seeded, and only loaded when used."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

_RUN_PYTEST = textwrap.dedent(
    """
    import sys
    import pytest
    from auditor.containment.sandbox import derandomize_hypothesis

    class Configure:
        def pytest_configure(self, config):
            derandomize_hypothesis()

    sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "test_it.py"], plugins=[Configure()]))
    """
)


def _pytest_with_derandomize(tmp_path: Path, test_module: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_it.py").write_text(textwrap.dedent(test_module))
    return subprocess.run(
        [sys.executable, "-c", _RUN_PYTEST], cwd=tmp_path, capture_output=True, text=True
    )


@pytest.mark.slow
def test_a_suite_that_never_uses_hypothesis_does_not_load_it(tmp_path):
    run = _pytest_with_derandomize(
        tmp_path,
        """
        import sys

        def test_hypothesis_is_not_loaded():
            assert "hypothesis" not in sys.modules
        """,
    )
    assert run.returncode == 0, run.stdout


@pytest.mark.slow
def test_a_test_module_importing_hypothesis_gets_it_seeded_without_a_database(tmp_path):
    run = _pytest_with_derandomize(
        tmp_path,
        """
        import hypothesis.core
        from hypothesis import given, settings, strategies as st

        @given(st.integers())
        def test_seeded(x):
            assert test_seeded._hypothesis_internal_use_settings.derandomize
            assert settings.default.database is None
            assert hypothesis.core.global_force_seed == 0
        """,
    )
    assert run.returncode == 0, run.stdout


def test_hypothesis_loaded_through_the_hook_still_reads_its_package_data(tmp_path):
    run = _pytest_with_derandomize(
        tmp_path,
        """
        import importlib.resources

        import hypothesis

        def test_package_data():
            assert importlib.resources.files("hypothesis").joinpath("vendor").is_dir()
        """,
    )
    assert run.returncode == 0, run.stdout
