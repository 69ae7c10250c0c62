"""JSON-shaped data (what an API server returns) as block-style YAML, fast.

PyYAML's emitter is C, but its representer walks every node in Python and costs 0.6 ms for one
pod, half of a `get`. API objects hold only dicts, lists, strings, numbers, booleans and nulls,
so a direct writer suffices: keys in the given order, lists flush under their key as kubectl
prints them, multi-line text as literal blocks. A string is written plain only when YAML would
read it back as that same string (PyYAML's own resolver decides; YAML 1.1, so `yes` and
`2026-01-01` get quotes), otherwise double-quoted with JSON's escapes, which YAML shares.
`yaml.safe_load(dump(x)) == x` holds for every JSON value; the tests check it.

`problem` says what is wrong with a YAML text and where, without the lines around it that
PyYAML's own message quotes: the text may be a Secret's manifest, and the line its password.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import yaml.resolver

_PLAIN = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./:@+=,()' -]*")
# PyYAML's implicit-type rules, typed here since PyYAML's own functions are not.
_resolve: Callable[[type, str, tuple[bool, bool]], str] = yaml.resolver.Resolver().resolve
_STR_TAG = "tag:yaml.org,2002:str"
# Characters YAML will not read raw (non-printable, or line breaks other than \n): never in a
# literal block, escaped in a quoted string.
_RAW_UNSAFE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff"
_LITERAL_OK = re.compile(f"[^{_RAW_UNSAFE}]*")
_ESCAPE = re.compile(f"[{_RAW_UNSAFE}]")
_plain_cache: dict[str, bool] = {}
_QUOTED = re.compile(r"'[^']{3,}'")


def problem(error: yaml.YAMLError) -> str:
    """`error` in words with its line and column, quoting nothing of the text."""
    if not isinstance(error, yaml.MarkedYAMLError):
        return type(error).__name__
    words = ", ".join(w for w in (error.context, error.problem) if w) or "cannot be read"
    mark = error.problem_mark or error.context_mark
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    # A problem may quote the text it met ("the tag '!x'", "handle '!y!'"): keep a character.
    return _QUOTED.sub("'...'", words) + where


def dump(data: Any) -> str:
    """`data` as a YAML document (ends with a newline)."""
    out: list[str] = []
    if isinstance(data, dict) and data:
        _mapping(data, "", out)
    elif isinstance(data, list) and data:
        _sequence(data, "", out)
    else:
        out.append(_scalar(data, "  ") + "\n")  # a literal block's lines indented, even here
    return "".join(out)


def _mapping(data: dict[str, Any], indent: str, out: list[str]) -> None:
    for key, value in data.items():
        label = f"{indent}{_key(str(key))}:"
        if isinstance(value, dict) and value:
            out.append(label + "\n")
            _mapping(value, indent + "  ", out)
        elif isinstance(value, list) and value:
            out.append(label + "\n")
            _sequence(value, indent, out)
        else:
            out.append(f"{label} {_scalar(value, indent + '  ')}\n")


def _sequence(data: list[Any], indent: str, out: list[str]) -> None:
    inner = indent + "  "
    for item in data:
        if isinstance(item, dict) and item:
            # The first key shares the line with the dash; the rest align under it.
            start = len(out)
            _mapping(item, inner, out)
            out[start] = f"{indent}- {out[start][len(inner) :]}"
        elif isinstance(item, list) and item:
            out.append(f"{indent}-\n")
            _sequence(item, inner, out)
        else:
            out.append(f"{indent}- {_scalar(item, inner)}\n")


def _scalar(value: Any, indent: str) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return _string(str(value), indent)


def _float(value: float) -> str:
    if value != value:
        return ".nan"
    if value in (float("inf"), float("-inf")):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    # YAML 1.1 reads a float only with a dot ("1e+20" would come back a string).
    if "e" in text and "." not in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}.0e{exponent}"
    return text


def _string(text: str, indent: str) -> str:
    if _is_plain(text):
        return text
    if "\n" in text and _literal_ok(text):
        return _literal(text, indent)
    return _quoted(text)


def _key(text: str) -> str:
    return text if _is_plain(text) else _quoted(text)


def _quoted(text: str) -> str:
    """JSON's double-quoted form, which YAML reads the same, with what YAML cannot take raw
    escaped (JSON leaves DEL, C1 controls and U+2028/9 alone)."""
    quoted = json.dumps(text, ensure_ascii=False)
    return _ESCAPE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)


def _is_plain(text: str) -> bool:
    known = _plain_cache.get(text)
    if known is None:
        known = bool(
            _PLAIN.fullmatch(text)
            and not text.endswith((" ", ":"))
            and ": " not in text
            and _resolve(yaml.ScalarNode, text, (True, False)) == _STR_TAG
        )
        if len(text) <= 64 and len(_plain_cache) < 50_000:
            _plain_cache[text] = known
    return known


def _literal_ok(text: str) -> bool:
    """A literal block can carry it: no control characters or odd line breaks, and the first
    line does not start with a space (that would need an indentation indicator)."""
    return (
        not text.startswith((" ", "\n")) and "\r" not in text and bool(_LITERAL_OK.fullmatch(text))
    )


def _literal(text: str, indent: str) -> str:
    body = text.rstrip("\n")
    trailing = len(text) - len(body)
    chomp = "-" if trailing == 0 else "" if trailing == 1 else "+"
    lines = body.split("\n") + [""] * (trailing - 1 if trailing > 1 else 0)
    block = "\n".join(f"{indent}{line}" if line else "" for line in lines)
    return f"|{chomp}\n{block}"
