"""A node that is failing (NotReady, under memory/disk/PID pressure, a GPU or other condition
gone bad): take it out of service so its workloads run elsewhere.

The fix is cordon then drain, through the `cordon` and `drain` tools: the drain evicts through
the Eviction API, so PodDisruptionBudgets are respected, and the controllers recreate the pods on
healthy nodes. Pods no controller would recreate make a drain refuse (nothing changes); the fix
says so rather than forcing it. Cordoning alone is the cautious second option: nothing new lands
on the node, what runs there stays.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_servers.kube.diagnosis.findings import Finding, Fix, Step
from mcp_servers.kube.diagnosis.snapshot import Snapshot

DRAIN_TIMEOUT = 120  # seconds the drain tool waits for budgets before reporting who is blocked
_DRAIN_CONFIDENCE = {"NodeNotReady": 0.85, "NodeConditionFailed": 0.8}


def node_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    node = finding.ref.name
    pods = int(finding.details.get("pods") or 0)
    bare = [str(p) for p in finding.details.get("bare_pods") or []]
    workloads = [r for r in finding.related if r.kind != "Pod"]
    cordon = Step("cordon", {"node": node})
    if pods:
        moved = ", ".join(str(w) for w in workloads[:5]) or f"{pods} pods"
        caveat = (
            f"; {len(bare)} pods have no controller ({', '.join(bare[:3])}): the drain refuses "
            "until they are moved by hand (or drain with force=True loses them)"
            if bare
            else ""
        )
        yield Fix(
            finding.code,
            finding.ref,
            f"cordon and drain node {node}",
            "steps",
            {},
            f"no new pod lands on {node}; its {pods} pods are evicted and their controllers "
            f"recreate them on healthy nodes, where they become Ready ({moved})",
            "medium",
            "the cluster loses the node's capacity until it is repaired and uncordoned; evictions "
            "respect PodDisruptionBudgets, so a budget that allows none blocks the drain" + caveat,
            _DRAIN_CONFIDENCE.get(finding.code, 0.75) - (0.2 if bare else 0.0),
            (finding.summary, *(e.text for e in finding.evidence)),
            (cordon, Step("drain", {"node": node, "timeout_seconds": DRAIN_TIMEOUT})),
        )
    yield Fix(
        finding.code,
        finding.ref,
        f"cordon node {node}",
        "steps",
        {},
        f"no new pod is scheduled onto {node}; pods already there stay",
        "low",
        "reduces capacity; the pods on the node still suffer its fault until drained",
        0.5 if pods else 0.7,
        (finding.summary,),
        (cordon,),
    )
