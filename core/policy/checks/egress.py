"""What an EgressPolicy says about an action: the security concern.

The built-in rule allowed-destinations reads a NetworkPolicy being applied or patched in a
selected namespace (the request's target object) and rejects any egress it opens beyond the
policy's destinations: a rule without `to` (everywhere), without `ports` (every port), an
ipBlock outside every allowed CIDR, in-cluster peers outside the allowed namespaces and pods.
What cannot be checked exactly (named ports, namespace selectors by other labels) is refused too:
a security rule that cannot tell says no.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from core.policy.checks.base import Scope, finding, rule_findings, unevaluable
from core.policy.documents.common import Concern
from core.policy.documents.egress import Destination, EgressPolicy
from core.policy.findings import Finding

_CONCERN: Concern = "security"
_NAME_LABEL = "kubernetes.io/metadata.name"


def check(scope: Scope, policy: EgressPolicy) -> list[Finding]:
    found = rule_findings(scope, policy, policy.spec.rules, _CONCERN)
    action = scope.action
    if action.target.kind != "NetworkPolicy" or action.type not in ("apply", "patch"):
        return found
    if scope.request.target is None:
        reason = "it needs the NetworkPolicy being applied as the target object"
        return [*found, unevaluable(policy, "allowed-destinations", reason, _CONCERN)]
    problems = violations(scope.request.target, policy.spec.destinations, action.target.namespace)
    if problems:
        message = "egress beyond the allowed destinations: " + "; ".join(problems)
        return [
            *found,
            finding(policy, "allowed-destinations", "reject", message, concern=_CONCERN),
        ]
    message = "every egress destination and port is allowed"
    return [*found, finding(policy, "allowed-destinations", "pass", message, concern=_CONCERN)]


def violations(
    network_policy: dict[str, Any], allowed: list[Destination], namespace: str | None
) -> list[str]:
    """What the NetworkPolicy's egress opens that no destination allows, one phrase each."""
    spec = network_policy.get("spec") or {}
    problems: list[str] = []
    for index, rule in enumerate(spec.get("egress") or []):
        where = f"egress[{index}]"
        peers, ports = rule.get("to") or [], rule.get("ports") or []
        if not peers:
            problems.append(f"{where} has no 'to': every destination")
            continue
        if not ports:
            problems.append(f"{where} has no 'ports': every port")
            continue
        for peer_index, peer in enumerate(peers):
            reason = _peer_problem(peer, ports, allowed, namespace)
            if reason:
                problems.append(f"{where}.to[{peer_index}] {reason}")
    return problems


def _peer_problem(
    peer: dict[str, Any], ports: list[dict[str, Any]], allowed: list[Destination], own: str | None
) -> str | None:
    covering = [d for d in allowed if all(_port_allowed(port, d) for port in ports)]
    if not covering:
        return f"uses ports {_ports(ports)} that no single destination allows"
    block = peer.get("ipBlock")
    if block is not None:
        try:
            network = ipaddress.ip_network(str(block.get("cidr")), strict=False)
        except ValueError:
            return f"has an unreadable ipBlock.cidr {block.get('cidr')!r}"
        if any(_within(network, cidr) for d in covering for cidr in d.cidrs):
            return None
        return f"reaches {network}, outside the allowed CIDRs"
    return _in_cluster_problem(peer, covering, own)


def _in_cluster_problem(
    peer: dict[str, Any], covering: list[Destination], own: str | None
) -> str | None:
    selector = peer.get("namespaceSelector")
    if selector is None:
        namespace = own
    else:
        labels = selector.get("matchLabels") or {}
        if selector.get("matchExpressions") or set(labels) != {_NAME_LABEL}:
            return f"selects namespaces by {selector}; only {_NAME_LABEL} can be checked"
        namespace = labels[_NAME_LABEL]
    pods = (peer.get("podSelector") or {}).get("matchLabels") or {}
    for destination in covering:
        scope = destination.inCluster
        if scope is None or namespace not in scope.namespaces:
            continue
        needed = scope.podSelector.matchLabels
        if not scope.podSelector.matchExpressions and all(
            pods.get(k) == v for k, v in needed.items()
        ):
            return None
    return f"reaches pods ({pods or 'all'}) in namespace {namespace}, not an allowed destination"


def _port_allowed(port: dict[str, Any], destination: Destination) -> bool:
    number, end = port.get("port"), port.get("endPort")
    if not isinstance(number, int):
        return False  # named or missing ports cannot be matched against numbers
    last = end if isinstance(end, int) else number
    protocol = str(port.get("protocol") or "TCP")
    return any(allowed.covers(protocol, number, last) for allowed in destination.ports)


def _within(network: ipaddress.IPv4Network | ipaddress.IPv6Network, cidr: str) -> bool:
    allowed = ipaddress.ip_network(cidr)
    if isinstance(network, ipaddress.IPv4Network) and isinstance(allowed, ipaddress.IPv4Network):
        return network.subnet_of(allowed)
    if isinstance(network, ipaddress.IPv6Network) and isinstance(allowed, ipaddress.IPv6Network):
        return network.subnet_of(allowed)
    return False


def _ports(ports: list[dict[str, Any]]) -> str:
    return ",".join(f"{p.get('protocol') or 'TCP'}/{p.get('port')}" for p in ports)
