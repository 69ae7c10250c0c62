"""Keeping Secret values out of whatever a tool returns or raises, by value.

Redaction by position (the kube server's `redaction`) hides a Secret's `data` where it stands,
but a value travels: a JSON patch copies it into an annotation, the API server quotes it in an
error ("value at /data/password is ..."), a git file and its history print it as committed. So
each tool call keeps the values of every Secret it touched (`SecretValues`): the live objects it
read, what a dry run answered, the manifest or patch it sent to a Secret, the git files it read.
`new_server` (`tools`) opens one per call (`watching`) and scrubs the call's result or error,
whatever its shape, with it; one place, so no tool can forget. What a tool sends before its
answer (a progress message) goes through `scrubbed`.

A value is sought in every form it takes in text: plain; base64, standard and URL-safe, padded
or not, and at each of the three alignments it takes inside a longer base64 text; JSON- and
repr-escaped, and JSON-escaped twice (a JSON document kept in a JSON string); and, for a value of
several lines, line by line (a YAML literal block indents each one). A value shorter than
MIN_LENGTH is not sought, as it would match ordinary text everywhere; position still hides it. A
value that also spells ordinary text (a name) is hidden there too: better a hidden name than a
shown password.

Fed by `watched` (each answer of the cluster, and each body sent to a Secret) and the gitops
repository (each manifest it reads). Outside a tool call, touching does nothing. Knows no
server; needs only the shape of a Secret (`data`, `stringData`, the last-applied annotation).
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar, cast

from pydantic import BaseModel

T = TypeVar("T")

MIN_LENGTH = 4
HIDDEN = "<redacted Secret value>"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

_CALL: ContextVar[SecretValues | None] = ContextVar("secret_values", default=None)


def marker(value: object) -> str:
    """What stands where a Secret's value was: its length only."""
    return f"<redacted: {len(str(value))} characters>"


class SecretValues:
    """The values of the Secrets one call touched, and scrubbing them out of anything."""

    def __init__(self) -> None:
        self._forms: set[str] = set()
        self._index: dict[str, list[str]] | None = None  # by first MIN_LENGTH characters
        self._lock = threading.Lock()  # engines touch from worker threads

    @classmethod
    def of(cls, *objects: Any, kind: str = "") -> SecretValues:
        """The values of the Secrets among `objects` (Secrets, lists of them, or others; with
        kind="Secret", objects that carry no kind are taken as Secrets)."""
        values = cls()
        for obj in objects:
            values.add_object(obj, kind=kind)
        return values

    def __bool__(self) -> bool:
        return bool(self._forms)

    def add(self, value: str | bytes) -> None:
        new = forms(value) - self._forms
        if new:
            with self._lock:
                self._forms |= new
                self._index = None

    def add_object(self, obj: Any, *, kind: str = "") -> None:
        """The values of `obj` if it is a Secret (or, with kind="Secret", shaped as one: a
        patch), or of the Secrets it lists."""
        for value in _values(obj, kind=kind):
            self.add(value)

    def scrub(self, data: T) -> T:
        """`data` with every form of every value replaced by HIDDEN: strings, and the strings in
        dicts (keys too), lists, tuples and pydantic models (content blocks), rebuilt."""
        if not self._forms:
            return data
        return cast("T", _scrub(data, functools.partial(hide, index=self._indexed())))

    def _indexed(self) -> dict[str, list[str]]:
        with self._lock:
            if self._index is None:
                index: dict[str, list[str]] = {}
                for form in sorted(self._forms, key=len, reverse=True):
                    index.setdefault(form[:MIN_LENGTH], []).append(form)
                self._index = index
            return self._index


@contextmanager
def watching() -> Iterator[SecretValues]:
    """A fresh SecretValues that `touch` feeds until the block ends (one tool call)."""
    values = SecretValues()
    token = _CALL.set(values)
    try:
        yield values
    finally:
        _CALL.reset(token)


def scrubbed(data: T) -> T:
    """`data` scrubbed of what the current call touched so far (as is outside a call): for what
    a tool sends before its answer, such as a progress message."""
    values = _CALL.get()
    return data if values is None else values.scrub(data)


def touch(obj: Any, *, kind: str = "") -> None:
    """Tell the current call about a Secret (or a list of them) it read or sent; else nothing."""
    values = _CALL.get()
    if values is not None:
        values.add_object(obj, kind=kind)


def touch_text(value: str | bytes) -> None:
    """Tell the current call about one value a Secret holds."""
    values = _CALL.get()
    if values is not None:
        values.add(value)


# -- what a Secret holds -----------------------------------------------------------------------


def _values(obj: Any, *, kind: str) -> Iterator[str | bytes]:
    if not isinstance(obj, dict):
        return
    own = str(obj.get("kind") or kind)
    if own == "Secret":
        yield from _secret_values(obj)
    elif isinstance(obj.get("items"), list) and own in ("SecretList", "List", ""):
        for item in obj["items"]:
            yield from _values(item, kind=own.removesuffix("List"))


def _secret_values(secret: dict[str, Any]) -> Iterator[str | bytes]:
    data = secret.get("data")
    if isinstance(data, dict):
        yield from (_decoded(v) for v in data.values() if v is not None)
    plain = secret.get("stringData")
    if isinstance(plain, dict):
        yield from (str(v) for v in plain.values() if v is not None)
    metadata = secret.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    if isinstance(annotations, dict) and isinstance(annotations.get(LAST_APPLIED), str):
        try:
            applied = json.loads(annotations[LAST_APPLIED])
        except ValueError:
            return
        if isinstance(applied, dict):
            yield from _secret_values(applied)


def _decoded(value: object) -> str | bytes:
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        return str(value)


# -- the forms a value takes in text -------------------------------------------------------------


def forms(value: str | bytes) -> set[str]:
    """Every text form of `value` long enough to seek (see the module docstring)."""
    raw = value.encode() if isinstance(value, str) else value
    text = value if isinstance(value, str) else _utf8(raw)
    found: set[str] = set()
    if text is not None:
        lines = text.splitlines() if "\n" in text or "\r" in text else []
        for piece in (text, *lines, *(line.strip() for line in lines)):
            found |= _escaped(piece)
    found |= _base64(raw)
    return {f for f in found if len(f) >= MIN_LENGTH}


def _utf8(raw: bytes) -> str | None:
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return None


def _escaped(text: str) -> set[str]:
    once = json.dumps(text)[1:-1]
    kept = json.dumps(text, ensure_ascii=False)[1:-1]
    return {
        text,
        once,
        kept,
        json.dumps(once)[1:-1],
        json.dumps(kept, ensure_ascii=False)[1:-1],
        repr(text)[1:-1],
    }


def _base64(raw: bytes) -> set[str]:
    found: set[str] = set()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(raw).decode()
        found |= {whole, whole.rstrip("=")}
        # Inside a longer base64 text the value starts at byte 0, 1 or 2 of a 3-byte group:
        # keep the characters that depend on its bytes alone.
        for shift in (0, 1, 2):
            shifted = encode(b"\0" * shift + raw).decode().rstrip("=")
            first, end = -(-8 * shift // 6), 8 * (shift + len(raw)) // 6
            found.add(shifted[first:end])
    return found


def hide(text: str, *, index: dict[str, list[str]]) -> str:
    """`text` with each place a form begins (looked up by its first MIN_LENGTH characters, the
    longest form first) replaced by HIDDEN; overlapping finds are hidden as one. One pass, at
    dict-lookup speed whatever the number of forms (a regex of thousands is seconds to build)."""
    found: list[tuple[int, int]] = []
    for start in range(len(text) - MIN_LENGTH + 1):
        for form in index.get(text[start : start + MIN_LENGTH], ()):
            if text.startswith(form, start):
                found.append((start, start + len(form)))
                break
    if not found:
        return text
    out, kept_to = [], 0
    for start, end in found:
        if start >= kept_to:
            out += [text[kept_to:start], HIDDEN]
        kept_to = max(kept_to, end)
    return "".join(out) + text[kept_to:]


def _scrub(data: Any, hidden: Callable[[str], str]) -> Any:
    if isinstance(data, str):
        return hidden(data)
    if isinstance(data, dict):
        return {_scrub(k, hidden): _scrub(v, hidden) for k, v in data.items()}
    if isinstance(data, list):
        return [_scrub(item, hidden) for item in data]
    if isinstance(data, tuple):
        return tuple(_scrub(item, hidden) for item in data)
    if isinstance(data, BaseModel):  # a content block: its text, never its `type`
        fields = [name for name in type(data).model_fields if name != "type"]
        return data.model_copy(update={k: _scrub(getattr(data, k), hidden) for k in fields})
    return data
