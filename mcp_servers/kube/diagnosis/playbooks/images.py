"""Images that cannot be pulled: set the last good image, or roll back to the revision that ran.

The sandbox, like many clusters, offers no registry API, so the candidates are images this
cluster demonstrably pulled: the workload's earlier ReplicaSets' (best: one with ready pods
now) and, when close enough to the broken reference (a typo), images other pods run. A tag
deleted from the registry (image-missing) fails in every revision that uses it, so the rollback
skips those revisions and goes back to the last one with another image.

A StatefulSet never replaces a pod that is not Running and Ready on its own, even once its
template is right again (Kubernetes' "forced rollback"): its fix also deletes the stuck pods,
which never started, so the controller recreates them from the fixed template.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from mcp_servers.kube.diagnosis import history
from mcp_servers.kube.diagnosis.findings import Finding, Fix, Step, patch_step
from mcp_servers.kube.diagnosis.playbooks.rollbacks import rollback
from mcp_servers.kube.diagnosis.playbooks.templates import container_patch, pod_risk
from mcp_servers.kube.diagnosis.snapshot import Snapshot, name_of, namespace_of


def image_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    broken = str(finding.details.get("image") or "")
    container = str(finding.details.get("container") or "")
    candidates: dict[str, tuple[float, str]] = {}  # image -> (bonus, why)
    for revision in history.revisions(snapshot, finding.ref):
        image = next(
            (str(c.get("image") or "") for c in revision.containers if c.get("name") == container),
            "",
        )
        if image and image != broken and image not in candidates:
            good = "ran ready pods" if revision.ready else "is an earlier revision"
            candidates[image] = (
                0.25 if revision.ready else 0.1,
                f"{revision.source} (revision {revision.number}) {good} with image {image}",
            )
    for pod in snapshot.of("pods"):
        for cstatus in (pod.get("status") or {}).get("containerStatuses") or []:
            image = str(cstatus.get("image") or "")
            if image and image != broken and cstatus.get("imageID") and image not in candidates:
                candidates[image] = (0.0, f"pod {namespace_of(pod)}/{name_of(pod)} runs {image}")
    scored = []
    for image, (bonus, why) in candidates.items():
        similarity = difflib.SequenceMatcher(None, broken, image).ratio()
        if similarity >= 0.6 or bonus >= 0.25:
            scored.append((min(0.95, similarity * 0.7 + bonus), image, why, similarity))
    stuck = [
        Step("delete", {"kind": "Pod", "name": pod.name, "namespace": pod.namespace})
        for pod in finding.related
        if finding.ref.kind == "StatefulSet" and pod.kind == "Pod"
    ]
    for confidence, image, why, similarity in sorted(scored, reverse=True):
        patch = container_patch(finding.ref.kind, container, {"image": image})
        yield Fix(
            finding.code,
            finding.ref,
            f"set image of container {container} to {image}",
            "strategic",
            patch,
            f"pods pull {image}, which this cluster has pulled before, and start"
            + (
                "; the stuck pods are deleted and recreated from the fixed template"
                if stuck
                else ""
            ),
            "low" if similarity > 0.8 else "medium",
            pod_risk(finding.ref)
            + ("; the deleted pods never started, and their volume claims stay" if stuck else ""),
            round(confidence, 2),
            (
                why,
                f"{broken!r} cannot be pulled; similarity to {image!r}: {similarity:.2f}",
                "no registry API is available: candidates are images this cluster already runs",
            ),
            (patch_step(finding.ref, "strategic", patch), *stuck),
        )
    yield from rollback(
        finding,
        snapshot,
        confidence=0.6,  # below the image of a ready revision: same effect, narrower change
        why=(f"{broken!r} cannot be pulled (the registry has no such image or tag)",),
        bad_images=(broken,),
    )
