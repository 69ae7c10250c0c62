"""kube-state-metrics families of the cluster's fabric: nodes, namespaces, Services, Endpoints,
PersistentVolumes and PersistentVolumeClaims.

Same conventions as the pod families: state series valued 1/0, resources in base units with a
`unit` label. Reads API objects only; node health as the simulator knows it shows here only
through what the kubelet and node controller wrote into the Node.
"""

from __future__ import annotations

from sandbox.exposition.pods import CONDITION_STATUSES, epoch, resource_labels, resource_value
from sandbox.exposition.text import Exposition, labels
from sandbox.quantity import parse_quantity
from sandbox.store import Obj

PVC_PHASES = ("Lost", "Bound", "Pending")
PV_PHASES = ("Pending", "Available", "Bound", "Released", "Failed")
NAMESPACE_PHASES = ("Active", "Terminating")


def render_nodes(out: Exposition, nodes: list[Obj]) -> None:
    info = out.gauge("kube_node_info", "Information about a cluster node.")
    created = out.gauge("kube_node_created", "Unix creation timestamp")
    condition = out.gauge("kube_node_status_condition", "The condition of a cluster node.")
    unschedulable = out.gauge(
        "kube_node_spec_unschedulable", "Whether a node can schedule new pods."
    )
    taint = out.gauge("kube_node_spec_taint", "The taint of a cluster node.")
    capacity = out.gauge(
        "kube_node_status_capacity", "The capacity for different resources of a node."
    )
    allocatable = out.gauge(
        "kube_node_status_allocatable",
        "The allocatable for different resources of a node that are available for scheduling.",
    )
    for node in nodes:
        meta, spec, status = node["metadata"], node.get("spec") or {}, node.get("status") or {}
        base = labels(("node", meta["name"]))
        system = status.get("nodeInfo") or {}
        internal = next(
            (a["address"] for a in status.get("addresses") or () if a["type"] == "InternalIP"), ""
        )
        info.add(
            f"{base},"
            + labels(
                ("kernel_version", system.get("kernelVersion", "")),
                ("os_image", system.get("osImage", "")),
                ("container_runtime_version", system.get("containerRuntimeVersion", "")),
                ("kubelet_version", system.get("kubeletVersion", "")),
                ("provider_id", spec.get("providerID", "")),
                ("pod_cidr", spec.get("podCIDR", "")),
                ("internal_ip", internal),
                ("system_uuid", system.get("systemUUID", "")),
            ),
            1,
        )
        if stamp := meta.get("creationTimestamp"):
            created.add(base, epoch(stamp))
        for found in status.get("conditions") or ():
            where = f"{base},{labels(('condition', found['type']))}"
            for text, value in CONDITION_STATUSES:
                condition.add(f'{where},status="{text}"', 1 if found.get("status") == value else 0)
        unschedulable.add(base, 1 if spec.get("unschedulable") else 0)
        for found in spec.get("taints") or ():
            where = labels(
                ("key", found["key"]),
                ("value", found.get("value", "")),
                ("effect", found["effect"]),
            )
            taint.add(f"{base},{where}", 1)
        for family, amounts in (
            (capacity, status.get("capacity")),
            (allocatable, status.get("allocatable")),
        ):
            for resource, amount in (amounts or {}).items():
                family.add(
                    f"{base},{labels(*resource_labels(resource))}", resource_value(resource, amount)
                )


def render_namespaces(out: Exposition, namespaces: list[Obj]) -> None:
    phase = out.gauge("kube_namespace_status_phase", "kubernetes namespace status phase.")
    for namespace in namespaces:
        base = labels(("namespace", namespace["metadata"]["name"]))
        current = (namespace.get("status") or {}).get("phase", "Active")
        for name in NAMESPACE_PHASES:
            phase.add(f'{base},phase="{name}"', 1 if name == current else 0)


def render_services(out: Exposition, services: list[Obj], endpoints: list[Obj]) -> None:
    info = out.gauge("kube_service_info", "Information about service.")
    kind = out.gauge("kube_service_spec_type", "Type about service.")
    for service in services:
        meta, spec = service["metadata"], service.get("spec") or {}
        base = labels(
            ("namespace", meta["namespace"]), ("service", meta["name"]), ("uid", meta["uid"])
        )
        ingress = ((service.get("status") or {}).get("loadBalancer") or {}).get("ingress") or ()
        info.add(
            f"{base},"
            + labels(
                ("cluster_ip", spec.get("clusterIP", "")),
                ("external_name", spec.get("externalName", "")),
                ("load_balancer_ip", ingress[0].get("ip", "") if ingress else ""),
            ),
            1,
        )
        kind.add(f"{base},{labels(('type', spec.get('type', 'ClusterIP')))}", 1)
    available = out.gauge(
        "kube_endpoint_address_available", "Number of addresses available in endpoint."
    )
    not_ready = out.gauge(
        "kube_endpoint_address_not_ready", "Number of addresses not ready in endpoint"
    )
    address = out.gauge("kube_endpoint_address", "Information about Endpoint addresses")
    for endpoint in endpoints:
        meta = endpoint["metadata"]
        base = labels(("namespace", meta["namespace"]), ("endpoint", meta["name"]))
        ready_count = not_ready_count = 0
        for subset in endpoint.get("subsets") or ():
            ports = len(subset.get("ports") or ())
            ready_count += len(subset.get("addresses") or ()) * ports
            not_ready_count += len(subset.get("notReadyAddresses") or ()) * ports
            for key, ready in (("addresses", "true"), ("notReadyAddresses", "false")):
                for found in subset.get(key) or ():
                    address.add(f'{base},{labels(("ip", found["ip"]))},ready="{ready}"', 1)
        available.add(base, ready_count)
        not_ready.add(base, not_ready_count)


def render_storage(out: Exposition, claims: list[Obj], volumes: list[Obj]) -> None:
    phase = out.gauge(
        "kube_persistentvolumeclaim_status_phase",
        "The phase the persistent volume claim is currently in.",
    )
    info = out.gauge(
        "kube_persistentvolumeclaim_info", "Information about persistent volume claim."
    )
    requested = out.gauge(
        "kube_persistentvolumeclaim_resource_requests_storage_bytes",
        "The capacity of storage requested by the persistent volume claim.",
    )
    for claim in claims:
        meta, spec = claim["metadata"], claim.get("spec") or {}
        base = labels(("namespace", meta["namespace"]), ("persistentvolumeclaim", meta["name"]))
        current = (claim.get("status") or {}).get("phase", "Pending")
        for name in PVC_PHASES:
            phase.add(f'{base},phase="{name}"', 1 if name == current else 0)
        info.add(
            f"{base},"
            + labels(
                ("storageclass", spec.get("storageClassName") or ""),
                ("volumename", spec.get("volumeName", "")),
            ),
            1,
        )
        if storage := ((spec.get("resources") or {}).get("requests") or {}).get("storage"):
            requested.add(base, parse_quantity(storage))
    volume_phase = out.gauge(
        "kube_persistentvolume_status_phase", "The phase indicates if a volume is available."
    )
    volume_capacity = out.gauge(
        "kube_persistentvolume_capacity_bytes", "Persistentvolume capacity in bytes."
    )
    for volume in volumes:
        spec = volume.get("spec") or {}
        base = labels(("persistentvolume", volume["metadata"]["name"]))
        current = (volume.get("status") or {}).get("phase", "Pending")
        for name in PV_PHASES:
            volume_phase.add(f'{base},phase="{name}"', 1 if name == current else 0)
        if storage := (spec.get("capacity") or {}).get("storage"):
            volume_capacity.add(base, parse_quantity(storage))
