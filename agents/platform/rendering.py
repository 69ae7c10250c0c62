"""From an org EgressPolicy to the NetworkPolicy it means in one namespace, and what "matches".

The rendering is a pure function of the document and the namespace, so the same policy renders
the same bytes on every run: a PR reopened for an unchanged policy changes nothing, and the
live comparison has one exact reference. One NetworkPolicy per (EgressPolicy, namespace), named
`egress-<policy>`, selecting every pod of the namespace and allowing egress only to the
policy's destinations: in-cluster pods by namespace name and pod labels, CIDRs as ipBlocks,
each with its ports. DNS names cannot be said in a NetworkPolicy (it has no names, only
addresses); they are kept in an annotation for an egress gateway and reported, never dropped
silently. The rendering passes the policy store's own allowed-destinations rule by design.

Enforcement compares `spec` only: labels and annotations are the owners' to add to, while the
spec is what the network enforces.
"""

from __future__ import annotations

from typing import Any

from core.policy.documents.blueprint import quantity
from core.policy.documents.egress import Destination, EgressPolicy

NAME_LABEL = "kubernetes.io/metadata.name"  # set by the API server on every Namespace
POLICY_LABEL = "kubecrew.io/egress-policy"
MANAGED_LABEL = "app.kubernetes.io/managed-by"
MANAGER = "kubecrew-platform"
DNS_ANNOTATION = "kubecrew.io/egress-dns-names"


def object_name(policy: EgressPolicy) -> str:
    return f"egress-{policy.metadata.name}"[:253]


def render(policy: EgressPolicy, namespace: str) -> dict[str, Any]:
    """The NetworkPolicy manifest `policy` asks for in `namespace`."""
    names = sorted({name for d in policy.spec.destinations for name in d.dnsNames})
    metadata: dict[str, Any] = {
        "name": object_name(policy),
        "namespace": namespace,
        "labels": {POLICY_LABEL: policy.metadata.name, MANAGED_LABEL: MANAGER},
    }
    if names:
        metadata["annotations"] = {DNS_ANNOTATION: ",".join(names)}
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": metadata,
        "spec": {
            "podSelector": {},
            "policyTypes": ["Egress"],
            "egress": [rule for d in policy.spec.destinations if (rule := _rule(d))],
        },
    }


def unrendered(policy: EgressPolicy) -> list[str]:
    """Destinations a NetworkPolicy cannot express at all (DNS names only), one phrase each."""
    return [
        f"destination {d.name}: DNS names {', '.join(d.dnsNames)} need an egress gateway "
        "(a NetworkPolicy knows addresses only)"
        for d in policy.spec.destinations
        if d.dnsNames and not d.cidrs and d.inCluster is None
    ]


def _rule(destination: Destination) -> dict[str, Any] | None:
    peers: list[dict[str, Any]] = []
    scope = destination.inCluster
    if scope is not None:
        pods = scope.podSelector.model_dump(mode="json", exclude_defaults=True)
        for namespace in scope.namespaces:
            peers.append(
                {
                    "namespaceSelector": {"matchLabels": {NAME_LABEL: namespace}},
                    "podSelector": pods,
                }
            )
    peers += [{"ipBlock": {"cidr": cidr}} for cidr in destination.cidrs]
    if not peers:
        return None
    return {"to": peers, "ports": [_port(p.protocol, p.port, p.endPort) for p in destination.ports]}


def _port(protocol: str, port: int, end: int | None) -> dict[str, Any]:
    rendered: dict[str, Any] = {"protocol": protocol, "port": port}
    if end is not None:
        rendered["endPort"] = end
    return rendered


def differences(want: Any, live: Any, path: str = "spec") -> list[str]:
    """Where the live spec departs from the rendering, as `path: want X, live Y` phrases.

    Defaults the API server fills in (a port's protocol TCP) and quantities it rewrites (0.5 as
    500m) count as equal, so a faithful apply is never reported as drift."""
    if isinstance(want, dict) and isinstance(live, dict):
        found: list[str] = []
        for key in sorted(set(want) | set(live)):
            found += differences(want.get(key), live.get(key), f"{path}.{key}")
        return found
    if isinstance(want, list) and isinstance(live, list) and len(want) == len(live):
        return [
            m
            for i, (w, v) in enumerate(zip(want, live, strict=True))
            for m in differences(w, v, f"{path}[{i}]")
        ]
    if _same(want, live, path):
        return []
    return [f"{path}: want {_short(want)}, live {_short(live)}"]


def _same(want: Any, live: Any, path: str) -> bool:
    if want == live:
        return True
    empty: tuple[Any, ...] = (None, {}, [])
    if want in empty and live in empty:
        return True
    if isinstance(want, str) and isinstance(live, str):  # 500m and 0.5 are one quantity
        try:
            return quantity(want) == quantity(live)
        except ValueError:
            return False
    return path.endswith(".protocol") and {want, live} <= {None, "TCP"}


def _short(value: Any) -> str:
    text = "absent" if value is None else repr(value)
    return text if len(text) <= 120 else text[:117] + "..."
