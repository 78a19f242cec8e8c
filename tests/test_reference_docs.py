"""The reference pages in docs/reference/ are generated from the models and current."""

import runpy
import subprocess
import sys
from pathlib import Path

from auditor.config import AuditConfig

ROOT = Path(__file__).resolve().parent.parent
GENERATOR = ROOT / "docs" / "generate_reference.py"


def test_the_reference_pages_are_what_the_models_generate():
    done = subprocess.run(
        [sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_check_fails_when_a_page_is_stale_and_writing_makes_it_current(tmp_path):
    generator = runpy.run_path(str(GENERATOR))
    (tmp_path / "configuration.md").write_text("# an old page\n", encoding="utf-8")
    (tmp_path / "report.md").write_text(generator["report_page"](), encoding="utf-8")
    main = generator["main"]
    assert main(["--check"], tmp_path) == 1
    assert (tmp_path / "configuration.md").read_text(encoding="utf-8") == "# an old page\n"
    assert main([], tmp_path) == 0
    assert main(["--check"], tmp_path) == 0


def test_every_configuration_key_is_described():
    page = (ROOT / "docs" / "reference" / "configuration.md").read_text(encoding="utf-8")
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert len(rows) >= len(AuditConfig.model_fields)
    assert [row for row in rows if row.endswith("|  |")] == []
