"""Published JSON Schemas, fetched from the npm registry once and cached: SARIF 2.1.0
(shipped in @microsoft/jest-sarif) and Stryker's mutation-testing-report-schema.

Nothing is vendored; without npm or the registry the schema checks skip with a reason."""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

CACHE = Path.home() / ".cache" / "audit-test-schemas"

SARIF = ("@microsoft/jest-sarif@1.0.0-beta.0", "package/lib/schemas/sarif-2.1.0-rtm.5.json")
STRYKER = (
    "mutation-testing-report-schema@3.8.4",
    "package/src/mutation-testing-report-schema.json",
)


def published_schema(spec: tuple[str, str]) -> dict:
    package, member = spec
    cached = CACHE / (package.replace("/", "_").replace("@", "_") + ".json")
    if not cached.is_file():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip(f"npm is not installed: cannot fetch the schema in {package}")
        CACHE.mkdir(parents=True, exist_ok=True)
        packed = subprocess.run(
            [npm, "pack", package, "--silent", "--pack-destination", str(CACHE)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if packed.returncode != 0:
            pytest.skip(f"npm could not fetch {package}: {packed.stderr.strip()[:200]}")
        archive = CACHE / packed.stdout.strip().splitlines()[-1]
        with tarfile.open(archive) as tar:
            extracted = tar.extractfile(member)
            assert extracted is not None, f"{member} missing from {package}"
            cached.write_bytes(extracted.read())
        archive.unlink()
    return json.loads(cached.read_text(encoding="utf-8"))
