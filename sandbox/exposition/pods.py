"""kube-state-metrics pod and container families, from Pod objects as the API holds them.

Names, labels and value conventions follow kube-state-metrics v2: one series per state with value
1 for the current one (`kube_pod_status_phase`), reasons only for containers that have one,
resources in base units with a `unit` label ("core", "byte", "integer"). Knows only the shape of
a Pod; nothing of the simulator that fills its status.
"""

from __future__ import annotations

import functools

from sandbox.clock import parse_time
from sandbox.exposition.text import Exposition, labels
from sandbox.quantity import millicores, parse_quantity
from sandbox.store import Obj

PHASES = ("Pending", "Succeeded", "Failed", "Unknown", "Running")
CONDITION_STATUSES = (("true", "True"), ("false", "False"), ("unknown", "Unknown"))


@functools.lru_cache(maxsize=1024)
def resource_labels(resource: str) -> tuple[tuple[str, str], tuple[str, str]]:
    """(`resource`, `unit`) labels as kube-state-metrics writes them: `nvidia.com/gpu` ->
    `nvidia_com_gpu`, CPU in cores, memory and storage in bytes, everything else a count."""
    name = resource.replace(".", "_").replace("/", "_").replace("-", "_")
    if resource == "cpu":
        unit = "core"
    elif resource in ("memory", "ephemeral-storage", "storage") or resource.startswith(
        "hugepages-"
    ):
        unit = "byte"
    else:
        unit = "integer"
    return (("resource", name), ("unit", unit))


@functools.lru_cache(maxsize=4096)
def resource_value(resource: str, amount: str) -> float:
    """A quantity in the unit of `resource_labels` (CPU through millicores, so "3800m" is 3.8)."""
    return millicores(amount) / 1000 if resource == "cpu" else parse_quantity(amount)


def owner_labels(obj: Obj) -> list[str]:
    """The `owner_kind`, `owner_name`, `owner_is_controller` labels of each owner reference
    (one set of `<none>` for an object without owners, as kube-state-metrics writes it)."""
    refs = obj["metadata"].get("ownerReferences") or ()
    if not refs:
        return [
            labels(
                ("owner_kind", "<none>"),
                ("owner_name", "<none>"),
                ("owner_is_controller", "<none>"),
            )
        ]
    return [
        labels(
            ("owner_kind", ref["kind"]),
            ("owner_name", ref["name"]),
            ("owner_is_controller", "true" if ref.get("controller") else "false"),
        )
        for ref in refs
    ]


def render_pods(out: Exposition, pods: list[Obj]) -> None:
    families = _PodFamilies(out)
    for pod in pods:
        families.pod(pod)


class _PodFamilies:
    """Every pod family, declared once per render (a scrape renders thousands of pods)."""

    def __init__(self, out: Exposition) -> None:
        self.info = out.gauge("kube_pod_info", "Information about pod.")
        self.owner = out.gauge("kube_pod_owner", "Information about the Pod's owner.")
        self.phase = out.gauge("kube_pod_status_phase", "The pods current phase.")
        self.created = out.gauge("kube_pod_created", "Unix creation timestamp")
        self.ready = out.gauge(
            "kube_pod_status_ready", "Describes whether the pod is ready to serve requests."
        )
        self.scheduled = out.gauge(
            "kube_pod_status_scheduled",
            "Describes the status of the scheduling process for the pod.",
        )
        self.requests = out.gauge(
            "kube_pod_container_resource_requests",
            "The number of requested request resource by a container.",
        )
        self.limits = out.gauge(
            "kube_pod_container_resource_limits",
            "The number of requested limit resource by a container.",
        )
        self.container_info = out.gauge(
            "kube_pod_container_info", "Information about a container in a pod."
        )
        self.container_ready = out.gauge(
            "kube_pod_container_status_ready",
            "Describes whether the containers readiness check succeeded.",
        )
        self.running = out.gauge(
            "kube_pod_container_status_running",
            "Describes whether the container is currently in running state.",
        )
        self.waiting = out.gauge(
            "kube_pod_container_status_waiting",
            "Describes whether the container is currently in waiting state.",
        )
        self.terminated = out.gauge(
            "kube_pod_container_status_terminated",
            "Describes whether the container is currently in terminated state.",
        )
        self.restarts = out.counter(
            "kube_pod_container_status_restarts_total",
            "The number of container restarts per container.",
        )
        self.waiting_reason = out.gauge(
            "kube_pod_container_status_waiting_reason",
            "Describes the reason the container is currently in waiting state.",
        )
        self.terminated_reason = out.gauge(
            "kube_pod_container_status_terminated_reason",
            "Describes the reason the container is currently in terminated state.",
        )
        self.last_reason = out.gauge(
            "kube_pod_container_status_last_terminated_reason",
            "Describes the last reason the container was in terminated state.",
        )

    def pod(self, pod: Obj) -> None:
        meta, spec = pod["metadata"], pod.get("spec") or {}
        status = pod.get("status") or {}
        base = labels(("namespace", meta["namespace"]), ("pod", meta["name"]), ("uid", meta["uid"]))
        refs = meta.get("ownerReferences") or ()
        controller = next((r for r in refs if r.get("controller")), None)
        details = labels(
            ("host_ip", status.get("hostIP", "")),
            ("pod_ip", status.get("podIP", "")),
            ("node", spec.get("nodeName", "")),
            ("created_by_kind", controller["kind"] if controller else "<none>"),
            ("created_by_name", controller["name"] if controller else "<none>"),
            ("priority_class", spec.get("priorityClassName", "")),
            ("host_network", "true" if spec.get("hostNetwork") else "false"),
        )
        self.info.flag(f"{base},{details}", True)
        for ref in owner_labels(pod):
            self.owner.flag(f"{base},{ref}", True)
        current = status.get("phase", "Pending")
        for name in PHASES:
            self.phase.flag(f'{base},phase="{name}"', name == current)
        if stamp := meta.get("creationTimestamp"):
            self.created.add(base, epoch(stamp))
        for condition in status.get("conditions") or ():
            family = {"Ready": self.ready, "PodScheduled": self.scheduled}.get(condition["type"])
            if family is not None:
                for label, value in CONDITION_STATUSES:
                    family.flag(f'{base},condition="{label}"', condition.get("status") == value)
        self.resources(base, spec)
        for container in status.get("containerStatuses") or ():
            self.container(base, container)

    def resources(self, base: str, spec: Obj) -> None:
        node = spec.get("nodeName", "")
        for container in spec.get("containers") or ():
            where = f"{base},{labels(('container', container['name']), ('node', node))}"
            resources = container.get("resources") or {}
            for family, amounts in (
                (self.requests, resources.get("requests")),
                (self.limits, resources.get("limits")),
            ):
                for resource, amount in (amounts or {}).items():
                    family.add(
                        f"{where},{labels(*resource_labels(resource))}",
                        resource_value(resource, amount),
                    )

    def container(self, base: str, cs: Obj) -> None:
        where = f"{base},{labels(('container', cs['name']))}"
        state = cs.get("state") or {}
        details = labels(
            ("image_spec", cs.get("image", "")),
            ("image", cs.get("image", "")),
            ("image_id", cs.get("imageID", "")),
            ("container_id", cs.get("containerID", "")),
        )
        self.container_info.flag(f"{where},{details}", True)
        self.container_ready.flag(where, bool(cs.get("ready")))
        self.running.flag(where, "running" in state)
        self.waiting.flag(where, "waiting" in state)
        self.terminated.flag(where, "terminated" in state)
        self.restarts.add(where, cs.get("restartCount", 0))
        if reason := (state.get("waiting") or {}).get("reason"):
            self.waiting_reason.flag(f"{where},{labels(('reason', reason))}", True)
        if reason := (state.get("terminated") or {}).get("reason"):
            self.terminated_reason.flag(f"{where},{labels(('reason', reason))}", True)
        if reason := ((cs.get("lastState") or {}).get("terminated") or {}).get("reason"):
            self.last_reason.flag(f"{where},{labels(('reason', reason))}", True)


@functools.lru_cache(maxsize=8192)
def epoch(stamp: str) -> float:
    return parse_time(stamp).timestamp()
