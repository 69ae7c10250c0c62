"""One kind's objects as a watch keeps them, answering a GET as the API server would.

Objects are kept as compact JSON without `metadata.managedFields` (often half an object's size;
no read shows them), each beside its labels and the few fields a field selector may name. A
list is selected on those without decoding anything, then answered by joining the kept bytes
into the list's JSON and decoding that once: every caller gets objects of its own to change
while the cache's stay as they were, and 50,000 pods cost the memory of their JSON, not that of
Python dicts.

Lists come sorted by namespace and name, as the API server's, paged by `limit` with a continue
token of this store's own (a token from elsewhere is not answered here) and `remainingItemCount`.

Versions: the store's is the last resourceVersion its watch delivered (a BOOKMARK's too), and
`caught_up` waits for it to pass one the server saw elsewhere. An object's version only moves
forward: a write made through this server is kept at once from the
API server's answer (`written`), and an older watch event that arrives after it does not undo
it. A write whose answer is not the object (a `/scale`, an eviction, a delete) makes the object
`unsettled` until the watch shows it changed, or `SETTLE_S` passed: reads of it go to the API
server meanwhile, so a server reads its own writes.
"""

from __future__ import annotations

import base64
import bisect
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import orjson

from core.connection import Json

Key = tuple[str, str]  # (namespace, or "" when cluster-scoped; name)
Match = Callable[[Key, "Entry"], bool]

CONTINUE_PREFIX = "kubecrew-cache:"
_KEY_FIELDS = {"metadata.namespace": 0, "metadata.name": 1}  # answered from the key
SETTLE_S = 5.0  # how long an object written without its new state in hand is read afresh


@dataclass(frozen=True)
class Kind:
    """A kind the cache may keep: where its collection is, and the fields a selector names."""

    prefix: str  # "/api/v1", "/apis/apps/v1"
    plural: str
    kind: str
    namespaced: bool = True
    fields: tuple[str, ...] = ()  # field-selector paths beyond metadata.name and namespace
    summary: Callable[[Json], tuple[object, ...]] | None = None  # kept beside each object

    @property
    def api_version(self) -> str:
        return self.prefix.removeprefix("/api/").removeprefix("/apis/")

    def path(self, namespace: str | None) -> str:
        where = f"/namespaces/{namespace}" if namespace and self.namespaced else ""
        return f"{self.prefix}{where}/{self.plural}"


@dataclass(frozen=True, slots=True)
class Entry:
    version: str
    blob: bytes
    labels: Mapping[str, str]
    fields: Mapping[str, str]
    summary: tuple[object, ...] | None = None  # the kind's summary of the object, if it has one


class Store:
    def __init__(self, kind: Kind) -> None:
        self.kind = kind
        self.version = ""
        self.size = 0  # bytes of kept JSON
        self._objects: dict[str, dict[str, Entry]] = {}  # namespace -> name -> entry
        self._order: dict[str, list[str]] = {}  # namespace -> sorted names, made when asked
        self._unsettled: dict[Key, tuple[str, float]] = {}  # key -> (version written, when)
        self._lock = threading.Lock()
        self._moved = threading.Condition(threading.Lock())  # the version moved on

    def __len__(self) -> int:
        return sum(len(names) for names in self._objects.values())

    # -- what the watch and this server's writes bring ------------------------------------------

    def replace(self, items: Iterable[Json], version: str | Callable[[], str]) -> None:
        """The whole state, from a list: `items` may come page by page (each page's objects
        are kept as JSON and let go before the next is read), and `version` once they have."""
        objects: dict[str, dict[str, Entry]] = {}
        size = 0
        for obj in items:
            namespace, name = _key(obj)
            entry = self._entry(obj)
            objects.setdefault(namespace, {})[name] = entry
            size += len(entry.blob)
        with self._lock:
            self._objects, self._order, self.size = objects, {}, size
            self._unsettled.clear()
        with self._moved:
            self.version = version() if callable(version) else version
            self._moved.notify_all()

    def apply(self, event: str, obj: Json) -> None:
        """One watch event: ADDED, MODIFIED, DELETED or BOOKMARK."""
        version = _version(obj)
        if event != "BOOKMARK":
            key = _key(obj)
            with self._lock:
                self._settle(key, version)
                if event == "DELETED":
                    self._drop(key)
                else:
                    self._keep(key, obj)
        if version:
            with self._moved:
                self.version = version
                self._moved.notify_all()

    def caught_up(self, version: int, timeout: float) -> bool:
        """Whether this store has seen everything up to `version`, waiting up to `timeout` s for
        its watch to get there (a store whose kind is quiet may not: its version stays put)."""
        with self._moved:
            return self._moved.wait_for(lambda: _number(self.version) >= version, timeout)

    def written(self, obj: Json) -> None:
        """The API server's answer to a write of this kind's object: kept now."""
        key = _key(obj)
        with self._lock:
            self._keep(key, obj)
            self._unsettled.pop(key, None)

    def unsettle(self, key: Key, version: str) -> None:
        """A write changed `key` to `version` ("" unknown) without handing back its state."""
        with self._lock:
            self._unsettled[key] = (version, time.monotonic())

    def _keep(self, key: Key, obj: Json) -> None:
        namespace, name = key
        names = self._objects.setdefault(namespace, {})
        current = names.get(name)
        if current is not None and _older(_version(obj), current.version):
            return  # this server's write already showed a later state
        entry = self._entry(obj)
        names[name] = entry
        self.size += len(entry.blob) - (len(current.blob) if current else 0)
        if current is None:
            self._order.pop(namespace, None)

    def _drop(self, key: Key) -> None:
        namespace, name = key
        current = self._objects.get(namespace, {}).pop(name, None)
        if current is not None:
            self.size -= len(current.blob)
            self._order.pop(namespace, None)

    def _settle(self, key: Key, version: str) -> None:
        """A watch event for `key` settles a write it shows (or a later change)."""
        written = self._unsettled.get(key)
        if written is not None and not _older(version, written[0]):
            del self._unsettled[key]

    def _entry(self, obj: Json) -> Entry:
        metadata = dict(obj.get("metadata") or {})
        metadata.pop("managedFields", None)
        kept = {"apiVersion": self.kind.api_version, "kind": self.kind.kind, **obj}
        kept["metadata"] = metadata
        fields = {path: _field(kept, path) for path in self.kind.fields}
        labels = metadata.get("labels") or {}
        summary = self.kind.summary(kept) if self.kind.summary is not None else None
        version = str(metadata.get("resourceVersion") or "")
        return Entry(version, orjson.dumps(kept), labels, fields, summary)

    # -- answers ---------------------------------------------------------------------------------

    def settled(self, key: Key | None = None) -> bool:
        """Whether no write of this server is still on its way to `key` (None: to any object)."""
        with self._lock:
            now = time.monotonic()
            for stale in [k for k, (_, when) in self._unsettled.items() if now - when > SETTLE_S]:
                del self._unsettled[stale]
            return not self._unsettled if key is None else key not in self._unsettled

    def summaries(self) -> list[tuple[Key, tuple[object, ...]]]:
        """Every object's summary (the kind's `summary`), by key, in no particular order."""
        with self._lock:
            return [
                ((space, name), entry.summary)
                for space, names in self._objects.items()
                for name, entry in names.items()
                if entry.summary is not None
            ]

    def get(self, key: Key) -> Json | None:
        namespace, name = key
        entry = self._objects.get(namespace, {}).get(name)
        return None if entry is None else dict(orjson.loads(entry.blob))

    def listing(
        self,
        namespace: str | None,
        match: Match | None = None,
        *,
        limit: int = 0,
        after: Key | None = None,
    ) -> Json:
        """The list answer: objects in `namespace` (None: all) that `match` (None: all), from
        after `after`, at most `limit` (0: all) with the continue token and count of the rest."""
        blobs: list[bytes] = []
        remaining = 0
        last: Key | None = None
        with self._lock:
            for space in self._spaces(namespace, after):
                names, order = self._objects.get(space, {}), self._sorted(space)
                start = bisect.bisect_right(order, after[1]) if after and after[0] == space else 0
                for at in range(start, len(order)):
                    if limit and len(blobs) == limit and match is None:
                        remaining += len(order) - at  # the rest of this namespace, uncounted
                        break
                    entry = names[order[at]]
                    if match is not None and not match((space, order[at]), entry):
                        continue
                    if limit and len(blobs) == limit:
                        remaining += 1
                        continue
                    blobs.append(entry.blob)
                    last = (space, order[at])
            version = self.version
        metadata: Json = {"resourceVersion": version}
        if remaining and last is not None:
            metadata["continue"] = continue_token(last)
            metadata["remainingItemCount"] = remaining
        head = {"apiVersion": self.kind.api_version, "kind": f"{self.kind.kind}List"}
        opening = orjson.dumps({**head, "metadata": metadata})[:-1]
        return dict(orjson.loads(opening + b',"items":[' + b",".join(blobs) + b"]}"))

    def _spaces(self, namespace: str | None, after: Key | None) -> list[str]:
        if namespace is not None:
            return [namespace]
        return [space for space in sorted(self._objects) if after is None or space >= after[0]]

    def _sorted(self, namespace: str) -> list[str]:
        order = self._order.get(namespace)
        if order is None:
            order = self._order[namespace] = sorted(self._objects.get(namespace, {}))
        return order


# -- continue tokens and selectors ----------------------------------------------------------------


def continue_token(last: Key) -> str:
    return CONTINUE_PREFIX + base64.urlsafe_b64encode(orjson.dumps(list(last))).decode()


def after_token(token: str) -> Key | None:
    """Where a continue token of this store resumes; None when it is not one of ours."""
    if not token.startswith(CONTINUE_PREFIX):
        return None
    try:
        namespace, name = orjson.loads(base64.urlsafe_b64decode(token[len(CONTINUE_PREFIX) :]))
    except (ValueError, TypeError):
        return None
    return str(namespace), str(name)


_TERM = re.compile(
    r"^\s*(?P<neg>!)?\s*(?P<key>[A-Za-z0-9_./-]+)\s*"
    r"(?:(?P<op>==|=|!=)\s*(?P<value>[A-Za-z0-9_.-]*)"
    r"|\s(?P<set>in|notin)\s*\((?P<values>[A-Za-z0-9_.,\s-]*)\))?\s*$"
)


def label_match(selector: str) -> Callable[[Mapping[str, str]], bool] | None:
    """A predicate for a label selector (`app=web,tier in (a,b),!legacy`), or None for one this
    parser does not read (the API server then answers it, and names what is wrong)."""
    tests: list[Callable[[Mapping[str, str]], bool]] = []
    for term in _terms(selector):
        found = _TERM.match(term)
        if found is None or (found["neg"] and (found["op"] or found["set"])):
            return None
        if found["set"]:
            values = frozenset(v.strip() for v in found["values"].split(",") if v.strip())
            if not values:
                return None
            tests.append(_within(found["key"], values, found["set"] == "in"))
        elif found["op"]:
            tests.append(_equal(found["key"], found["value"], found["op"] != "!="))
        else:
            tests.append(_present(found["key"], not found["neg"]))
    return lambda labels: all(test(labels) for test in tests)


def _within(key: str, values: frozenset[str], inside: bool) -> Callable[[Mapping[str, str]], bool]:
    return lambda labels: (labels.get(key) in values) == inside


def _equal(key: str, value: str, equal: bool) -> Callable[[Mapping[str, str]], bool]:
    return lambda labels: (labels.get(key) == value) == equal


def _present(key: str, present: bool) -> Callable[[Mapping[str, str]], bool]:
    return lambda labels: (key in labels) == present


def field_match(selector: str, kind: Kind) -> Callable[[Key, Mapping[str, str]], bool] | None:
    """A predicate on (key, kept fields) for a field selector, or None when it names a field
    this kind does not keep (the API server answers it, or says it is not supported)."""
    tests: list[tuple[str, str, bool]] = []
    for term in _terms(selector):
        path, op, value = _field_term(term)
        if path not in (*kind.fields, *_KEY_FIELDS):
            return None
        tests.append((path, value, op != "!="))

    def match(key: Key, fields: Mapping[str, str]) -> bool:
        for path, value, equal in tests:
            have = key[_KEY_FIELDS[path]] if path in _KEY_FIELDS else fields.get(path, "")
            if (have == value) != equal:
                return False
        return True

    return match


def _field_term(term: str) -> tuple[str, str, str]:
    for op in ("!=", "==", "="):
        path, found, value = term.partition(op)
        if found:
            return path.strip(), op, value.strip()
    return "", "", ""


def _terms(selector: str) -> list[str]:
    """A selector's comma-separated terms, commas inside `( )` kept."""
    terms, depth, current = [], 0, ""
    for char in selector:
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    terms.append(current)
    return [t for t in terms if t.strip()]


# -- small facts of objects -----------------------------------------------------------------------


def _key(obj: Json) -> Key:
    metadata = obj.get("metadata") or {}
    return str(metadata.get("namespace") or ""), str(metadata.get("name") or "")


def _version(obj: Json) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def _older(version: str, than: str) -> bool:
    """Whether `version` is before `than`. Versions are opaque to clients; every API server
    keeps etcd's revision in them, a number, and only then is an order known."""
    if version.isdigit() and than.isdigit():
        return int(version) < int(than)
    return False


def _number(version: str) -> int:
    return int(version) if version.isdigit() else 0


def _field(obj: Json, path: str) -> str:
    """A field's value as a field selector compares it: text, `true`/`false`, "" when unset."""
    value: object = obj
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)
