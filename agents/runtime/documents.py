"""Markdown files with YAML front matter (`AGENTS.md`, `SKILL.md`): split, parsed, located.

Both are data a person edits, so a malformed file is refused with its path and what is wrong,
never half-read. This module knows the file format only, not what the fields mean.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from agents.runtime.errors import AgentError

# The repository's data folders: agents/<role>/AGENTS.md and skills/<name>/SKILL.md.
AGENTS_DIR = Path(__file__).resolve().parents[1]
SKILLS_DIR = AGENTS_DIR.parent / "skills"


class DocumentError(AgentError):
    """A role or skill file is malformed; the message names the file and the field."""


def read(path: Path) -> tuple[dict[str, Any], str]:
    """The front matter (a mapping) and the Markdown body of `path`."""
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        raise DocumentError(f"{path}: must start with a '---' line opening its front matter")
    head, sep, body = text[4:].partition("\n---\n")
    if not sep:
        raise DocumentError(f"{path}: the front matter is not closed by a '---' line")
    try:
        meta = yaml.safe_load(head)
    except yaml.YAMLError as exc:
        raise DocumentError(f"{path}: the front matter is not YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise DocumentError(f"{path}: the front matter must be a mapping of fields")
    return meta, body.strip()


def text_field(meta: dict[str, Any], name: str, path: Path) -> str:
    value = meta.get(name)
    if not isinstance(value, str) or not value.strip():
        raise DocumentError(f"{path}: field {name!r} must be a non-empty string")
    return value.strip()


def list_field(meta: dict[str, Any], name: str, path: Path) -> tuple[str, ...]:
    value = meta.get(name)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise DocumentError(f"{path}: field {name!r} must be a non-empty list of strings")
    return tuple(value)
