"""How a live object differs from the manifest that defines it, field by field.

Only what the manifest sets is compared: fields the API server or controllers add (status,
defaults, `managedFields`, `resourceVersion`, `uid`, ...) are not drift. Lists of mappings that
carry a `name` (containers, ports, env) are matched by name, other lists by position. Numbers
and strings that spell the same value (`80` and `"80"`) compare equal, since the API server
normalizes some of them. What a difference means, and what to do about it, is the caller's.

A Secret is compared as the API server keeps it (`stringData` folded into `data`, base64), and
its differences never carry a value: under `data` a marker of the length stands for each side,
and any value of either side found elsewhere (an annotation that copied one) is scrubbed.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from core.errors import NotFound, ToolError
from mcp_servers.common.secret_values import SecretValues, marker
from mcp_servers.gitops.repo import Document
from mcp_servers.gitops.resources import Resources

IGNORED_METADATA = frozenset(
    {
        "managedFields",
        "resourceVersion",
        "uid",
        "generation",
        "creationTimestamp",
        "selfLink",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "ownerReferences",
    }
)
_MISSING = object()


@dataclass(frozen=True)
class FieldDiff:
    path: str
    git: Any
    live: Any  # None when the live object lacks the field

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "git": self.git, "live": self.live}


def compare(manifest: dict[str, Any], live: dict[str, Any]) -> list[FieldDiff]:
    if "Secret" in (manifest.get("kind"), live.get("kind")):
        return _hidden(_compare(as_stored(manifest), live), manifest, live)
    return _compare(manifest, live)


def _compare(manifest: dict[str, Any], live: dict[str, Any]) -> list[FieldDiff]:
    diffs: list[FieldDiff] = []
    for key, want in manifest.items():
        if key in ("status", "apiVersion", "kind"):
            continue
        if key == "metadata" and isinstance(want, dict):
            have = live.get("metadata") or {}
            for mkey, mwant in want.items():
                if mkey not in IGNORED_METADATA:
                    _walk(f"metadata.{mkey}", mwant, have.get(mkey, _MISSING), diffs)
            continue
        _walk(key, want, live.get(key, _MISSING), diffs)
    return diffs


def _walk(path: str, want: Any, have: Any, out: list[FieldDiff]) -> None:
    if have is _MISSING:
        if want not in (None, {}, []):
            out.append(FieldDiff(path, want, None))
        return
    if isinstance(want, dict) and isinstance(have, dict):
        for key, sub in want.items():
            _walk(_join(path, key), sub, have.get(key, _MISSING), out)
    elif isinstance(want, list) and isinstance(have, list):
        _walk_list(path, want, have, out)
    elif not _same(want, have):
        out.append(FieldDiff(path, want, have))


def _walk_list(path: str, want: list[Any], have: list[Any], out: list[FieldDiff]) -> None:
    named = all(isinstance(w, dict) and "name" in w for w in want) and want
    if named and all(isinstance(h, dict) for h in have):
        live_by_name = {h.get("name"): h for h in have}
        for w in want:
            _walk(f"{path}[name={w['name']}]", w, live_by_name.get(w["name"], _MISSING), out)
        return
    if len(want) != len(have):
        out.append(FieldDiff(path, want, have))
        return
    for i, (w, h) in enumerate(zip(want, have, strict=True)):
        _walk(f"{path}[{i}]", w, h, out)


def _join(path: str, key: str) -> str:
    return f'{path}["{key}"]' if "." in key or "/" in key else f"{path}.{key}"


def _same(want: Any, have: Any) -> bool:
    if want == have:
        return True
    scalar = (str, int, float)
    if isinstance(want, scalar) and isinstance(have, scalar) and not isinstance(want, bool):
        return str(want) == str(have)
    return False


def as_stored(secret: dict[str, Any]) -> dict[str, Any]:
    """A Secret manifest as the API server stores it: `stringData` folded into `data`."""
    plain = secret.get("stringData")
    if not isinstance(plain, dict):
        return secret
    data = dict(secret.get("data") or {})
    data |= {k: base64.b64encode(str(v).encode()).decode() for k, v in plain.items()}
    return {**{k: v for k, v in secret.items() if k != "stringData"}, "data": data}


def _hidden(diffs: list[FieldDiff], *secrets: dict[str, Any]) -> list[FieldDiff]:
    values = SecretValues.of(*secrets, kind="Secret")
    hidden = []
    for d in diffs:
        if d.path.split(".")[0].split("[")[0] not in ("data", "stringData"):
            hidden.append(FieldDiff(d.path, values.scrub(d.git), values.scrub(d.live)))
            continue
        git, live = _marked(d.git), _marked(d.live)
        if git == live and isinstance(live, str):  # same length, other value
            live = f"{live}, not the same"
        hidden.append(FieldDiff(d.path, git, live))
    return hidden


def _marked(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, dict):
        return {k: marker(v) for k, v in value.items()}
    return marker(value)


def report(docs: list[Document], resources: Resources) -> list[dict[str, Any]]:
    """Per object of `docs`: in-sync, drifted (with the fields) or missing from the cluster."""
    out: list[dict[str, Any]] = []
    for doc in docs:
        entry: dict[str, Any] = {"file": doc.path, **doc.ref}
        if doc.rendered:
            entry["rendered_by"] = "kustomize"  # `file` is then the kustomization directory
        try:
            resource, namespace, name = resources.locate(doc.obj)
            entry["namespace"] = namespace
            live = resources.api.get(
                resource.path(namespace, name), what=f"{doc.ref['kind']} {name}"
            )
        except NotFound:
            out.append({**entry, "state": "missing"})
            continue
        except ToolError as exc:
            out.append({**entry, "state": "error", "error": exc.message})
            continue
        diffs = compare(doc.obj, live)
        state = "drifted" if diffs else "in-sync"
        out.append({**entry, "state": state, "diffs": [d.as_dict() for d in diffs[:50]]})
    return out
