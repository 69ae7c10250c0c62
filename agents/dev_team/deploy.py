"""Deploying an app to a namespace (staging) by GitOps: "deploy web to staging", "deploy
nginx:1.27 as checkout in staging".

`read_request` reads the ask: the app's name, an image (a word with a tag or digest, or the word
after "image"), the namespace (after "to"/"in"/"into"; staging when none is named) and a port.
`deploy` then renders a Deployment and a Service: from the app's manifest in another namespace
of the team repository (re-namespaced, the image replaced when one is asked for), or from the
image alone. It asks the policy store first (`propose`, action apply, via=pull-request), opens
the pull request with the file `staging/<app>.yaml` (for namespace staging; `<ns>/<app>.yaml`
otherwise), and merges it only when policy approved; an approval a person must give leaves the
PR open, linked to the request, and says who decides. After the merge it syncs (dry run first)
and validates on the cluster's clock as the remediation loop does: rollout complete, pods Ready
and unrestarted for the soak. The PR, review, sync and validation are the loop's own functions
(agents/runtime/loop/mutation.py, validation.py).

It does not create namespaces: they belong to the platform team (policies/ownership.yaml), so a
missing namespace is a refusal that says whom to ask. A branch per namespace and app
(`kubecrew-deploy-<ns>-<app>`) and the proposal's rationale carrying it make a second ask
reuse the first one's proposal and PR instead of opening new ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

from agents.dev_team import changes
from agents.runtime import numbers
from agents.runtime.changes import words
from agents.runtime.errors import ToolFailed
from agents.runtime.loop.mutation import NeedsApproval, Refused, decide_proposal, sync_change
from agents.runtime.loop.state import Target
from agents.runtime.loop.validation import LoopSettings, validate
from agents.runtime.toolbox import Toolbox

LABEL = "kubecrew-deploy"
DEFAULT_NAMESPACE = "staging"
DEFAULT_PORT = 80
_IMAGE = re.compile(r"^[a-z0-9][a-z0-9./_-]*(?::[\w][\w.-]*|@sha256:[0-9a-f]{64})$")
_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_SKIP_WORDS = """
    deploy ship release promote roll rollout out please can could you my our the a an app
    application service image to in into namespace ns as named called on port with and of it
    this new version env environment cluster"""
_SKIP = frozenset(_SKIP_WORDS.split())
_KEPT_META = ("name", "labels", "annotations")

Outcome = Literal["deployed", "waiting", "refused", "failed"]


@dataclass(frozen=True)
class DeployRequest:
    app: str  # the Deployment and Service name in the target namespace
    namespace: str
    image: str = ""  # empty: the image of the app's existing manifest
    port: int = 0  # 0: the existing manifest's ports, or DEFAULT_PORT from an image
    said_namespace: bool = field(default=False, compare=False)  # False: DEFAULT_NAMESPACE


@dataclass
class Deployed:
    outcome: Outcome
    summary: str
    pr: int = 0
    proposal: str = ""
    request: str = ""  # the approval request a person answers (outcome "waiting")
    source: str = ""  # where the manifests came from
    notes: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)

    def report(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "pr": self.pr,
            "proposal": self.proposal,
            "approval": self.request,
            "source": self.source,
            "notes": self.notes,
            "evidence": self.evidence,
        }


def as_create(question: str) -> words.Asked | None:
    """A deploy from an image where the crew has no GitOps repository ("deploy redis:7 as
    cache into payments with 2 replicas"): the create of that Deployment, made as any other
    change is (gated, dry run, validated, audited). None when the ask names no image: a deploy
    from the team's manifests needs the repository."""
    asked = read_request(question)
    if isinstance(asked, str) or not asked.image:
        return None
    params: dict[str, Any] = {"kind": "Deployment", "image": asked.image, "name": asked.app}
    count = _REPLICAS.search(question.lower())
    if count:
        said = count[1]
        replicas = int(said) if said.isdigit() else numbers.WORDS.get(said, 0)
        if replicas:
            params["replicas"] = replicas
    if asked.port:
        params["port"] = asked.port
    namespace = asked.namespace if asked.said_namespace else None  # else the conversation's
    return words.Asked("create", params, (), "Deployment", namespace=namespace)


_REPLICAS = re.compile(r"\b(\w+)\s+(?:replicas?|copies|instances|pods)\b")


def read_request(question: str) -> DeployRequest | str:
    """The deploy ask, or the question to ask back when it names no app."""
    words = [w.strip(",.;!?\"'`") for w in question.split()]
    lowered = [w.lower() for w in words]
    image, app, namespace, port = "", "", "", 0
    taken: set[int] = set()
    for index, word in enumerate(lowered):
        following = lowered[index + 1] if index + 1 < len(lowered) else ""
        if word in ("to", "in", "into") and following and following not in _SKIP | {"the"}:
            namespace, taken = following.split("/")[0], taken | {index + 1}
        elif word in ("to", "in", "into") and following == "the" and index + 2 < len(lowered):
            namespace, taken = lowered[index + 2], taken | {index + 1, index + 2}
        elif word in ("as", "named", "called") and following:
            app, taken = following, taken | {index + 1}
        elif word == "port" and following.isdigit():
            port, taken = int(following), taken | {index + 1}
        elif word == "image" and following:
            image, taken = words[index + 1], taken | {index + 1}
        elif _IMAGE.match(word) and (":" in word or "@" in word):
            image, taken = words[index], taken | {index}
    if not app:
        rest = [
            w
            for i, w in enumerate(lowered)
            if i not in taken and w not in _SKIP and _NAME.match(w) and not w.isdigit()
        ]
        app = rest[0] if rest else _image_name(image)
    if not app or not _NAME.match(app):
        return (
            "Which app should I deploy, and from what? Say e.g. 'deploy web to staging' (copies "
            "web's manifest from its namespace in the team repository) or 'deploy nginx:1.27 as "
            "checkout in staging' (from an image)."
        )
    return DeployRequest(app, namespace or DEFAULT_NAMESPACE, image, port, bool(namespace))


def _image_name(image: str) -> str:
    if not image:
        return ""
    return image.split("@")[0].rsplit("/", 1)[-1].split(":")[0]


def branch_of(request: DeployRequest) -> str:
    return f"{LABEL}-{request.namespace}-{request.app}"


def path_of(request: DeployRequest) -> str:
    return f"{request.namespace}/{request.app}.yaml"


async def deploy(
    toolbox: Toolbox, request: DeployRequest, *, agent: str, settings: LoopSettings
) -> Deployed:
    """Render, propose, open the PR, merge per policy, sync and validate: one deploy."""
    target = Target(kind="Deployment", name=request.app, namespace=request.namespace)
    key = branch_of(request)
    try:
        if not toolbox.has("find_manifest"):
            raise Refused(
                "a deploy from the team's manifests goes by pull request, and the crew has no "
                "GitOps repository (give --repo, or a repo in the crew file); or name an image, "
                f"e.g. 'deploy nginx:1.27 as {request.app} in {request.namespace}'"
            )
        await _namespace_exists(toolbox, request.namespace)
        source, content = await render(toolbox, request)
        notes: list[str] = []
        try:
            proposal = await _decide(toolbox, request, key, agent=agent)
        except NeedsApproval as waiting:
            number = await _open_pr(toolbox, request, content, source, key, waiting.request)
            return Deployed(
                "waiting",
                f"Opened PR #{number} deploying {request.app} to {request.namespace}, and left it "
                f"open: policy asks a person first ({waiting}). Approval request "
                f"{waiting.request}; an approver's review of the PR answers it. Ask me again to "
                "deploy once it is granted, and I merge, sync and validate.",
                pr=number,
                proposal=waiting.proposal,
                request=waiting.request,
                source=source,
            )
        number = await _open_pr(toolbox, request, content, source, key, "")
        notes.append(f"PR #{number} on branch {key} (policy: proposal {proposal})")
        notes.extend(await changes.merge(toolbox, number, proposal, agent=agent))
        notes.extend(await sync_change(toolbox, target))
    except Refused as refused:
        return Deployed("refused", f"I did not deploy {request.app}: {refused}")
    verdict = await validate(toolbox, target, "", settings)
    outcome: Outcome = "deployed" if verdict.held else "failed"
    said = "is running" if verdict.held else "did not become healthy"
    return Deployed(
        outcome,
        f"Deployed {request.app} to {request.namespace} ({source}) by PR #{number}, merged "
        f"(policy: proposal {proposal}) and synced; it {said}: {'; '.join(verdict.evidence)}.",
        pr=number,
        proposal=proposal,
        source=source,
        notes=notes,
        evidence=verdict.evidence,
    )


async def render(toolbox: Toolbox, request: DeployRequest) -> tuple[str, str]:
    """(where the manifests came from, the file's text) for the request."""
    found = await toolbox.call("find_manifest", kind="Deployment", name=request.app)
    elsewhere = [
        hit
        for hit in found.get("found", [])
        if hit.get("namespace") != request.namespace and not hit.get("rendered_by")
    ]
    if elsewhere:
        hit = elsewhere[0]
        text = await toolbox.call("read_manifest", path=hit["file"])
        docs = [d for d in yaml.safe_load_all(text["text"]) if isinstance(d, dict)]
        chosen = [_moved(d, request) for d in docs if _ours(d, request.app)]
        source = f"{hit['file']} of namespace {hit.get('namespace')}"
        if request.image:
            source += f", image {request.image}"
        return source, _file(chosen, source)
    if not request.image:
        raise Refused(
            f"no manifest of the team repository defines Deployment {request.app} and no image "
            f"was given: say e.g. 'deploy nginx:1.27 as {request.app} in {request.namespace}'"
        )
    source = f"image {request.image}"
    return source, _file(_from_image(request), source)


def _ours(doc: dict[str, Any], app: str) -> bool:
    meta = doc.get("metadata") or {}
    return doc.get("kind") in ("Deployment", "Service") and meta.get("name") == app


def _moved(doc: dict[str, Any], request: DeployRequest) -> dict[str, Any]:
    """The document in the target namespace, without what belongs to its old home."""
    meta = doc.get("metadata") or {}
    kept = {k: meta[k] for k in _KEPT_META if meta.get(k)}
    moved = {**doc, "metadata": {**kept, "namespace": request.namespace}}
    moved.pop("status", None)
    spec = dict(moved.get("spec") or {})
    if doc["kind"] == "Service":
        spec.pop("clusterIP", None)
        spec.pop("clusterIPs", None)
    if doc["kind"] == "Deployment":
        template = dict(spec.get("template") or {})
        pod = dict(template.get("spec") or {})
        containers = [dict(c) for c in pod.get("containers") or []]
        if request.image and containers:
            containers[0]["image"] = request.image
        template["spec"] = {**pod, "containers": containers}
        spec["template"] = template
    moved["spec"] = spec
    return moved


def _from_image(request: DeployRequest) -> list[dict[str, Any]]:
    port = request.port or DEFAULT_PORT
    labels = {"app": request.app}
    meta = {"name": request.app, "namespace": request.namespace, "labels": labels}
    container = {
        "name": request.app,
        "image": request.image,
        "ports": [{"containerPort": port, "name": "http"}],
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta,
        "spec": {"selector": labels, "ports": [{"name": "http", "port": port, "targetPort": port}]},
    }
    return [deployment, service]


def _file(docs: list[dict[str, Any]], source: str) -> str:
    header = f"# Rendered by kubecrew from {source}.\n"
    return header + yaml.safe_dump_all(docs, sort_keys=False, explicit_start=False)


async def _namespace_exists(toolbox: Toolbox, namespace: str) -> None:
    try:
        await toolbox.call("get_resource", kind="namespace", name=namespace)
    except ToolFailed as exc:
        if "not found" not in exc.reason.lower() and "notfound" not in exc.reason.lower():
            raise
        raise Refused(
            f"namespace {namespace} does not exist, and namespaces belong to the platform team "
            "(policies/ownership.yaml): ask them to create it, then ask me again"
        ) from exc


async def _decide(toolbox: Toolbox, request: DeployRequest, key: str, *, agent: str) -> str:
    """The approved proposal's id, or NeedsApproval / Refused (asking twice proposes once)."""
    return await decide_proposal(
        toolbox,
        key=key,
        agent=agent,
        action="apply",
        target=f"deployment/{request.app}",
        namespace=request.namespace,
        via="pull-request",
        rationale=f"deploy {request.app} to {request.namespace} by pull request [{key}]",
        risk="low",
    )


async def _open_pr(
    toolbox: Toolbox, request: DeployRequest, content: str, source: str, key: str, approval: str
) -> int:
    return await changes.open_pr(
        toolbox,
        key=key,
        title=f"Deploy {request.app} to {request.namespace}",
        path=path_of(request),
        content=content,
        body=(
            f"Deploys {request.app} to namespace {request.namespace}: a Deployment and a Service "
            f"rendered from {source}.\n\nOpened by the kubecrew Dev Team agent; merged "
            "automatically only when policy approves, then synced and validated."
        ),
        labels=[LABEL],
        approval=approval,
    )
