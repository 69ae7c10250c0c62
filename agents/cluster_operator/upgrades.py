"""Upgrade readiness: what stands between a cluster and its next Kubernetes minor version.

It reads, and changes nothing. For a target minor (the one asked, else the control plane's
next) it gathers, each finding naming the namespace and the team that owns it (the
namespace's `kubecrew.io/team` label):

- the version skew policy: the control plane moves one minor at a time, and a kubelet may
  trail the API server by up to three minors but never lead it, so a node whose kubelet would
  trail the target by more must be upgraded first, and a target two minors ahead is refused;
- the node pools, where the cluster serves Cluster API (MachineDeployments): each pool's version
  and replicas, the pools the upgrade will roll, and a pool not fully ready (a blocker: a
  rolling upgrade needs its machines Ready to count surge and availability);
- APIs the target no longer serves (removed_apis.py): in the manifests git holds, in live
  objects last applied in such a version (both blockers), and in the API server's record of
  deprecated API requests (a warning: requested since the API server started);
- drain blockers: PodDisruptionBudgets that allow no disruption now, pods no controller owns
  (a drain deletes them for good), pods pinned to one node;
- warnings that do not stop an upgrade: single-replica Deployments and StatefulSets (down
  while their pod moves) and running training Jobs (their nodes wait for a checkpoint).

Blockers stop an upgrade until someone fixes them; warnings are told. Reads only through the
agent's read tools (`Evidence`: what it may not read is said, not fatal).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from agents.cluster_operator import removed_apis
from agents.cluster_operator.training import CHECKPOINT
from agents.runtime.questions.evidence import Evidence, Json
from agents.runtime.toolbox import Toolbox

TEAM_LABEL = "kubecrew.io/team"
MAX_KUBELET_TRAIL = 3  # minors a kubelet may trail the API server by (since Kubernetes 1.28)
HOSTNAME = "kubernetes.io/hostname"

_VERSION = re.compile(r"\bv?1\.(\d{1,2})(?:\.\d+)?\b")

Severity = Literal["blocker", "warning"]


class Finding(TypedDict):
    severity: Severity
    kind: str  # "skew", "removed-api", "deprecated-request", "pdb", "unmanaged-pod", ...
    what: str  # the object: "node node-2", "PodDisruptionBudget shop/web"
    namespace: str  # "" for a cluster-scoped object
    team: str  # who owns it ("" when no team label says)
    why: str  # what is wrong, and what to do


class Pool(TypedDict):
    pool: str  # namespace/name of the MachineDeployment
    version: str  # spec.template.spec.version
    replicas: int
    ready: int


class Readiness(TypedDict):
    cluster: str  # the kubeconfig context read; "" for the kube server's default
    current: str  # the control plane's version: "v1.37.0"
    target: str  # "v1.38"
    refused: str  # why this target cannot be upgraded to at all ("" when it can be planned)
    kubelets: dict[str, str]  # node -> kubelet version
    pools: list[Pool]  # Cluster API MachineDeployments; [] where the cluster serves none
    findings: list[Finding]
    unseen: list[str]  # what could not be read, and why


@dataclass(frozen=True)
class Minor:
    major: int
    minor: int

    @classmethod
    def parse(cls, text: str) -> Minor | None:
        match = re.match(r"v?(\d+)\.(\d+)", text.strip())
        return cls(int(match.group(1)), int(match.group(2))) if match else None

    def __str__(self) -> str:
        return f"v{self.major}.{self.minor}"


def target_in(question: str) -> Minor | None:
    """The Kubernetes minor a question names ("ready for 1.38?", "upgrade to v1.38.2")."""
    match = _VERSION.search(question)
    return Minor(1, int(match.group(1))) if match else None


async def readiness(
    toolbox: Toolbox, *, target: Minor | None = None, cluster: str = "", git: bool = True
) -> Readiness:
    """The readiness of one cluster (`cluster`, a kubeconfig context; "" the default) for
    `target` (else its next minor); git's manifests read only where `git`."""
    evidence = Evidence(toolbox, context=cluster)
    overview = await evidence.call("overview", "the API server's version")
    current_text = str((overview or {}).get("server_version") or "")
    current = Minor.parse(current_text)
    if current is None:
        unseen = [*evidence.unseen, "the API server's version (it gave none)"]
        return Readiness(cluster=cluster, current=current_text, target=str(target or ""),
                         refused="",
                         kubelets={}, pools=[], findings=[], unseen=unseen)  # fmt: skip
    goal = target or Minor(current.major, current.minor + 1)
    kubelets = await _kubelets(evidence)
    pools = await _pools(evidence)
    teams = await _teams(evidence)
    findings = [
        *_skew(current, goal, kubelets),
        *_unready_pools(pools),
        *await _removed_apis(evidence, current, goal, teams, git=git),
        *await _budgets(evidence, teams),
        *await _pods(evidence, teams),
        *await _single_replicas(evidence, teams),
        *await _training(evidence, teams),
    ]
    return Readiness(
        cluster=cluster,
        current=current_text,
        target=str(goal),
        refused=_refused(current, goal),
        kubelets=kubelets,
        pools=pools,
        findings=findings,
        unseen=list(evidence.unseen),
    )


def _refused(current: Minor, goal: Minor) -> str:
    if goal.major != current.major or goal.minor <= current.minor:
        return f"the control plane already runs {current}: there is no upgrade to {goal}"
    if goal.minor > current.minor + 1:
        step = Minor(current.major, current.minor + 1)
        return (
            f"the control plane moves one minor version at a time: upgrade {current} to "
            f"{step} first, then to {goal}"
        )
    return ""


def _skew(current: Minor, goal: Minor, kubelets: dict[str, str]) -> list[Finding]:
    found: list[Finding] = []
    for node, version in sorted(kubelets.items()):
        kubelet = Minor.parse(version)
        if kubelet is None:
            continue
        if kubelet.minor > current.minor:
            why = f"its kubelet {version} is newer than the control plane {current}: not allowed"
        elif goal.minor - kubelet.minor > MAX_KUBELET_TRAIL:
            floor = Minor(goal.major, goal.minor - MAX_KUBELET_TRAIL)
            why = (
                f"its kubelet {version} would trail a {goal} control plane by more than "
                f"{MAX_KUBELET_TRAIL} minor versions: upgrade it to {floor} or later first"
            )
        else:
            continue
        found.append(Finding(severity="blocker", kind="skew", what=f"node {node}", namespace="",
                             team="", why=why))  # fmt: skip
    return found


async def _removed_apis(
    evidence: Evidence, current: Minor, goal: Minor, teams: dict[str, str], *, git: bool
) -> list[Finding]:
    return [
        Finding(
            severity="warning" if use["source"] == "requested" else "blocker",
            kind="deprecated-request" if use["source"] == "requested" else "removed-api",
            what=use["what"],
            namespace=use["namespace"],
            team=teams.get(use["namespace"], ""),
            why=use["why"],
        )
        for use in await removed_apis.uses(
            evidence, current=current.minor, goal=goal.minor, git=git
        )
    ]


async def _budgets(evidence: Evidence, teams: dict[str, str]) -> list[Finding]:
    fields = ["status.disruptionsAllowed", "status.expectedPods", "status.currentHealthy",
              "status.desiredHealthy"]  # fmt: skip
    scan = await evidence.scan("poddisruptionbudgets", "PodDisruptionBudgets", namespace=None,
                               fields=fields)  # fmt: skip
    found: list[Finding] = []
    for row in scan.items if scan else []:
        if int(row.get("status.disruptionsAllowed") or 0) or not row.get("status.expectedPods"):
            continue
        namespace = str(row["namespace"])
        healthy, desired = row.get("status.currentHealthy"), row.get("status.desiredHealthy")
        found.append(Finding(
            severity="blocker", kind="pdb",
            what=f"PodDisruptionBudget {namespace}/{row['name']}",
            namespace=namespace, team=teams.get(namespace, ""),
            why=f"it allows no disruption now ({healthy} healthy, {desired} required): every "
                "drain of a node with its pods would stop there; add a replica or relax it",
        ))  # fmt: skip
    return found


async def _pods(evidence: Evidence, teams: dict[str, str]) -> list[Finding]:
    fields = ["metadata.ownerReferences", "spec.nodeSelector", "spec.affinity", "status.phase"]
    scan = await evidence.scan("pods", "pods", namespace=None, fields=fields)
    found: list[Finding] = []
    for row in scan.items if scan else []:
        if row.get("status.phase") in ("Succeeded", "Failed"):
            continue
        owners = [o.get("kind") for o in row.get("metadata.ownerReferences") or []]
        if "DaemonSet" in owners:
            continue  # a drain leaves them, and the new node runs its own
        namespace = str(row["namespace"])
        what = f"pod {namespace}/{row['name']}"
        if not owners:
            why = ("no controller owns it: a drain deletes it for good; run it under a "
                   "Deployment, StatefulSet or Job")  # fmt: skip
        elif node := _pinned_to(row):
            why = (f"it is pinned to node {node}: it cannot move while that node is drained, "
                   "nor run once it is replaced")  # fmt: skip
        else:
            continue
        kind = "unmanaged-pod" if not owners else "pinned-pod"
        found.append(Finding(severity="blocker", kind=kind, what=what, namespace=namespace,
                             team=teams.get(namespace, ""), why=why))  # fmt: skip
    return found


async def _single_replicas(evidence: Evidence, teams: dict[str, str]) -> list[Finding]:
    found: list[Finding] = []
    for kind in ("Deployment", "StatefulSet"):
        scan = await evidence.scan(kind, f"{kind}s", namespace=None, fields=["spec.replicas"])
        for row in scan.items if scan else []:
            if row.get("spec.replicas") != 1:
                continue
            namespace = str(row["namespace"])
            found.append(Finding(
                severity="warning", kind="single-replica",
                what=f"{kind} {namespace}/{row['name']}",
                namespace=namespace, team=teams.get(namespace, ""),
                why="one replica: it is down while its pod moves off a drained node",
            ))  # fmt: skip
    return found


async def _training(evidence: Evidence, teams: dict[str, str]) -> list[Finding]:
    fields = ["metadata.annotations", "status.active"]
    scan = await evidence.scan("jobs", "Jobs", namespace=None, fields=fields)
    found: list[Finding] = []
    for row in scan.items if scan else []:
        if not row.get("status.active"):
            continue
        namespace = str(row["namespace"])
        stamp = (row.get("metadata.annotations") or {}).get(CHECKPOINT)
        found.append(Finding(
            severity="warning", kind="training",
            what=f"Job {namespace}/{row['name']}",
            namespace=namespace, team=teams.get(namespace, ""),
            why=("running, last checkpoint " + str(stamp) if stamp else
                 "running with no checkpoint yet") + ": its nodes wait until it checkpoints",
        ))  # fmt: skip
    return found


def _unready_pools(pools: list[Pool]) -> list[Finding]:
    return [
        Finding(severity="blocker", kind="pool", what=f"pool {p['pool']}",
                namespace=p["pool"].split("/", 1)[0], team="",
                why=f"{p['ready']} of {p['replicas']} machines ready: a rolling upgrade counts "
                    "surge and availability on Ready machines; fix or replace the others first")
        for p in pools
        if p["ready"] < p["replicas"]
    ]  # fmt: skip


async def _pools(evidence: Evidence) -> list[Pool]:
    """The cluster's MachineDeployments; none (and nothing said) where Cluster API is not served."""
    if not await removed_apis.serves(evidence, "machinedeployments"):
        return []
    fields = ["spec.template.spec.version", "spec.replicas", "status.readyReplicas"]
    scan = await evidence.scan("machinedeployments", "node pools (MachineDeployments)",
                               namespace=None, fields=fields)  # fmt: skip
    return [
        Pool(pool=f"{row['namespace']}/{row['name']}",
             version=str(row.get("spec.template.spec.version") or ""),
             replicas=int(row.get("spec.replicas") or 0),
             ready=int(row.get("status.readyReplicas") or 0))
        for row in (scan.items if scan else [])
    ]  # fmt: skip


async def _kubelets(evidence: Evidence) -> dict[str, str]:
    scan = await evidence.scan("Node", "nodes", namespace=None,
                               fields=["status.nodeInfo.kubeletVersion"])  # fmt: skip
    return {
        str(row["name"]): str(row.get("status.nodeInfo.kubeletVersion") or "")
        for row in (scan.items if scan else [])
    }


async def _teams(evidence: Evidence) -> dict[str, str]:
    scan = await evidence.scan("Namespace", "namespaces", namespace=None,
                               fields=["metadata.labels"])  # fmt: skip
    return {
        str(row["name"]): str((row.get("metadata.labels") or {}).get(TEAM_LABEL) or "")
        for row in (scan.items if scan else [])
    }


def _pinned_to(row: Json) -> str:
    selector = row.get("spec.nodeSelector") or {}
    if isinstance(selector, dict) and selector.get(HOSTNAME):
        return str(selector[HOSTNAME])
    affinity: Any = row.get("spec.affinity") or {}
    required = (
        (affinity.get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        ) or {}
    )  # fmt: skip
    for term in required.get("nodeSelectorTerms") or []:
        for expression in term.get("matchExpressions") or []:
            values = expression.get("values") or []
            one_host = expression.get("operator") == "In" and len(values) == 1
            if expression.get("key") == HOSTNAME and one_host:
                return str(values[0])
    return ""


def blockers(found: Readiness) -> list[Finding]:
    return [f for f in found["findings"] if f["severity"] == "blocker"]


def said(found: Readiness) -> str:
    """The report a person reads: the verdict, the blockers with their owners, the warnings."""
    current, target = found["current"] or "unknown", found["target"] or "the next minor"
    blocking = blockers(found)
    warnings = [f for f in found["findings"] if f["severity"] == "warning"]
    if found["refused"]:
        head = f"No upgrade of {current} to {target}: {found['refused']}."
    elif blocking:
        head = (
            f"Not ready to upgrade {current} to {target}: {len(blocking)} blocker(s) to fix "
            f"first, {len(warnings)} warning(s)."
        )
    else:
        head = (
            f"Ready to upgrade {current} to {target}: nothing blocks it; "
            f"{len(warnings)} warning(s)."
        )
    lines = [f"Cluster {found['cluster']}: {head}" if found["cluster"] else head]
    if found["pools"]:
        lines.append(_pools_said(found["pools"], Minor.parse(found["target"])))
    if found["kubelets"]:
        lines.append(f"Kubelets: {_kubelet_summary(found['kubelets'])}.")
    for title, group in (("Blockers (fix before upgrading):", blocking), ("Warnings:", warnings)):
        if group:
            lines.append(title)
            lines += [f"- {f['what']}{_owned(f)}: {f['why']}" for f in group]
    if found["unseen"]:
        lines.append("Not read: " + "; ".join(found["unseen"]) + ".")
    lines.append("Nothing was changed: this is a reading.")
    return "\n".join(lines)


def _pools_said(pools: list[Pool], goal: Minor | None) -> str:
    shown = "; ".join(f"{p['pool']} {p['version']} ({p['ready']}/{p['replicas']} ready)"
                      for p in pools)  # fmt: skip
    rolls = [p["pool"] for p in pools if goal is not None and Minor.parse(p["version"]) != goal]
    return f"Node pools: {shown}" + (f"; the upgrade rolls {', '.join(rolls)}." if rolls else ".")


def _kubelet_summary(kubelets: dict[str, str]) -> str:
    by_version: dict[str, list[str]] = {}
    for node, version in sorted(kubelets.items()):
        by_version.setdefault(version or "unknown", []).append(node)
    return "; ".join(
        f"{version} on " + (f"{len(nodes)} nodes" if len(nodes) > 3 else ", ".join(nodes))
        for version, nodes in sorted(by_version.items())
    )


def _owned(finding: Finding) -> str:
    return f" (team {finding['team']})" if finding["team"] else ""
