"""`audit generate`: the fast tier of the two-tier workflow. The fast model writes a first
suite for one module; audit then shows how much of it really checks (`audit` on it), and
`--escalate` has the deep model harden it."""

from __future__ import annotations

import re
from pathlib import Path

from auditor.config import load_config
from auditor.discovery.audit_folder import audit_folder
from auditor.discovery.project import find_rootdir, module_name
from auditor.errors import GenerateError
from auditor.escalation import prompts
from auditor.escalation.hardened import compose, share_files
from auditor.escalation.model import ChatModel, ModelError
from auditor.escalation.proving import check_parses
from auditor.escalation.stage import api_key
from auditor.report import Candidate


def generate(
    source: Path, out_dir: Path | None, model: str | None
) -> tuple[list[Path], int, list[str]]:
    """Write the fast model's suite for `source`, in as few files as its tests share
    without a name clash; returns (files, tests kept, rejections)."""
    if not source.is_file() or source.suffix != ".py":
        raise GenerateError(f"{source} is not a Python file")
    root, _, _ = find_rootdir(source.parent)
    pyproject = root / "pyproject.toml"
    settings = load_config(pyproject if pyproject.is_file() else None, {}).escalation
    key = api_key(settings)
    if not key:
        raise GenerateError(f"no API key: set {settings.api_key_env}")
    relative = source.relative_to(root).as_posix()
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise GenerateError(f"cannot read {relative}: {exc}") from None
    name = module_name(source, (root / "src", root))
    chat = ChatModel.configured(settings, model or settings.fast_model, key)
    try:
        reply = chat.ask(prompts.generate(relative, name, text))
    except ModelError as exc:
        raise GenerateError(str(exc)) from None
    finally:
        chat.close()
    candidates = [
        Candidate(
            id=f"{relative}#0.{number}",
            module=relative,
            origin="model",
            round=0,
            name=proposal.name,
            code=proposal.code,
            stage="generated",
        )
        for number, proposal in enumerate(reply.proposals, start=1)
    ]
    rejected = []
    for candidate in candidates:
        check_parses(candidate)
        if candidate.stage != "parsed":
            rejected.append(f"{candidate.name}: {candidate.reason}")
    kept = [c for c in candidates if c.stage == "parsed"]
    if not kept:
        raise GenerateError(f"{chat.model} wrote no usable test for {relative}")
    if out_dir is None:
        folder = audit_folder(root, "generated")
    else:
        folder = out_dir
        folder.mkdir(parents=True, exist_ok=True)
    slug = re.sub(r"[^A-Za-z0-9]+", "_", relative.removesuffix(".py")).strip("_")
    header = (
        f'"""A first suite for {relative}, written by {chat.model} (audit generate).\n'
        'Not checked: audit it (`audit <this folder>`) before trusting it."""\n'
    )
    paths = []
    for number, group in enumerate(share_files(kept), start=1):
        path = folder / (f"test_{slug}.py" if number == 1 else f"test_{slug}_{number}.py")
        path.write_text(compose(header, group), encoding="utf-8")
        paths.append(path)
    return paths, len(kept), rejected
