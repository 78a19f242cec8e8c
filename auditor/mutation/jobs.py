"""A planned mutant as the executor's job: what a runner needs to apply it in its
forked child (the compiled function, or the patch and the modules that read it)."""

from __future__ import annotations

import os
import zlib
from typing import Any

from auditor.config import AuditConfig
from auditor.discovery.project import Project
from auditor.mutation.plan import PlannedMutant
from auditor.mutation.protocol import Job, text_digest


def _patch(mutant: PlannedMutant, project: Project) -> dict[str, Any]:
    return {
        "source_digest": text_digest(mutant.source),
        "patch_start": mutant.site.start,
        "patch_end": mutant.site.end,
        "replacement": mutant.site.replacement,
        "rerun_lines": [list(lines) for lines in mutant.rerun_lines],
        "consumers": [
            [
                os.path.realpath(project.root / file),
                project.module_name(project.root / file),
                start,
                end,
            ]
            for file, (start, end) in mutant.consumers
        ],
    }


def job_for(mutant: PlannedMutant, module_name: str, project: Project, config: AuditConfig) -> Job:
    return Job(
        id=mutant.id,
        path=mutant.path,
        file=os.path.realpath(mutant.abs_path),
        module_name=module_name,
        tests=mutant.tests,
        timeout=mutant.timeout,
        target_line=mutant.target[0],
        target_name=mutant.target[1],
        code_b64=Job.encode_code(zlib.decompress(mutant.function_code))
        if mutant.function_code
        else "",
        **(_patch(mutant, project) if mutant.path != "swap" or mutant.subprocess_reach else {}),
        subprocess_tests=mutant.subprocess_tests,
        serve_subprocesses=bool(mutant.subprocess_reach),
        all_killers=config.all_killers,
        timeout_factor=config.mutant_timeout_factor,
        timeout_constant=config.mutant_timeout_constant,
    )
