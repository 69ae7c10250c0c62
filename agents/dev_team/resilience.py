"""Making a workload survive a node failure: "make checkout survive a node failure", "harden web".

One node going away must not take a service down. Three things make sure of it, and this task
checks each on the live workload and adds what is missing, as one pull request to the team's
GitOps repository:
- at least two replicas (more when the person asks: "with 3 replicas");
- a topology spread constraint over `kubernetes.io/hostname` (maxSkew 1, ScheduleAnyway), so the
  scheduler puts the replicas on different nodes when it can, without ever leaving one Pending;
- a PodDisruptionBudget (`maxUnavailable: 1`), so a drain takes one replica at a time.

The change is proposed to the policy store first (`propose`, via a pull request), merged only
when policy approves (an approval a person must give leaves the PR open and says who decides),
synced after a dry run, and validated on the cluster: rollout complete, pods Ready and soaked,
the replicas on at least two nodes when the cluster has two, the budget live and allowing one
disruption. A workload not kept in git is not changed: the answer says what it lacks and why
the change belongs in the repository.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from agents.dev_team import changes, tasks
from agents.runtime.errors import ToolFailed
from agents.runtime.loop.mutation import NeedsApproval, Refused, decide_proposal, sync_change
from agents.runtime.loop.state import Target
from agents.runtime.loop.validation import validate
from agents.runtime.toolbox import Toolbox

LABEL = "kubecrew-resilience"
HOSTNAME = "kubernetes.io/hostname"
KINDS = ("Deployment", "StatefulSet")
_REPLICAS = re.compile(r"\b(\d{1,2})\s+replicas?\b")


@tasks.register("resilience")
async def harden(request: tasks.Request) -> tasks.Done:
    toolbox, ref = request.toolbox, request.target
    kind = "Deployment" if ref["kind"] == "Service" else ref["kind"]
    where = f"{kind} {ref['name']} in {ref['namespace']}"
    if kind not in KINDS:
        return _done("refused", f"{where} is not a Deployment or StatefulSet: nothing to spread.")
    try:
        live = await _live(toolbox, kind, ref["name"], ref["namespace"])
    except ToolFailed as failed:
        return _done("refused", f"I could not read {where}: {failed.reason}")
    wanted = max(2, _asked_replicas(request.question), int(live["spec"].get("replicas", 1)))
    labels: dict[str, str] = (live["spec"].get("selector") or {}).get("matchLabels") or {}
    missing = await _missing(toolbox, live, labels, wanted)
    if not missing:
        return _done(
            "unchanged",
            f"{where} already survives a node failure: {wanted} replicas, spread over nodes "
            "by hostname, and a PodDisruptionBudget covers its pods. Nothing to change.",
        )
    if request.wondering:
        return _done(
            "recommended",
            f"{where} would not survive a node failure well: it lacks {_listing(missing)}. Say "
            f"'make {ref['name']} survive a node failure' and I add them. Nothing changed.",
            missing=missing,
        )
    found = await toolbox.call(
        "find_manifest", kind=kind, name=ref["name"], namespace=ref["namespace"]
    )
    hits = [h for h in found.get("found", []) if not h.get("rendered_by")]
    if not hits:
        return _done(
            "refused",
            f"{where} lacks {_listing(missing)}, but no manifest in the team repository defines "
            "it, so I changed nothing: a change made only on the cluster is undone by the next "
            "deploy. Put it in git (or ask me to deploy it), then ask again.",
            missing=missing,
        )
    hit = hits[0]
    key = f"{LABEL}-{ref['namespace']}-{ref['name']}"
    target = Target(kind=kind, name=ref["name"], namespace=ref["namespace"])
    try:
        proposal = await decide_proposal(
            toolbox,
            key=key,
            agent=request.agent,
            action="apply",
            target=f"{kind.lower()}/{ref['name']}",
            namespace=ref["namespace"],
            via="pull-request",
            rationale=f"make {ref['name']} survive a node failure: {_listing(missing)} [{key}]",
            risk="low",
        )
        number = await _open_pr(toolbox, hit, live, labels, wanted, missing, key, "")
        notes = [f"PR #{number} on branch {key} (policy: proposal {proposal})"]
        notes.extend(await changes.merge(toolbox, number, proposal, agent=request.agent))
        notes.extend(await sync_change(toolbox, target))
    except NeedsApproval as waiting:
        number = await _open_pr(toolbox, hit, live, labels, wanted, missing, key, waiting.request)
        return _done(
            "waiting",
            f"Opened PR #{number} adding {_listing(missing)} to {where}, and left it open: policy "
            f"asks a person first ({waiting}). Approval request {waiting.request}; ask me again "
            "once it is granted and I merge, sync and validate.",
            missing=missing,
            pr=number,
            approval=waiting.request,
        )
    except Refused as refused:
        return _done("refused", f"I did not change {where}: {refused}", missing=missing)
    verdict = await validate(toolbox, target, "", request.settings)
    evidence = [*verdict.evidence, *await _spread_evidence(toolbox, live, labels)]
    held = verdict.held and not any(e.startswith("not ") for e in evidence[len(verdict.evidence) :])
    said = "holds" if held else "did not hold"
    return _done(
        "hardened" if held else "failed",
        f"{where} now has {_listing(missing)}: PR #{number}, merged (policy: proposal {proposal}) "
        f"and synced. The change {said}: {'; '.join(evidence)}.",
        missing=missing,
        pr=number,
        proposal=proposal,
        notes=notes,
        evidence=evidence,
    )


async def _live(toolbox: Toolbox, kind: str, name: str, namespace: str) -> dict[str, Any]:
    got = await toolbox.call(
        "get_resource",
        kind=kind.lower(),
        name=name,
        namespace=namespace,
        output="fields",
        fields=["spec"],
    )
    return {"spec": got.get("spec") or {}, "namespace": namespace}


def _asked_replicas(question: str) -> int:
    found = _REPLICAS.search(question.lower())
    return int(found.group(1)) if found else 0


def _pod_labels(live: dict[str, Any], labels: dict[str, str]) -> dict[str, str]:
    template = live["spec"].get("template") or {}
    found: dict[str, str] = (template.get("metadata") or {}).get("labels") or labels
    return found


async def _missing(
    toolbox: Toolbox, live: dict[str, Any], labels: dict[str, str], wanted: int
) -> list[str]:
    missing = []
    if int(live["spec"].get("replicas", 1)) < wanted:
        missing.append(f"{wanted} replicas")
    pod = (live["spec"].get("template") or {}).get("spec") or {}
    if not any(
        c.get("topologyKey") == HOSTNAME for c in pod.get("topologySpreadConstraints") or []
    ):
        missing.append("a spread over nodes")
    if not await _budget(toolbox, live["namespace"], _pod_labels(live, labels)):
        missing.append("a PodDisruptionBudget")
    return missing


async def _budget(toolbox: Toolbox, namespace: str, pod_labels: dict[str, str]) -> dict[str, Any]:
    """The PodDisruptionBudget selecting these pods (name and status), or {}."""
    listed = await toolbox.call(
        "list_resources",
        kind="poddisruptionbudgets",
        namespace=namespace,
        output="fields",
        fields=["metadata.name", "spec.selector", "status.disruptionsAllowed"],
        limit=500,
    )
    for pdb in listed.get("items", []):
        wants = (pdb.get("spec.selector") or {}).get("matchLabels") or {}
        if wants and all(pod_labels.get(k) == v for k, v in wants.items()):
            return dict(pdb)
    return {}


async def _open_pr(
    toolbox: Toolbox,
    hit: dict[str, Any],
    live: dict[str, Any],
    labels: dict[str, str],
    wanted: int,
    missing: list[str],
    key: str,
    approval: str,
) -> int:
    name, namespace = str(hit["name"]), live["namespace"]
    edits: list[dict[str, Any]] = []
    if f"{wanted} replicas" in missing:
        edits.append({"path": "spec.replicas", "value": wanted})
    if "a spread over nodes" in missing:
        pod = (live["spec"].get("template") or {}).get("spec") or {}
        spread = [*(pod.get("topologySpreadConstraints") or []), _spread(labels)]
        edits.append({"path": "spec.template.spec.topologySpreadConstraints", "value": spread})
    new_files = {}
    if "a PodDisruptionBudget" in missing:
        folder = str(hit["file"]).rpartition("/")[0]
        path = f"{folder}/{name}-pdb.yaml" if folder else f"{name}-pdb.yaml"
        new_files[path] = _budget_file(name, namespace, _pod_labels(live, labels))
    return await changes.open_pr(
        toolbox,
        key=key,
        title=f"Make {name} survive a node failure",
        path=hit["file"],
        kind=hit["kind"],
        name=name,
        **({"edits": edits} if edits else {"content": await _same(toolbox, hit["file"])}),
        new_files=new_files,
        body=(
            f"Adds {_listing(missing)} to {hit['kind']} {name} in {namespace}, so losing one "
            "node leaves replicas serving and a drain takes one pod at a time.\n\nOpened by "
            "the kubecrew Dev Team agent; merged automatically only when policy approves, then "
            "synced and validated."
        ),
        labels=[LABEL],
        approval=approval,
    )


async def _same(toolbox: Toolbox, path: str) -> str:
    """The manifest unchanged: a PR that only adds the budget rewrites nothing else."""
    return str((await toolbox.call("read_manifest", path=path))["text"])


def _spread(labels: dict[str, str]) -> dict[str, Any]:
    return {
        "maxSkew": 1,
        "topologyKey": HOSTNAME,
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": labels},
    }


def _budget_file(name: str, namespace: str, labels: dict[str, str]) -> str:
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": labels}},
    }
    header = f"# Rendered by kubecrew: a drain takes one {name} pod at a time.\n"
    return header + yaml.safe_dump(budget, sort_keys=False)


async def _spread_evidence(
    toolbox: Toolbox, live: dict[str, Any], labels: dict[str, str]
) -> list[str]:
    """Where the pods run and what the budget allows, read back from the cluster."""
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    pods = await toolbox.call(
        "list_resources", kind="pods", namespace=live["namespace"], label_selector=selector
    )
    nodes = sorted({str(p.get("node")) for p in pods.get("items", []) if p.get("node")})
    listed = await toolbox.call("list_resources", kind="nodes")
    schedulable = len(listed.get("items", []))
    evidence = []
    if len(nodes) >= min(2, schedulable):
        evidence.append(f"pods on {len(nodes)} nodes ({', '.join(nodes)})")
    else:
        evidence.append(f"not spread: every pod is on {', '.join(nodes) or 'no node'}")
    budget = await _budget(toolbox, live["namespace"], _pod_labels(live, labels))
    allowed = budget.get("status.disruptionsAllowed")
    if budget and (allowed or 0) >= 1:
        evidence.append(
            f"PodDisruptionBudget {budget['metadata.name']} allows {allowed} disruption(s)"
        )
    else:
        evidence.append(f"not protected: no PodDisruptionBudget allows a disruption ({budget})")
    return evidence


def _listing(missing: list[str]) -> str:
    return ", ".join(missing[:-1]) + (" and " if len(missing) > 1 else "") + missing[-1]


def _done(outcome: str, summary: str, **report: Any) -> tasks.Done:
    return tasks.Done(summary, {"outcome": outcome, **report})
