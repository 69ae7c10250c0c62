"""Cluster API MachineSets (`machineset-controller`): keep `spec.replicas` Machines of a template
and report how many have a Ready Node.

Missing Machines are created from the template, named `<set>-<5 random characters>` (drawn from
the world's seed, so a run repeats), labelled with the set, deployment and cluster names and
owned by the set. Extra ones are deleted in Cluster API's order: those annotated
`cluster.x-k8s.io/delete-machine` first, then unhealthy ones (Failed, not joined yet, Node not
Ready), then by `deletePolicy`: Newest deletes the newest first, Oldest the oldest, and Random
(the default, whose order Cluster API leaves unspecified) the oldest too. Deleting a Machine only
starts its deletion: the provider drains and removes its Node first (sandbox/control/machines.py).

Status counts the Machines not being deleted: replicas, fullyLabeledReplicas, readyReplicas (Node
Ready), availableReplicas (Ready for `minReadySeconds`), the selector as text, and the Resized,
MachinesReady and Ready conditions. It knows nothing of MachineDeployments, which drive it by
writing `spec.replicas` like any client.

Left out: preflight checks (version skew with the control plane), carrying template label
changes onto existing Machines, and MachineHealthCheck remediation (a Failed Machine stays until
someone deletes it).
"""

from __future__ import annotations

from typing import Any

from sandbox.clock import parse_time
from sandbox.clusterapi.vocabulary import (
    API_VERSION,
    CLUSTER_NAME,
    DELETE_MACHINE,
    DEPLOYMENT_NAME,
    MACHINE_SETS,
    MACHINES,
    SET_NAME,
    available_in,
    condition,
    labels_of,
    phase_of,
    ready_since,
)
from sandbox.control.ownership import controlled_by, controller_ref
from sandbox.control.rollout import replicas_of, set_condition
from sandbox.control.runtime import Controller
from sandbox.errors import AlreadyExists, ApiError
from sandbox.jsoncopy import deep_copy
from sandbox.naming import random_suffix
from sandbox.selectors import LabelSelector
from sandbox.store import Obj

RETRY = 10.0  # sandbox seconds before creating Machines again after the API refused one


class MachineSetController(Controller):
    name = "machineset-controller"
    primary = MACHINE_SETS
    watches = (MACHINES,)

    def reconcile(self, namespace: str, name: str) -> float | None:
        ms = self.get(MACHINE_SETS, namespace, name)
        if ms is None:
            return None
        uid = ms["metadata"]["uid"]
        owned = [m for m in self.ctx.index.owned(MACHINES, uid) if controlled_by(m, uid)]
        active = [m for m in owned if not m["metadata"].get("deletionTimestamp")]
        retry: float | None = None
        if not ms["metadata"].get("deletionTimestamp"):
            active, refused = self._manage(ms, active)
            retry = RETRY if refused else None
        status, again = self._status(ms, active)
        self.write_status(MACHINE_SETS, ms, status)
        waits = [t for t in (retry, again) if t is not None]
        return min(waits) if waits else None

    # -- machines --------------------------------------------------------------------------------

    def _manage(self, ms: Obj, active: list[Obj]) -> tuple[list[Obj], bool]:
        diff = replicas_of(ms) - len(active)
        if diff > 0:
            for _ in range(diff):
                try:
                    machine = self._create(ms)
                except ApiError as exc:
                    self.event(
                        ms, "FailedCreate", f"Failed to create machine: {exc.message}", warning=True
                    )
                    return active, True
                active.append(machine)
                self.event(
                    ms, "SuccessfulCreate", f'Created machine "{machine["metadata"]["name"]}"'
                )
        elif diff < 0:
            policy = str((ms.get("spec") or {}).get("deletePolicy") or "Random")
            doomed = sorted(active, key=lambda m: _deletion_rank(m, policy))[:-diff]
            for machine in doomed:
                meta = machine["metadata"]
                self.delete(MACHINES, meta["namespace"], meta["name"])
                self.event(ms, "SuccessfulDelete", f'Deleted machine "{meta["name"]}"')
            gone = {m["metadata"]["name"] for m in doomed}
            active = [m for m in active if m["metadata"]["name"] not in gone]
        return active, False

    def _create(self, ms: Obj) -> Obj:
        meta = ms["metadata"]
        for attempt in range(10):
            rng = self.random(meta["namespace"], meta["name"], self.now(), attempt)
            name = f"{meta['name']}-{random_suffix(rng)}"
            try:
                return self.create(MACHINES, _machine_for(ms, name))
            except AlreadyExists:
                continue
        raise AlreadyExists(f"no free machine name for MachineSet {meta['name']} after 10 tries")

    # -- status ----------------------------------------------------------------------------------

    def _status(self, ms: Obj, active: list[Obj]) -> tuple[dict[str, Any], float | None]:
        spec = ms.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        wanted = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        now = self.now()
        ready = available = labeled = 0
        again: float | None = None
        for machine in active:
            labels = labels_of(machine)
            labeled += all(labels.get(k) == v for k, v in wanted.items())
            wait = available_in(machine, min_ready=min_ready, now=now)
            if wait is None:
                continue
            ready += 1
            if wait <= 0:
                available += 1
            else:
                again = wait if again is None else min(again, wait)
        desired = replicas_of(ms)
        status: dict[str, Any] = {
            **(ms.get("status") or {}),
            "replicas": len(active),
            "fullyLabeledReplicas": labeled,
            "readyReplicas": ready,
            "availableReplicas": available,
            "observedGeneration": ms["metadata"].get("generation"),
            "selector": str(LabelSelector.from_object(spec.get("selector") or {})),
        }
        stamp = self.ctx.clock.timestamp()
        resized = condition("Resized", "True", stamp=stamp)
        if len(active) != desired:
            way = "ScalingUp" if len(active) < desired else "ScalingDown"
            verb = "up" if len(active) < desired else "down"
            message = f"Scaling {verb} MachineSet to {desired} replicas (actual {len(active)})"
            resized = condition(
                "Resized", "False", stamp=stamp, reason=way, message=message, severity="Warning"
            )
        machines_ready = condition("MachinesReady", "True", stamp=stamp)
        if ready < len(active):
            machines_ready = condition(
                "MachinesReady",
                "False",
                stamp=stamp,
                reason="WaitingForNodeReady",
                message=f"{len(active) - ready} of {len(active)} machines have no Ready node",
                severity="Info",
            )
        overall = resized if resized["status"] != "True" else machines_ready
        for found in (resized, machines_ready, {**overall, "type": "Ready"}):
            status = set_condition(status, found)
        return status, again


def _machine_for(ms: Obj, name: str) -> Obj:
    meta, spec = ms["metadata"], ms.get("spec") or {}
    template = deep_copy(spec.get("template") or {})
    template_meta = template.get("metadata") or {}
    labels = {**(template_meta.get("labels") or {}), SET_NAME: meta["name"]}
    labels[CLUSTER_NAME] = str(spec.get("clusterName") or "")
    if deployment := labels_of(ms).get(DEPLOYMENT_NAME):
        labels[DEPLOYMENT_NAME] = deployment
    machine_meta: dict[str, Any] = {
        "name": name,
        "namespace": meta["namespace"],
        "labels": labels,
        "ownerReferences": [controller_ref(ms)],
    }
    if template_meta.get("annotations"):
        machine_meta["annotations"] = template_meta["annotations"]
    machine_spec = {**(template.get("spec") or {}), "clusterName": spec.get("clusterName")}
    machine_spec.pop("providerID", None)
    return {
        "apiVersion": API_VERSION,
        "kind": "Machine",
        "metadata": machine_meta,
        "spec": machine_spec,
    }


def _deletion_rank(machine: Obj, policy: str) -> tuple[int, float, str]:
    """Sort key putting the Machine to delete first: annotated, then unhealthy, then by age."""
    meta = machine["metadata"]
    if DELETE_MACHINE in (meta.get("annotations") or {}):
        priority = 0
    elif phase_of(machine) == "Failed" or ready_since(machine) is None:
        priority = 1
    else:
        priority = 2
    stamp = meta.get("creationTimestamp")
    created = parse_time(stamp).timestamp() if stamp else 0.0
    return (priority, -created if policy == "Newest" else created, meta["name"])


CONTROLLERS: tuple[type[Controller], ...] = (MachineSetController,)
