"""Word patterns of the simulated shell: field splitting, globs as regular expressions, `${x#p}`
trimming and path globbing over the files a container shows. Pure functions of text and of a
directory lister; `shellprocess` expands words with them.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

SPLIT, LITERAL, QUOTED, FIELD = "split", "literal", "quoted", "field"
Piece = tuple[str, str]  # (text, how it came: split, literal, quoted; field: a "$@" boundary)


def split(pieces: list[Piece]) -> list[list[Piece]]:
    """Fields of a word: unquoted expansion results split on blanks; quoted text never."""
    fields: list[list[Piece]] = []
    current: list[Piece] = []
    started = False
    for text, how in pieces:
        if how == FIELD:
            fields.append(current)
            current, started = [], True
        elif how != SPLIT:
            current.append((text, how))
            started = True
        else:
            for position, chunk in enumerate(re.split(r"[ \t\n]+", text)):
                if position and started:
                    fields.append(current)
                    current, started = [], False
                if chunk:
                    current.append((chunk, SPLIT))
                    started = True
    if started:
        fields.append(current)
    return fields


def glob_regex(text: str) -> str:
    out: list[str] = []
    position = 0
    while position < len(text):
        char = text[position]
        end = text.find("]", position + 2) if char == "[" else -1
        if char == "*":
            out.append(".*")
        elif char == "?":
            out.append(".")
        elif end > 0:
            inside = text[position + 1 : end]
            negated = inside[:1] in ("!", "^")
            body = re.sub(r"([\\\]^])", r"\\\1", inside[1:] if negated else inside)
            out.append(f"[{'^' if negated else ''}{body}]")
            position = end
        else:
            out.append(re.escape(char))
        position += 1
    return "".join(out)


def trimmed(value: str, pattern: str, op: str) -> str:
    cuts = range(len(value) + 1)
    if op.startswith("#"):
        for cut in reversed(cuts) if op == "##" else cuts:
            if re.fullmatch(pattern, value[:cut], re.DOTALL):
                return value[cut:]
    else:
        for cut in cuts if op == "%%" else reversed(cuts):
            if re.fullmatch(pattern, value[cut:], re.DOTALL):
                return value[:cut]
    return value


def expand_glob(
    pattern: str, entries: Callable[[str], list[str]], is_directory: Callable[[str], bool]
) -> list[str]:
    absolute = pattern.startswith("/")
    paths = ["/" if absolute else ""]
    for component in [c for c in pattern.split("/") if c]:
        regex = glob_regex(component)
        following: list[str] = []
        for base in paths:
            directory = base or "."
            if not re.search(r"[*?[]", component):
                candidate = posixpath.join(base, component) if base else component
                following.append(candidate)
                continue
            if not is_directory(directory):
                continue
            for name in entries(directory):
                if re.fullmatch(regex, name) and (
                    not name.startswith(".") or component.startswith(".")
                ):
                    following.append(posixpath.join(base, name) if base else name)
        paths = following
    return [
        path
        for path in paths
        if path not in ("", "/")
        and posixpath.basename(path) in entries(posixpath.dirname(path) or ".")
    ]
