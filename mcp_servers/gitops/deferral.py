"""Leaving the apply to Argo CD or Flux when one of them already deploys this repository.

Two controllers applying the same manifests fight: each reverts the other's field owners and
labels, and a sync from here would race the controller's own. So before applying, sync lists
Argo CD `Application`s (argoproj.io/v1alpha1, every namespace) whose `spec.source.repoURL` or
`spec.sources[].repoURL` is this repository and whose destination is the cluster they live in
(one aimed at another cluster applies nothing here), and Flux `Kustomization`s
(kustomize.toolkit.fluxcd.io/v1) whose `sourceRef` is a `GitRepository`
(source.toolkit.fluxcd.io/v1) whose `spec.url` is. "This repository" is any of its locations (work
tree, git directory, remote URLs) or a URL the server was given, compared after `normalise`
(`file://`, scheme, user, `.git` and trailing slashes do not matter; `git@host:org/repo` equals
`https://host/org/repo`). A kind the cluster does not serve (404) has nothing to defer to; any
other error stops sync, since not knowing is not the same as "nobody deploys it".

Deferring never applies anything. It asks the controller to look now (Argo CD's
`argocd.argoproj.io/refresh` annotation; Flux's `reconcile.fluxcd.io/requestedAt`, as
`flux reconcile` does) unless the call is a dry run, and with `wait_seconds` polls until every
deferred object reports the commit synced and healthy (Argo CD: `status.sync.status` Synced at
`status.sync.revision`, `status.health.status` Healthy; Flux: `status.lastAppliedRevision` ending
in the commit and condition Ready True), or failed, or time runs out; it returns what it saw.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from core.connection import Api
from core.errors import InvalidArgument, NotFound, ToolError

Controller = Literal["argocd", "flux"]
MAX_WAIT = 600  # seconds; a longer wait belongs to a person watching the controller's own UI
POLL_SECONDS = 0.5
ARGO_APPS = "/apis/argoproj.io/v1alpha1"
FLUX_SOURCES = "/apis/source.toolkit.fluxcd.io/v1"
FLUX_KUSTOMIZATIONS = "/apis/kustomize.toolkit.fluxcd.io/v1"
IN_CLUSTER = "https://kubernetes.default.svc"  # Argo CD's name for its own cluster
ARGO_REFRESH = "argocd.argoproj.io/refresh"
FLUX_REQUESTED = "reconcile.fluxcd.io/requestedAt"
_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^@/]*@)?([^/:]+)(?::\d+)?(/.*)?$")
_SCP = re.compile(r"^(?:[^@/]+@)?([^/:]+):(?!//)(.*)$")


@dataclass(frozen=True)
class Target:
    """One object of the controller that deploys the repository."""

    kind: str
    namespace: str
    name: str
    collection: str  # its API collection path in its namespace
    source: str = ""  # Flux: "namespace/name" of the GitRepository

    @property
    def path(self) -> str:
        return f"{self.collection}/{self.name}"


@dataclass(frozen=True)
class Deferral:
    controller: Controller
    targets: list[Target]


def check_wait(wait_seconds: float) -> float:
    if not 0 <= wait_seconds <= MAX_WAIT:
        raise InvalidArgument(f"wait_seconds must be between 0 and {MAX_WAIT}")
    return wait_seconds


def normalise(url: str) -> str:
    text = url.strip()
    if text.startswith("file://"):
        text = text[len("file://") :]
    if m := _URL.match(text):
        text = f"{m.group(1).lower()}{m.group(2) or ''}"
    elif not text.startswith("/") and (m := _SCP.match(text)):
        text = f"{m.group(1).lower()}/{m.group(2).lstrip('/')}"
    elif text.startswith("/"):
        text = os.path.realpath(text)
    text = text.rstrip("/")
    return text.removesuffix(".git").rstrip("/")


def find(api: Api, locations: list[str]) -> Deferral | None:
    """The Argo CD applications, or else the Flux kustomizations, deploying the repository."""
    names = {normalise(u) for u in locations if u.strip()}
    apps = [
        _target(app, "Application", ARGO_APPS, "applications")
        for app in _items(api, f"{ARGO_APPS}/applications", "Argo CD applications")
        if _here(app)
        and any(normalise(str(s.get("repoURL") or "")) in names for s in _sources(app))
    ]
    if apps:
        return Deferral("argocd", apps)
    sources = {
        f"{_meta(r)[0]}/{_meta(r)[1]}"
        for r in _items(api, f"{FLUX_SOURCES}/gitrepositories", "Flux git repositories")
        if normalise(str((r.get("spec") or {}).get("url") or "")) in names
    }
    if not sources:
        return None
    kustomizations = []
    for k in _items(api, f"{FLUX_KUSTOMIZATIONS}/kustomizations", "Flux kustomizations"):
        ref = (k.get("spec") or {}).get("sourceRef") or {}
        source = f"{ref.get('namespace') or _meta(k)[0]}/{ref.get('name')}"
        if ref.get("kind") == "GitRepository" and source in sources:
            made = _target(k, "Kustomization", FLUX_KUSTOMIZATIONS, "kustomizations")
            kustomizations.append(
                Target(made.kind, made.namespace, made.name, made.collection, source)
            )
    return Deferral("flux", kustomizations) if kustomizations else None


def _items(api: Api, path: str, what: str) -> list[dict[str, Any]]:
    try:
        listing = api.get(path, what=f"{what} (sync checks for them so it never fights them)")
    except NotFound:
        return []  # the kind is not served: that controller is not installed
    return sorted(listing.get("items") or [], key=_meta)


def _meta(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _here(app: dict[str, Any]) -> bool:
    """Whether the application deploys into the cluster it is defined in (Argo CD's default
    destination): one aimed at another cluster does not apply anything here."""
    destination = (app.get("spec") or {}).get("destination") or {}
    server, name = destination.get("server"), destination.get("name")
    return server in (None, "", IN_CLUSTER) and name in (None, "", "in-cluster")


def _sources(app: dict[str, Any]) -> list[dict[str, Any]]:
    spec = app.get("spec") or {}
    found = [spec.get("source"), *(spec.get("sources") or [])]
    return [s for s in found if isinstance(s, dict)]


def _target(obj: dict[str, Any], kind: str, group_version: str, plural: str) -> Target:
    namespace, name = _meta(obj)
    return Target(kind, namespace, name, f"{group_version}/namespaces/{namespace}/{plural}")


def follow(
    api: Api, deferral: Deferral, *, ref: str, commit: str, wait_seconds: float, refresh: bool
) -> dict[str, Any]:
    """Ask the controller to look (unless `refresh` is off), then poll for up to
    `wait_seconds` (see `check_wait`) until every target has applied `commit` or failed; what
    was seen."""
    notes = _refresh(api, deferral) if refresh else []
    started = time.monotonic()
    while True:
        rows = [
            _state(deferral.controller, api.get(t.path, what=t.kind), t, commit)
            for t in deferral.targets
        ]
        waited = time.monotonic() - started
        if all(r["done"] for r in rows) or waited >= wait_seconds:
            break
        time.sleep(min(POLL_SECONDS, wait_seconds - waited))
    synced = all(r["synced"] for r in rows)
    name = "Argo CD" if deferral.controller == "argocd" else "Flux"
    out: dict[str, Any] = {
        "deferred_to": deferral.controller,
        "object": rows[0],
        "ref": ref,
        "commit": commit,
        "applied_here": False,
        "synced": synced,
        "waited_seconds": round(waited, 1),
        "notes": notes,
    }
    if len(rows) > 1:
        out["objects"] = rows
    if synced:
        out["next"] = f"{name} applied {commit[:12]}; drift shows whether the cluster matches"
    elif any(r["done"] for r in rows):
        out["next"] = f"{name} failed to apply {commit[:12]}; read the object's status message"
    elif wait_seconds:
        out["next"] = f"{name} has not applied {commit[:12]} yet; call sync with wait_seconds again"
    else:
        out["next"] = f"{name} applies {ref} itself; call sync with wait_seconds to follow it"
    return out


def _refresh(api: Api, deferral: Deferral) -> list[str]:
    """Ask each target (and, for Flux, its source) to reconcile now, not at its next poll."""
    if deferral.controller == "argocd":
        asks = [(t.path, t.kind, {ARGO_REFRESH: "normal"}) for t in deferral.targets]
    else:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        asks = [(t.path, t.kind, {FLUX_REQUESTED: now}) for t in deferral.targets]
        for source in sorted({t.source for t in deferral.targets}):
            namespace, name = source.split("/", 1)
            path = f"{FLUX_SOURCES}/namespaces/{namespace}/gitrepositories/{name}"
            asks.append((path, "GitRepository", {FLUX_REQUESTED: now}))
    notes = []
    for path, kind, marks in asks:
        try:
            api.request(
                "PATCH",
                path,
                body={"metadata": {"annotations": marks}},
                content_type="application/merge-patch+json",
                what=kind,
            )
        except ToolError as exc:
            notes.append(
                f"could not ask {kind} to reconcile now ({exc.message}); it will at its next poll"
            )
    return notes


def _state(
    controller: Controller, obj: dict[str, Any], target: Target, commit: str
) -> dict[str, Any]:
    """What the target reports: `synced` (applied `commit`, healthy) and `done` (synced, or
    finished otherwise at that commit: Degraded, Ready False), plus its own words."""
    status = obj.get("status") or {}
    row: dict[str, Any] = {"kind": target.kind, "namespace": target.namespace, "name": target.name}
    row.update(_argo(status, commit) if controller == "argocd" else _flux(status, commit))
    if target.source:
        row["source"] = target.source
    return row


def _argo(status: dict[str, Any], commit: str) -> dict[str, Any]:
    sync = status.get("sync") or {}
    health = str((status.get("health") or {}).get("status") or "")
    at_commit = sync.get("status") == "Synced" and commit in [
        sync.get("revision"),
        *(sync.get("revisions") or []),
    ]
    row = {
        "sync": str(sync.get("status") or ""),
        "revision": str(sync.get("revision") or ""),
        "health": health,
        "synced": at_commit and health == "Healthy",
        "done": at_commit and health not in ("", "Progressing", "Unknown"),
    }
    message = (status.get("operationState") or {}).get("message")
    return row | ({"message": str(message)[:500]} if message else {})


def _flux(status: dict[str, Any], commit: str) -> dict[str, Any]:
    conditions: list[dict[str, Any]] = status.get("conditions") or []
    ready = next((c for c in conditions if c.get("type") == "Ready"), {})
    applied = str(status.get("lastAppliedRevision") or "")
    attempted = str(status.get("lastAttemptedRevision") or "")
    synced = applied.endswith(commit) and ready.get("status") == "True"
    row = {
        "revision": applied,
        "ready": str(ready.get("status") or ""),
        "synced": synced,
        "done": synced or (attempted.endswith(commit) and ready.get("status") == "False"),
    }
    message = ready.get("message")
    return row | ({"message": str(message)[:500]} if message else {})
