"""The one wire style of the processes audit starts (the baseline's test process, the
engine's runners, the probe processes).

What crosses is a plain dataclass of the stage's `protocol` module, as JSON: a spec the
child reads at its start (a file, or the runner's first line), then one message per
line either way. Plain dataclasses keep pydantic (its memory and import time) out of
the processes that do not need it: a runner forks a child per mutant, and the baseline
runs the user's suite.

Reading takes one of two ways, by who wrote the text:
- `decode`, for everything a child sends back: the child runs untrusted code, so each
  field is checked (pydantic, loaded in audit anyway) and a message that is not one
  raises ValueError;
- `build`, for a flat spec or job audit itself wrote, read in a child that keeps
  pydantic out."""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path
from typing import Any, TypeVar

Message = TypeVar("Message")


def encode(message: Any) -> str:
    """One line of JSON; report models a probe result carries are dumped as the report
    dumps them."""
    return json.dumps(message, default=_fields)


def write(path: Path, spec: Any) -> None:
    path.write_text(encode(spec), encoding="utf-8")


def build(kind: type[Message], text: str | bytes) -> Message:
    """A flat dataclass from audit's own JSON, unchecked."""
    return kind(**json.loads(text))


def decode(kind: Any, text: str | bytes) -> Any:
    """`kind` (a dataclass, or a union of them) from JSON, checked field by field."""
    return _adapter(kind).validate_json(text)


def check(kind: Any, data: Any) -> Any:
    """`kind` from JSON already parsed (a cache entry, a Dask result), checked."""
    return _adapter(kind).validate_python(data)


def _fields(value: Any) -> Any:
    """What JSON cannot hold itself: a dataclass's fields (the ones it holds are met
    in turn), a report model's dump."""
    if dataclasses.is_dataclass(value):
        return vars(value)
    dump = getattr(value, "model_dump", None)
    if dump is None:
        raise TypeError(f"{type(value).__name__} cannot be sent to or from a child")
    return dump(mode="json")


@functools.cache
def _adapter(kind: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(kind)
