"""From Findings to ranked, concrete Fixes, each with its evidence, risk and write-tool steps.

One playbook per Finding code (`PLAYBOOKS`, the functions in `playbooks/`). A playbook builds the
precise change (a strategic or JSON merge patch to a named object, a manifest to create, or the
tool calls of a rollback or a drain) from the Finding's details and the same Snapshot the
analyzers read, and says why that value. Fixes of all findings are ranked by their finding's
severity, then confidence; a change two findings both propose (the crash loop and the error
logs of one bad rollout both point back to the same revision) is offered once, where it ranks
highest.

Nothing is applied here: a Fix is a proposal for the write tools or a person.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from itertools import chain

from mcp_servers.kube.diagnosis.findings import SEVERITY_RANK, Finding, Fix
from mcp_servers.kube.diagnosis.playbooks import (
    disruption,
    images,
    network,
    nodes,
    objects,
    resources,
    rollbacks,
    scaling,
    scheduling,
)
from mcp_servers.kube.diagnosis.snapshot import Snapshot

MAX_FIXES_PER_FINDING = 3

Playbook = Callable[[Finding, Snapshot], Iterator[Fix]]

PLAYBOOKS: dict[str, Playbook] = {
    "ImagePullBackOff": images.image_fix,
    "OOMKilled": resources.oom_fix,
    "HPAMissingRequests": resources.requests_fix,
    "CrashLoopBackOff": rollbacks.crash_fix,
    "LogErrors": rollbacks.log_errors_fix,
    "MissingConfigMap": objects.missing_object_fix,
    "MissingSecret": objects.missing_object_fix,
    "MissingConfigMapKey": objects.missing_object_fix,
    "MissingSecretKey": objects.missing_object_fix,
    "StorageClassNotFound": objects.storage_class_fix,
    "ServiceSelectorNoMatch": network.selector_fix,
    "ServiceTargetPortMismatch": network.target_port_fix,
    "ServiceBackendScaledToZero": scaling.scale_up_fix,
    "IngressBackendMissing": network.ingress_fix,
    "IngressBackendPortMissing": network.ingress_fix,
    "NetworkPolicySelectsNothing": network.policy_selector_fix,
    "ProbeFailing": lambda f, s: chain(
        network.probe_port_fix(f, s), rollbacks.slow_probe_fix(f, s)
    ),
    "Unschedulable": scheduling.unschedulable_fix,
    "NodeNotReady": nodes.node_fix,
    "NodeConditionFailed": nodes.node_fix,
    "NodeMemoryPressure": nodes.node_fix,
    "NodeDiskPressure": nodes.node_fix,
    "NodePIDPressure": nodes.node_fix,
    "NodeNetworkUnavailable": nodes.node_fix,
    "PDBBlocksDisruptions": disruption.pdb_fix,
    "CronJobSuspended": disruption.resume_fix,
}


def recommend(findings: list[Finding], snapshot: Snapshot) -> list[Fix]:
    fixes: list[tuple[int, float, Fix]] = []
    for finding in findings:
        playbook = PLAYBOOKS.get(finding.code)
        if playbook is None:
            continue
        made = sorted(playbook(finding, snapshot), key=lambda f: -f.confidence)
        for fix in made[:MAX_FIXES_PER_FINDING]:
            fixes.append((SEVERITY_RANK[finding.severity], -fix.confidence, fix))
    fixes.sort(key=lambda entry: (entry[0], entry[1]))
    seen: set[str] = set()
    ranked = []
    for _, _, fix in fixes:
        change = json.dumps([(s.tool, s.arguments) for s in fix.steps], sort_keys=True)
        if change not in seen:
            seen.add(change)
            ranked.append(fix)
    return ranked
