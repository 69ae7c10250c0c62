"""How one object's finding explains another's: the links a person follows by hand, drawn once
over every analyzer's findings so that diagnosing either object finds both.

- A Service with no ready endpoint names the pods it selects and their workloads
  (`network.py`); whatever is found on those (a readiness probe on the wrong port, an image that
  does not pull, a pod that cannot be scheduled) is the Service's cause too, so those findings
  get the Service among their `related`.
- A claim that cannot bind (a missing StorageClass, failed provisioning) names the pods and
  workloads that mount it (`storage.py`); the Pending pods' own finding (Unschedulable: "unbound
  immediate PersistentVolumeClaims") gets the claim among its `related`, so asking about the
  claim shows who waits for it, and asking about the workload shows the claim.

Only `related` grows: a finding keeps its object, rank and words, and no finding is invented.
It knows finding codes; nothing of the cluster, fixes or MCP.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from mcp_servers.kube.diagnosis.findings import Finding, ObjectRef

SERVICE_SYMPTOMS = frozenset({"ServiceNoReadyEndpoints"})
CLAIM_CAUSES = frozenset({"StorageClassNotFound", "ProvisioningFailed"})


def linked(findings: list[Finding]) -> list[Finding]:
    """The same findings, each with the objects it explains added to its `related`."""
    explains: dict[int, list[ObjectRef]] = {}
    for symptom in findings:
        if symptom.code in SERVICE_SYMPTOMS:
            _link(findings, symptom, explains, lambda _: True)  # its own ref is skipped
        elif symptom.code in CLAIM_CAUSES:
            _link(findings, symptom, explains, _waits_for_volume)
    return [_with(f, explains.get(i, [])) for i, f in enumerate(findings)]


def _link(
    findings: list[Finding],
    anchor: Finding,
    explains: dict[int, list[ObjectRef]],
    eligible: Callable[[Finding], bool],
) -> None:
    """Add `anchor`'s object to every eligible finding about one of the objects it names."""
    named = set(anchor.related)
    for index, finding in enumerate(findings):
        if eligible(finding) and (finding.ref in named or named & set(finding.related)):
            explains.setdefault(index, []).append(anchor.ref)


def _waits_for_volume(finding: Finding) -> bool:
    return finding.code == "Unschedulable" and "volume" in finding.details.get("constraints", [])


def _with(finding: Finding, more: list[ObjectRef]) -> Finding:
    added = tuple(r for r in dict.fromkeys(more) if r not in finding.related and r != finding.ref)
    return dataclasses.replace(finding, related=finding.related + added) if added else finding
