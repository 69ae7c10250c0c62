"""EgressPolicy: where pods of a class of namespaces may connect to (a security concern).

    spec:
      namespaces: [shop]                 # and/or a namespace class by namespace labels:
      namespaceSelector: {matchLabels: {kubecrew.io/class: storefront}}
      destinations:
        - name: cluster-dns
          inCluster: {namespaces: [kube-system], podSelector: {matchLabels: {k8s-app: kube-dns}}}
          ports: [{protocol: UDP, port: 53}, {protocol: TCP, port: 53}]
        - name: payments-api
          dnsNames: [api.payments.example.com]
          cidrs: [203.0.113.0/24]
          ports: [{port: 443}]

The Platform agent renders these into NetworkPolicies, so the data is exact: CIDRs are networks
(no host bits), ports are explicit (a destination with no port allows none), DNS names are
RFC 1123 names with an optional leading `*.`. The built-in rule allowed-destinations rejects
applying a NetworkPolicy in a selected namespace whose egress reaches anywhere else.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from core.policy.documents.common import API_VERSION, DnsLabel, Metadata, Rule, Strict, unique_names
from core.policy.documents.selectors import LabelSelector

BUILT_IN_RULES = ("allowed-destinations",)
_HOST = re.compile(r"(\*\.)?([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)*[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def _cidr(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        raise ValueError(f"{value!r} is not a CIDR network ({exc})") from exc
    if "/" not in value:
        raise ValueError(f"{value!r}: write the prefix length, e.g. {value}/32")
    return value


def _dns_name(value: str) -> str:
    if len(value) > 253 or not _HOST.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a DNS name (lower-case labels separated by dots, optional "
            "leading '*.')"
        )
    return value


Cidr = Annotated[str, AfterValidator(_cidr)]
DnsName = Annotated[str, AfterValidator(_dns_name)]
PortNumber = Annotated[int, Field(ge=1, le=65535)]


class Port(Strict):
    protocol: Literal["TCP", "UDP", "SCTP"] = "TCP"
    port: PortNumber
    endPort: PortNumber | None = None

    @model_validator(mode="after")
    def _range(self) -> Port:
        if self.endPort is not None and self.endPort < self.port:
            raise ValueError(f"endPort {self.endPort} is below port {self.port}")
        return self

    def covers(self, protocol: str, first: int, last: int) -> bool:
        return protocol == self.protocol and self.port <= first <= last <= (
            self.endPort or self.port
        )

    def describe(self) -> str:
        ports = f"{self.port}-{self.endPort}" if self.endPort else str(self.port)
        return f"{self.protocol}/{ports}"


class InCluster(Strict):
    namespaces: Annotated[list[DnsLabel], Field(min_length=1)]
    podSelector: LabelSelector = LabelSelector()


class Destination(Strict):
    name: DnsLabel
    description: str = ""
    cidrs: list[Cidr] = []
    dnsNames: list[DnsName] = []
    inCluster: InCluster | None = None
    ports: Annotated[list[Port], Field(min_length=1)]

    @model_validator(mode="after")
    def _somewhere(self) -> Destination:
        if not self.cidrs and not self.dnsNames and self.inCluster is None:
            raise ValueError("name where: cidrs, dnsNames or inCluster")
        return self

    def describe(self) -> str:
        where = [*self.dnsNames, *self.cidrs]
        if self.inCluster is not None:
            pods = self.inCluster.podSelector.describe()
            where.append(f"pods ({pods}) in {','.join(self.inCluster.namespaces)}")
        return f"{', '.join(where)} on {', '.join(p.describe() for p in self.ports)}"


class EgressSpec(Strict):
    namespaces: list[DnsLabel] | None = None
    namespaceSelector: LabelSelector | None = None
    destinations: list[Destination]
    rules: list[Rule] = []

    @model_validator(mode="after")
    def _consistent(self) -> EgressSpec:
        if self.namespaces is None and self.namespaceSelector is None:
            raise ValueError("select namespaces: give namespaces, namespaceSelector or both")
        unique_names([d.name for d in self.destinations], field="destinations")
        unique_names([rule.name for rule in self.rules], reserved=BUILT_IN_RULES)
        return self

    def selects(self, namespace: str | None, namespace_labels: dict[str, str]) -> bool:
        """Either way of naming namespaces selects (names OR class)."""
        if namespace is None:
            return False
        by_name = self.namespaces is not None and namespace in self.namespaces
        by_class = self.namespaceSelector is not None and self.namespaceSelector.matches(
            namespace_labels
        )
        return by_name or by_class


class EgressPolicy(Strict):
    apiVersion: Literal["kubecrew.io/v1alpha1"] = API_VERSION
    kind: Literal["EgressPolicy"] = "EgressPolicy"
    metadata: Metadata
    spec: EgressSpec
