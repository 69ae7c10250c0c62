"""Cluster API MachineDeployments (`machinedeployment-controller`): one MachineSet per machine
template, rolled over the way a Deployment rolls its ReplicaSets.

Each pass finds the MachineDeployment's MachineSets (by controller owner reference) and takes as
the new one the set whose template asks for the same machines: the same `version`,
`infrastructureRef`, `bootstrap` and `failureDomain`, the fields that make Cluster API replace
machines. Template labels and annotations, minReadySeconds and the delete policy are carried to
the current set in place instead. Then:
- no other set has machines: the new one follows `spec.replicas` (a plain scale);
- otherwise a rolling update: the new set `<name>-<hash>` is created if missing and grown within
  `maxSurge` (default 1), old sets shrink within `maxUnavailable` (default 0), unavailable
  machines first, so old machines go only as new ones become available (a Machine is available
  once its Node has been Ready for `minReadySeconds`);
- old sets left with no machines beyond `revisionHistoryLimit` (default 1) are deleted;
- status: replicas, updatedReplicas, readyReplicas, availableReplicas, unavailableReplicas, the
  selector as text, phase (ScalingUp or ScalingDown while the Ready machines differ from
  `spec.replicas`, else Running) and the Available and Ready conditions. The MachineDeployment is
  also given an owner reference to its Cluster, so deleting the Cluster deletes its node pools.
A paused MachineDeployment (`spec.paused`) only has its status written.

The rollout arithmetic is the Deployment controller's (`rollingupdate.py`: surge, unavailability
and availability of a set read the same fields of a MachineDeployment and its MachineSets).
Left out: the OnDelete strategy, rollout revisions (`clusterctl alpha rollout`), the progress
deadline (kept in spec, not enforced) and MachineDeployment-level remediation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sandbox.clusterapi.vocabulary import (
    API_VERSION,
    CLUSTERS,
    MACHINE_DEPLOYMENTS,
    MACHINE_SETS,
    TEMPLATE_HASH,
    condition,
)
from sandbox.control.ownership import controlled_by, controller_ref
from sandbox.control.rollingupdate import available, by_creation, max_unavailable, new_replicas
from sandbox.control.rollout import (
    replicas_of,
    set_condition,
    status_count,
    template_hash,
    with_label,
)
from sandbox.control.runtime import Controller, Item
from sandbox.errors import AlreadyExists
from sandbox.selectors import LabelSelector
from sandbox.store import Change, Obj

# The template fields whose change replaces machines (the rest is carried over in place).
ROLLOUT_FIELDS = ("version", "infrastructureRef", "bootstrap", "failureDomain")


class MachineDeploymentController(Controller):
    name = "machinedeployment-controller"
    primary = MACHINE_DEPLOYMENTS
    watches = (MACHINE_SETS, CLUSTERS)

    def items_for(self, change: Change) -> Iterable[Item]:
        if change.key != CLUSTERS:
            yield from super().items_for(change)
            return
        for md in self.list(MACHINE_DEPLOYMENTS, change.namespace):
            if (md.get("spec") or {}).get("clusterName") == change.name:
                yield (change.namespace, md["metadata"]["name"])

    def reconcile(self, namespace: str, name: str) -> float | None:
        md = self.get(MACHINE_DEPLOYMENTS, namespace, name)
        if md is None or md["metadata"].get("deletionTimestamp"):
            return None
        md = self._owned_by_cluster(md)
        uid = md["metadata"]["uid"]
        sets = by_creation(
            ms for ms in self.ctx.index.owned(MACHINE_SETS, uid) if controlled_by(ms, uid)
        )
        wanted = _rollout_spec(md)
        new = next((ms for ms in sets if _rollout_spec(ms) == wanted), None)
        old = [ms for ms in sets if ms is not new]
        if not (md.get("spec") or {}).get("paused"):
            new, old = self._sync(md, new, old)
        self.write_status(MACHINE_DEPLOYMENTS, md, self._status(md, new, old))
        return None

    # -- machine sets ----------------------------------------------------------------------------

    def _sync(self, md: Obj, new: Obj | None, old: list[Obj]) -> tuple[Obj | None, list[Obj]]:
        desired = replicas_of(md)
        if new is None:
            new = self._create(md, new_replicas(md, old, None) if old else desired)
        else:
            new = self._carry_in_place(md, new)
        if not any(replicas_of(ms) for ms in old):
            new = self._scale(md, new, desired)
        else:
            grown = min(desired, new_replicas(md, [*old, new], new))
            new = self._scale(md, new, desired if replicas_of(new) > desired else grown)
            old = self._scale_down_old(md, new, old)
        self._prune(md, old)
        return new, old

    def _create(self, md: Obj, size: int) -> Obj:
        meta, spec = md["metadata"], md.get("spec") or {}
        template = spec.get("template") or {}
        for collisions in range(10):  # another template hashed to a name in use: rehash
            digest = template_hash(_rollout_spec(md), collisions)
            name = f"{meta['name']}-{digest}"
            if self.get(MACHINE_SETS, meta["namespace"], name) is None:
                break
        else:
            raise AlreadyExists(f"no free MachineSet name for {meta['name']} after 10 hashes")
        selector = spec.get("selector") or {}
        labeled = with_label(template, TEMPLATE_HASH, digest)
        body: Obj = {
            "apiVersion": API_VERSION,
            "kind": "MachineSet",
            "metadata": {
                "name": name,
                "namespace": meta["namespace"],
                "labels": dict(labeled["metadata"]["labels"]),
                "ownerReferences": [controller_ref(md)],
            },
            "spec": {
                "clusterName": spec.get("clusterName"),
                "replicas": size,
                "minReadySeconds": int(spec.get("minReadySeconds") or 0),
                "deletePolicy": _delete_policy(md),
                "selector": {
                    **selector,
                    "matchLabels": {**(selector.get("matchLabels") or {}), TEMPLATE_HASH: digest},
                },
                "template": labeled,
            },
        }
        created = self.create(MACHINE_SETS, body)
        self.event(md, "SuccessfulCreate", f"Created MachineSet {name}")
        return created

    def _carry_in_place(self, md: Obj, ms: Obj) -> Obj:
        """What changes without a rollout follows the MachineDeployment onto its current set:
        template labels and annotations, minReadySeconds and the delete policy."""
        md_spec, spec = md.get("spec") or {}, ms.get("spec") or {}
        digest = (spec.get("selector") or {}).get("matchLabels", {}).get(TEMPLATE_HASH, "")
        wanted = with_label(md_spec.get("template") or {}, TEMPLATE_HASH, digest)["metadata"]
        current = spec.get("template") or {}
        new_spec = {
            **spec,
            "template": {**current, "metadata": wanted},
            "minReadySeconds": int(md_spec.get("minReadySeconds") or 0),
            "deletePolicy": _delete_policy(md),
        }
        if new_spec == spec:
            return ms
        return self.write(MACHINE_SETS, {**ms, "spec": new_spec}, ms)

    def _scale(self, md: Obj, ms: Obj, size: int) -> Obj:
        before = replicas_of(ms)
        if before == size:
            return ms
        written = self.write(MACHINE_SETS, {**ms, "spec": {**ms["spec"], "replicas": size}}, ms)
        way = "up" if size > before else "down"
        meta = ms["metadata"]
        where = f"{meta['namespace']}/{meta['name']}"
        self.event(
            md, "SuccessfulScale", f"Scaled {way} MachineSet {where} from {before} to {size}"
        )
        return written

    def _scale_down_old(self, md: Obj, new: Obj, old: list[Obj]) -> list[Obj]:
        """Shrink old sets as far as `maxUnavailable` allows: first the machines that are not
        available anyway, then available ones down to `replicas - maxUnavailable`."""
        min_available = replicas_of(md) - max_unavailable(md)
        total = sum(replicas_of(ms) for ms in [*old, new])
        budget = total - min_available - (replicas_of(new) - available(new))
        old = list(old)
        for i, ms in enumerate(old):
            cut = min(budget, replicas_of(ms) - available(ms))
            if cut > 0:
                old[i] = self._scale(md, ms, replicas_of(ms) - cut)
                budget -= cut
        spare = sum(available(ms) for ms in [*old, new]) - min_available
        for i, ms in enumerate(old):
            cut = min(replicas_of(ms), spare)
            if cut > 0:
                old[i] = self._scale(md, ms, replicas_of(ms) - cut)
                spare -= cut
        return old

    def _prune(self, md: Obj, old: list[Obj]) -> None:
        limit = int((md.get("spec") or {}).get("revisionHistoryLimit") or 0)
        empty = [
            ms
            for ms in old
            if not replicas_of(ms)
            and not status_count(ms, "replicas")
            and not ms["metadata"].get("deletionTimestamp")
        ]
        for ms in empty[: max(len(empty) - limit, 0)]:
            self.delete(MACHINE_SETS, ms["metadata"]["namespace"], ms["metadata"]["name"])

    def _owned_by_cluster(self, md: Obj) -> Obj:
        meta = md["metadata"]
        cluster_name = str((md.get("spec") or {}).get("clusterName") or "")
        cluster = self.get(CLUSTERS, meta["namespace"], cluster_name)
        refs = list(meta.get("ownerReferences") or ())
        if cluster is None or any(r.get("uid") == cluster["metadata"]["uid"] for r in refs):
            return md
        ref = {
            "apiVersion": cluster["apiVersion"],
            "kind": cluster["kind"],
            "name": cluster["metadata"]["name"],
            "uid": cluster["metadata"]["uid"],
        }
        new_meta = {**meta, "ownerReferences": [*refs, ref]}
        return self.write(MACHINE_DEPLOYMENTS, {**md, "metadata": new_meta}, md)

    # -- status ----------------------------------------------------------------------------------

    def _status(self, md: Obj, new: Obj | None, old: list[Obj]) -> dict[str, Any]:
        sets = [*old, *([new] if new else [])]
        desired = replicas_of(md)
        ready = sum(status_count(ms, "readyReplicas") for ms in sets)
        available_count = sum(status_count(ms, "availableReplicas") for ms in sets)
        status: dict[str, Any] = {
            **(md.get("status") or {}),
            "replicas": sum(status_count(ms, "replicas") for ms in sets),
            "updatedReplicas": status_count(new, "replicas") if new else 0,
            "readyReplicas": ready,
            "availableReplicas": available_count,
            "unavailableReplicas": max(desired - available_count, 0),
            "selector": _selector_text(md),
            "observedGeneration": md["metadata"].get("generation"),
        }
        if ready < desired:
            status["phase"] = "ScalingUp"
        elif ready > desired:
            status["phase"] = "ScalingDown"
        else:
            status["phase"] = "Running"
        stamp = self.ctx.clock.timestamp()
        needed = desired - max_unavailable(md)
        found = condition("Available", "True", stamp=stamp)
        if available_count < needed:
            found = condition(
                "Available",
                "False",
                stamp=stamp,
                reason="WaitingForAvailableMachines",
                message=(
                    f"Minimum availability requires {needed} replicas, "
                    f"current {available_count} available"
                ),
                severity="Warning",
            )
        for kind in ("Available", "Ready"):
            status = set_condition(status, {**found, "type": kind})
        return status


def _delete_policy(md: Obj) -> str:
    strategy = (md.get("spec") or {}).get("strategy") or {}
    return str((strategy.get("rollingUpdate") or {}).get("deletePolicy") or "Random")


def _selector_text(md: Obj) -> str:
    return str(LabelSelector.from_object((md.get("spec") or {}).get("selector") or {}))


def _rollout_spec(obj: Obj) -> dict[str, Any]:
    """The fields of a template whose change replaces machines."""
    spec = (((obj.get("spec") or {}).get("template") or {}).get("spec")) or {}
    return {key: spec[key] for key in ROLLOUT_FIELDS if key in spec}


CONTROLLERS: tuple[type[Controller], ...] = (MachineDeploymentController,)
