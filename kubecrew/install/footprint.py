"""`kubecrew install`: the crew's footprint on a cluster, and one kubeconfig per agent.

In order: the policy store's CustomResourceDefinitions (`deploy/crds`), waited on until
Established; the namespace and the policy store's RBAC (`deploy/rbac`); each agent's
ServiceAccount and least-privilege roles (`deploy/agents`); the ValidatingAdmissionPolicy that
keeps crew identities from making workloads in the crew's namespace (`deploy/admission`, on
clusters that serve it; skipped, and said, on others); then a bounded token per
ServiceAccount (TokenRequest) written into `<out>/<agent>.yaml` (mode 0600), a kubeconfig with the
installer's server and CA, which `agents.runtime.identity` hands to that agent's kube server.

Every object goes in by server-side apply with one field manager, so a second run changes
nothing and says so: an object counts as changed only when the server's answer differs from what
was there (metadata bookkeeping and status aside). A kubeconfig whose token still works as its
agent and has at least half its lifetime left is kept; otherwise a new token is written. Half a
lifetime is measured on the cluster's clock (the `iat` of a freshly issued token), never on this
machine's, which a sandbox running faster than life would fool. `dry_run` asks the server what
each apply would do (`dryRun=All`) and writes nothing.

The cluster is reached as the kube MCP server reaches it (`core.connection.Clusters`),
so the same kubeconfigs, contexts and errors apply. Tokens never leave the kubeconfig files: not
in progress lines, not in errors, not in reprs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from kubernetes.config.config_exception import ConfigException

from agents.runtime.identity import kubeconfigs_dir
from core.connection import Api, Clusters, Json
from core.errors import NotFound, PermissionDenied, ToolError
from kubecrew.install import kubeconfigs
from mcp_servers.kube.resources import Resource, Resources

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
# The order they go in: kinds first, then who uses them, then what guards the crew's namespace.
FOLDERS = ("crds", "rbac", "agents", "admission")
OPTIONAL = frozenset({"admission"})  # applied where the cluster serves their kinds
AGENTS = ("dev-team", "cluster-operator", "platform")
NAMESPACE = "kubecrew-system"
MANAGER = "kubecrew-install"
APPLY = "application/apply-patch+yaml"
DEFAULT_TOKEN_HOURS = 24
ESTABLISH_TIMEOUT = 60.0
_NAME_LABEL = "kubernetes.io/metadata.name"
_VOLATILE = ("resourceVersion", "managedFields", "generation", "uid", "creationTimestamp")

Change = Literal["created", "updated", "unchanged"]
Progress = Callable[[str], None]


class InstallError(Exception):
    """The install stopped; the message is one line saying why and what to do."""


@dataclass(frozen=True)
class Request:
    kubeconfig: Path | None = None  # None: $KUBECONFIG or ~/.kube/config
    context: str | None = None  # None: the kubeconfig's current context
    namespace: str = NAMESPACE
    out: Path | None = None  # None: $KUBECREW_HOME/kubeconfigs
    dry_run: bool = False
    token_hours: int = DEFAULT_TOKEN_HOURS


@dataclass(frozen=True)
class Applied:
    kind: str
    name: str
    namespace: str | None
    change: Change

    def line(self, *, dry_run: bool) -> str:
        verb = f"would be {self.change}" if dry_run and self.change != "unchanged" else self.change
        where = f" in {self.namespace}" if self.namespace else ""
        return f"{verb:<16} {self.kind} {self.name}{where}"


@dataclass
class Report:
    context: str
    server: str
    dry_run: bool
    applied: list[Applied] = field(default_factory=list)
    kubeconfigs: list[kubeconfigs.Written] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return any(a.change != "unchanged" for a in self.applied) or any(
            not k.kept for k in self.kubeconfigs
        )

    def summary(self) -> str:
        counts = {c: sum(1 for a in self.applied if a.change == c) for c in ("created", "updated")}
        written = sum(1 for k in self.kubeconfigs if not k.kept)
        unchanged = len(self.applied) - sum(counts.values())
        if self.dry_run:
            return (
                f"Dry run: {counts['created']} to create, {counts['updated']} to update, "
                f"{unchanged} unchanged; nothing was changed."
            )
        if not self.changed:
            return "Nothing changed: everything was already installed and every token is fresh."
        return (
            f"Installed: {counts['created']} created, {counts['updated']} updated, "
            f"{unchanged} unchanged; {written} kubeconfig(s) written."
        )


def install(request: Request, *, progress: Progress = lambda _line: None) -> Report:
    """Apply the manifests and write the agents' kubeconfigs; an InstallError says why not."""
    clusters = Clusters(kubeconfig=request.kubeconfig, default_context=request.context)
    try:
        api = _connect(clusters)
        report = Report(api.context, str(api.client.configuration.host), request.dry_run)
        _install(api, request, report, progress)
    except ToolError as exc:
        raise InstallError(_explained(exc, api_context=request.context)) from exc
    finally:
        clusters.close()
    progress(report.summary())
    return report


def _connect(clusters: Clusters) -> Api:
    try:
        return clusters.api()
    except (ConfigException, OSError, yaml.YAMLError) as exc:
        where = clusters.kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
        raise InstallError(f"cannot read the kubeconfig {where}: {exc}") from exc


def _install(api: Api, request: Request, report: Report, progress: Progress) -> None:
    resources = Resources.discover(api)  # the first request: an unreachable cluster ends here
    progress(f"Installing on context {api.context} ({report.server})")
    missing_namespace = _get(api, f"/api/v1/namespaces/{request.namespace}") is None
    for folder in FOLDERS:
        crds: list[str] = []
        for document in documents(folder, request.namespace):
            if folder in OPTIONAL and _unserved(resources, document):
                progress(
                    f"skipped          {document['kind']} {name_of(document)}: the cluster does "
                    "not serve it (Kubernetes 1.30 and later do)"
                )
                continue
            resource = _resource(resources, document)
            in_namespace = document_namespace(document)
            if request.dry_run and missing_namespace and in_namespace == request.namespace:
                # Nothing can be dry-run in a namespace that does not exist yet.
                done = Applied(document["kind"], name_of(document), in_namespace, "created")
            else:
                done = apply(api, resource, document, dry_run=request.dry_run)
            report.applied.append(done)
            progress(done.line(dry_run=request.dry_run))
            if document["kind"] == "CustomResourceDefinition":
                crds.append(name_of(document))
        if crds and not request.dry_run:
            if any(a.change != "unchanged" for a in report.applied if a.name in crds):
                progress(f"waiting for {len(crds)} CustomResourceDefinitions to be Established")
            wait_established(api, crds)
    out = request.out or kubeconfigs_dir()
    for agent in AGENTS:
        path = out / f"{agent}.yaml"
        if request.dry_run:
            progress(f"would write      {path}")
            continue
        written = kubeconfigs.refresh(
            api, request.namespace, agent, path, hours=request.token_hours
        )
        report.kubeconfigs.append(written)
        progress(written.line())


def documents(folder: str, namespace: str = NAMESPACE) -> list[Json]:
    """The manifests of `deploy/<folder>`, in file order, moved to `namespace` if asked."""
    found: list[Json] = []
    for path in sorted((DEPLOY / folder).glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            if isinstance(document, dict) and document.get("kind"):
                found.append(_moved(document, namespace))
    return found


def _moved(document: Json, namespace: str) -> Json:
    """The manifests say kubecrew-system; another namespace replaces it wherever it is named."""
    if namespace == NAMESPACE:
        return document
    meta = document.setdefault("metadata", {})
    if meta.get("namespace") == NAMESPACE:
        meta["namespace"] = namespace
    if document["kind"] == "Namespace" and meta.get("name") == NAMESPACE:
        meta["name"] = namespace
    for subject in document.get("subjects") or []:
        if subject.get("namespace") == NAMESPACE:
            subject["namespace"] = namespace
    selector = ((document.get("spec") or {}).get("matchConstraints") or {}).get("namespaceSelector")
    labels = (selector or {}).get("matchLabels") or {}
    if labels.get(_NAME_LABEL) == NAMESPACE:
        labels[_NAME_LABEL] = namespace
    return document


def name_of(document: Json) -> str:
    return str((document.get("metadata") or {}).get("name") or "")


def document_namespace(document: Json) -> str | None:
    found = (document.get("metadata") or {}).get("namespace")
    return str(found) if found else None


def _unserved(resources: Resources, document: Json) -> bool:
    return resources.by_kind(str(document.get("apiVersion")), str(document["kind"])) is None


def _resource(resources: Resources, document: Json) -> Resource:
    resource = resources.by_kind(str(document.get("apiVersion")), str(document["kind"]))
    if resource is None:
        raise InstallError(
            f"the cluster serves no {document['kind']} ({document.get('apiVersion')}); "
            "kubecrew needs Kubernetes 1.22 or later"
        )
    return resource


def apply(api: Api, resource: Resource, document: Json, *, dry_run: bool) -> Applied:
    """Server-side apply of one document; what it changed (or would change)."""
    namespace = document_namespace(document) if resource.namespaced else None
    path = resource.path(namespace, name_of(document))
    before = _get(api, path)
    query: dict[str, Any] = {"fieldManager": MANAGER, "force": True}
    if dry_run:
        query["dryRun"] = "All"
    after = api.request("PATCH", path, query=query, body=document, content_type=APPLY,
                        what=f"{resource.kind} {name_of(document)}")  # fmt: skip
    if before is None:
        change: Change = "created"
    else:
        change = "unchanged" if _essence(before) == _essence(after) else "updated"
    return Applied(resource.kind, name_of(document), namespace, change)


def _get(api: Api, path: str) -> Json | None:
    try:
        return api.get(path)
    except NotFound:
        return None


def _essence(obj: Json) -> Json:
    """What a person declared: the object without the server's bookkeeping and status."""
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _VOLATILE}
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}


def wait_established(api: Api, names: list[str], *, timeout: float = ESTABLISH_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    waiting = list(names)
    while waiting:
        path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{}"
        waiting = [n for n in waiting if not _established(api.get(path.format(n)))]
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise InstallError(
                f"CustomResourceDefinitions not Established after {timeout:.0f} s: "
                f"{', '.join(waiting)}; see `kubectl describe crd {waiting[0]}`"
            )
        time.sleep(0.2)


def _established(crd: Json) -> bool:
    conditions = (crd.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


def _explained(exc: ToolError, *, api_context: str | None) -> str:
    """One line for a failed request: a 403 says which permission the installer lacks."""
    if isinstance(exc, PermissionDenied):
        said = _status_message(exc)
        who = f"context {api_context!r}" if api_context else "the current context"
        return (
            f"forbidden: {said}. The identity of {who} lacks that permission; install as a "
            "cluster admin, or grant it create/patch on CustomResourceDefinitions, Namespaces, "
            "ServiceAccounts, Roles, RoleBindings, ClusterRoles and ClusterRoleBindings, create "
            "on serviceaccounts/token, and every permission the agents' roles grant"
        )
    return exc.message


def _status_message(exc: ToolError) -> str:
    body = getattr(exc.__cause__, "body", None)
    try:
        status = yaml.safe_load(body) if body else None
    except yaml.YAMLError:
        status = None
    if isinstance(status, dict) and status.get("message"):
        return str(status["message"])
    return exc.message
