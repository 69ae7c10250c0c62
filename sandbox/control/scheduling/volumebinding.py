"""What a pod's PersistentVolumeClaims say about where, and whether, it may run.

A missing or terminating claim, or an unbound claim whose class binds Immediately, is a reason no
node can help with; a WaitForFirstConsumer claim that already has a selected node means the pod
waits for the persistentvolume-controller to provision; one without is `delayed` until the
scheduler has picked a node; a bound claim's volume may pin the pod to the nodes its node
affinity allows. Claims, classes and volumes are read through the controller it is handed;
nothing here writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sandbox.control.runtime import Controller
from sandbox.control.scheduling.affinity import term_matches
from sandbox.control.scheduling.cache import NodeFacts
from sandbox.control.volumes import CLASSES, DEFAULT_CLASS, PVCS, PVS, SELECTED_NODE
from sandbox.store import Obj


@dataclass
class Claims:
    """What the pod's PersistentVolumeClaims say about where and whether it may run."""

    names: tuple[str, ...] = ()  # every claim the pod's volumes use
    problem: str = ""  # a reason no node can help with
    waiting: bool = False  # a node was selected; the claim is being provisioned
    delayed: tuple[Obj, ...] = ()  # WaitForFirstConsumer claims still to be given a node
    pinned: frozenset[str] | None = None  # nodes bound volumes allow (None: any)


def claims_of(ctl: Controller, pod: Obj, nodes: Mapping[str, NodeFacts]) -> Claims:
    namespace = pod["metadata"]["namespace"]
    names, ephemeral = _claim_names(pod)
    found = Claims(names=tuple(names))
    delayed: list[Obj] = []
    pinned: set[str] | None = None
    for claim_name in names:
        claim = ctl.get(PVCS, namespace, claim_name)
        if claim is None or claim["metadata"].get("deletionTimestamp"):
            found.problem = _missing_claim(claim_name, claim, ephemeral=claim_name in ephemeral)
            return found
        selected = (claim["metadata"].get("annotations") or {}).get(SELECTED_NODE)
        if (claim.get("status") or {}).get("phase") == "Bound":
            allowed = _volume_nodes(ctl, claim, selected, nodes)
            if allowed is not None:
                pinned = allowed if pinned is None else pinned & allowed
            continue
        if _binding_mode(ctl, claim) != "WaitForFirstConsumer":
            found.problem = "pod has unbound immediate PersistentVolumeClaims"
            return found
        if selected:
            found.waiting = True
            return found
        delayed.append(claim)
    found.delayed = tuple(delayed)
    found.pinned = frozenset(pinned) if pinned is not None else None
    return found


def _binding_mode(ctl: Controller, claim: Obj) -> str:
    class_name = (claim.get("spec") or {}).get("storageClassName")
    if class_name is None:
        default = next(
            (
                sc
                for sc in ctl.list(CLASSES)
                if (sc["metadata"].get("annotations") or {}).get(DEFAULT_CLASS) == "true"
            ),
            None,
        )
        storage_class = default
    else:
        storage_class = ctl.get(CLASSES, "", class_name) if class_name else None
    return str((storage_class or {}).get("volumeBindingMode") or "Immediate")


def _volume_nodes(
    ctl: Controller, claim: Obj, selected: str | None, nodes: Mapping[str, NodeFacts]
) -> set[str] | None:
    """Nodes a bound claim's volume can be used from (None: any node)."""
    volume_name = (claim.get("spec") or {}).get("volumeName")
    volume = ctl.get(PVS, "", volume_name) if volume_name else None
    required = (((volume or {}).get("spec") or {}).get("nodeAffinity") or {}).get("required")
    if required:
        terms = required.get("nodeSelectorTerms") or []
        return {
            name
            for name, node in nodes.items()
            if any(term_matches(t, name, node.labels) for t in terms)
        }
    return {selected} if selected else None


def _claim_names(pod: Obj) -> tuple[list[str], set[str]]:
    """The claims a pod's volumes use, and which of them its generic ephemeral volumes make."""
    names: list[str] = []
    ephemeral: set[str] = set()
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        if claim_name := (volume.get("persistentVolumeClaim") or {}).get("claimName"):
            names.append(claim_name)
        elif volume.get("ephemeral"):
            names.append(f"{pod['metadata']['name']}-{volume['name']}")
            ephemeral.add(names[-1])
    return names, ephemeral


def _missing_claim(name: str, claim: Obj | None, *, ephemeral: bool) -> str:
    if claim is not None:
        return f'persistentvolumeclaim "{name}" is being deleted'
    if ephemeral:
        return (
            f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
        )
    return f'persistentvolumeclaim "{name}" not found'
