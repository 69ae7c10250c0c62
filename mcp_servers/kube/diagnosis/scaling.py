"""Scaling analyzers: HorizontalPodAutoscalers that cannot scale, PDBs that block every eviction.

An HPA with ScalingActive False (often: the target's pods have no resource requests, so no
utilization can be computed), or AbleToScale False, or pinned at maxReplicas (ScalingLimited
TooManyReplicas); a PodDisruptionBudget allowing 0 disruptions, which blocks drains.

It knows HPA and PDB status shapes; nothing of fixes or MCP.
"""

from __future__ import annotations

from mcp_servers.kube.diagnosis.findings import Evidence, Finding, ObjectRef
from mcp_servers.kube.diagnosis.snapshot import Snapshot, name_of, namespace_of


def analyze(snapshot: Snapshot) -> list[Finding]:
    found: list[Finding] = []
    for hpa in snapshot.of("horizontalpodautoscalers"):
        ref = ObjectRef("HorizontalPodAutoscaler", name_of(hpa), namespace_of(hpa))
        for cond in (hpa.get("status") or {}).get("conditions") or []:
            text = f"{cond.get('status')}/{cond.get('reason')}: {cond.get('message')}"
            evidence = (Evidence("condition", f"{ref} condition {cond.get('type')}", text),)
            message = str(cond.get("message") or "")
            if (
                cond.get("type") in ("ScalingActive", "AbleToScale")
                and cond.get("status") == "False"
            ):
                missing = "missing request" in message
                found.append(
                    Finding(
                        "HPAMissingRequests" if missing else f"HPA{cond.get('type')}False",
                        ref,
                        "high",
                        f"autoscaler cannot scale: {message}",
                        evidence,
                        0.9,
                    )
                )
            elif cond.get("type") == "ScalingLimited" and cond.get("reason") == "TooManyReplicas":
                found.append(
                    Finding(
                        "HPAAtMaxReplicas",
                        ref,
                        "medium",
                        f"autoscaler is at its maximum: {message}",
                        evidence,
                        0.8,
                    )
                )
    for pdb in snapshot.of("poddisruptionbudgets"):
        status = pdb.get("status") or {}
        if "disruptionsAllowed" in status and int(status.get("disruptionsAllowed") or 0) == 0:
            ref = ObjectRef("PodDisruptionBudget", name_of(pdb), namespace_of(pdb))
            found.append(
                Finding(
                    "PDBBlocksDisruptions",
                    ref,
                    "low",
                    "no voluntary disruption allowed: evictions and drains of its pods will wait",
                    (
                        Evidence(
                            "status",
                            str(ref),
                            f"disruptionsAllowed 0, currentHealthy {status.get('currentHealthy')}, "
                            f"desiredHealthy {status.get('desiredHealthy')}",
                        ),
                    ),
                    0.8,
                )
            )
    return found
