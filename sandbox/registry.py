"""The resource types the sandbox serves: one table drives discovery, routing, OpenAPI and RBAC.

A `ResourceType` is what Kubernetes discovery calls an APIResource: group, version, plural,
kind, scope, verbs, short names, categories and subresources. Built-in types are declared once
below; CustomResourceDefinitions add and remove types at run time through `Registry.add`.
The Cluster API kinds are declared here too, but served as a management cluster serves their
CRDs (`custom`, with the schemas and printer columns of `sandbox.clusterapi`), since the sandbox
is their infrastructure provider and runs their controllers.

Storage is keyed by (group, plural): each resource is stored in its group's current version. A
deprecated version (sandbox.deprecations) is served beside it as an alias while the control
plane's minor is below the version's removal: `follow` is told the control plane's version before
each request is routed, so discovery, OpenAPI and routing agree on one served set, and the
`generation` their caches follow moves when that set does. The aliases are listed by
`group_versions` and `in_group_version` (what is served) and resolved by `resolve` (what a path
addresses), never iterated with the stored types (`__iter__`), which must see each key once.
This module knows nothing of HTTP or storage.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sandbox.clusterapi import PRINTER_COLUMNS, SCHEMAS
from sandbox.deprecations import DEPRECATED, DeprecatedVersion, Release, release_of
from sandbox.version import DEFAULT as DEFAULT_VERSION

CRUD_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
READ_VERBS = ("get", "list", "watch")
CREATE_ONLY = ("create",)


@dataclass(frozen=True)
class ResourceType:
    group: str  # "" for the core group
    version: str
    plural: str
    kind: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = CRUD_VERBS
    subresources: tuple[str, ...] = ()
    # For CustomResourceDefinitions: `additionalPrinterColumns` and the structural schema.
    printer_columns: tuple[dict[str, Any], ...] = ()
    schema: dict[str, Any] | None = field(default=None, compare=False, hash=False)
    custom: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_version(self) -> str:
        return self.api_version

    @property
    def key(self) -> tuple[str, str]:
        """Storage key: (group, plural)."""
        return (self.group, self.plural)

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def singular_name(self) -> str:
        return self.singular or self.kind.lower()

    @property
    def qualified(self) -> str:
        """`pods` or `deployments.apps`, as Kubernetes names a resource in messages."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        return f"{base}/{name}" if name else base


def _rt(
    gv: str,
    plural: str,
    kind: str,
    *,
    namespaced: bool = True,
    short: tuple[str, ...] = (),
    all_: bool = False,
    verbs: tuple[str, ...] = CRUD_VERBS,
    sub: tuple[str, ...] = (),
) -> ResourceType:
    group, _, version = gv.rpartition("/")
    return ResourceType(
        group=group,
        version=version,
        plural=plural,
        kind=kind,
        namespaced=namespaced,
        short_names=short,
        categories=("all",) if all_ else (),
        verbs=verbs,
        subresources=sub,
    )


def _cluster_api(
    gv: str, plural: str, kind: str, *, short: tuple[str, ...] = (), sub: tuple[str, ...]
) -> ResourceType:
    """A Cluster API kind, served as its CustomResourceDefinition would be."""
    return dataclasses.replace(
        _rt(gv, plural, kind, short=short, sub=sub),
        singular=kind.lower(),
        categories=("cluster-api",),
        printer_columns=PRINTER_COLUMNS[kind],
        schema=SCHEMAS[kind],
        custom=True,
    )


_NO_COLLECTION = tuple(v for v in CRUD_VERBS if v != "deletecollection")

BUILTINS: tuple[ResourceType, ...] = (
    # core/v1
    _rt(
        "v1",
        "namespaces",
        "Namespace",
        namespaced=False,
        short=("ns",),
        verbs=_NO_COLLECTION,
        sub=("status", "finalize"),
    ),
    _rt(
        "v1",
        "pods",
        "Pod",
        short=("po",),
        all_=True,
        sub=("status", "log", "eviction", "binding", "exec", "attach", "portforward"),
    ),
    _rt(
        "v1",
        "services",
        "Service",
        short=("svc",),
        all_=True,
        verbs=_NO_COLLECTION,
        sub=("status",),
    ),
    _rt("v1", "endpoints", "Endpoints", short=("ep",)),
    _rt("v1", "configmaps", "ConfigMap", short=("cm",)),
    _rt("v1", "secrets", "Secret"),
    _rt("v1", "serviceaccounts", "ServiceAccount", short=("sa",), sub=("token",)),
    _rt("v1", "nodes", "Node", namespaced=False, short=("no",), sub=("status",)),
    _rt("v1", "events", "Event", short=("ev",)),
    _rt(
        "v1",
        "persistentvolumes",
        "PersistentVolume",
        namespaced=False,
        short=("pv",),
        sub=("status",),
    ),
    _rt("v1", "persistentvolumeclaims", "PersistentVolumeClaim", short=("pvc",), sub=("status",)),
    _rt("v1", "resourcequotas", "ResourceQuota", short=("quota",), sub=("status",)),
    _rt("v1", "limitranges", "LimitRange", short=("limits",)),
    # apps/v1
    _rt(
        "apps/v1",
        "deployments",
        "Deployment",
        short=("deploy",),
        all_=True,
        sub=("status", "scale"),
    ),
    _rt("apps/v1", "replicasets", "ReplicaSet", short=("rs",), all_=True, sub=("status", "scale")),
    _rt(
        "apps/v1", "statefulsets", "StatefulSet", short=("sts",), all_=True, sub=("status", "scale")
    ),
    _rt("apps/v1", "daemonsets", "DaemonSet", short=("ds",), all_=True, sub=("status",)),
    _rt("apps/v1", "controllerrevisions", "ControllerRevision"),
    # batch/v1
    _rt("batch/v1", "jobs", "Job", all_=True, sub=("status",)),
    _rt("batch/v1", "cronjobs", "CronJob", short=("cj",), all_=True, sub=("status",)),
    # autoscaling/v2
    _rt(
        "autoscaling/v2",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        short=("hpa",),
        all_=True,
        sub=("status",),
    ),
    # policy/v1
    _rt(
        "policy/v1", "poddisruptionbudgets", "PodDisruptionBudget", short=("pdb",), sub=("status",)
    ),
    # networking.k8s.io/v1
    _rt("networking.k8s.io/v1", "networkpolicies", "NetworkPolicy", short=("netpol",)),
    _rt("networking.k8s.io/v1", "ingresses", "Ingress", short=("ing",), sub=("status",)),
    _rt("networking.k8s.io/v1", "ingressclasses", "IngressClass", namespaced=False),
    # rbac.authorization.k8s.io/v1
    _rt("rbac.authorization.k8s.io/v1", "roles", "Role"),
    _rt("rbac.authorization.k8s.io/v1", "rolebindings", "RoleBinding"),
    _rt("rbac.authorization.k8s.io/v1", "clusterroles", "ClusterRole", namespaced=False),
    _rt(
        "rbac.authorization.k8s.io/v1",
        "clusterrolebindings",
        "ClusterRoleBinding",
        namespaced=False,
    ),
    # storage.k8s.io/v1
    _rt("storage.k8s.io/v1", "storageclasses", "StorageClass", namespaced=False, short=("sc",)),
    # scheduling.k8s.io/v1
    _rt(
        "scheduling.k8s.io/v1", "priorityclasses", "PriorityClass", namespaced=False, short=("pc",)
    ),
    # coordination.k8s.io/v1
    _rt("coordination.k8s.io/v1", "leases", "Lease"),
    # discovery.k8s.io/v1
    _rt("discovery.k8s.io/v1", "endpointslices", "EndpointSlice"),
    # events.k8s.io/v1
    _rt("events.k8s.io/v1", "events", "Event", short=("ev",)),
    # authentication.k8s.io/v1 and authorization.k8s.io/v1: create-only reviews
    _rt(
        "authentication.k8s.io/v1",
        "tokenreviews",
        "TokenReview",
        namespaced=False,
        verbs=CREATE_ONLY,
    ),
    _rt(
        "authentication.k8s.io/v1",
        "selfsubjectreviews",
        "SelfSubjectReview",
        namespaced=False,
        verbs=CREATE_ONLY,
    ),
    _rt(
        "authorization.k8s.io/v1",
        "selfsubjectaccessreviews",
        "SelfSubjectAccessReview",
        namespaced=False,
        verbs=CREATE_ONLY,
    ),
    _rt(
        "authorization.k8s.io/v1",
        "selfsubjectrulesreviews",
        "SelfSubjectRulesReview",
        namespaced=False,
        verbs=CREATE_ONLY,
    ),
    _rt(
        "authorization.k8s.io/v1",
        "subjectaccessreviews",
        "SubjectAccessReview",
        namespaced=False,
        verbs=CREATE_ONLY,
    ),
    _rt(
        "authorization.k8s.io/v1",
        "localsubjectaccessreviews",
        "LocalSubjectAccessReview",
        verbs=CREATE_ONLY,
    ),
    # admissionregistration.k8s.io/v1: CEL policies (sandbox.admission_policies enforces them)
    _rt(
        "admissionregistration.k8s.io/v1",
        "validatingadmissionpolicies",
        "ValidatingAdmissionPolicy",
        namespaced=False,
        sub=("status",),
    ),
    _rt(
        "admissionregistration.k8s.io/v1",
        "validatingadmissionpolicybindings",
        "ValidatingAdmissionPolicyBinding",
        namespaced=False,
    ),
    # apiextensions.k8s.io/v1
    _rt(
        "apiextensions.k8s.io/v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        namespaced=False,
        short=("crd", "crds"),
        sub=("status",),
    ),
    # metrics.k8s.io/v1beta1: read-only, filled by the simulator
    _rt("metrics.k8s.io/v1beta1", "pods", "PodMetrics", verbs=READ_VERBS),
    _rt("metrics.k8s.io/v1beta1", "nodes", "NodeMetrics", namespaced=False, verbs=READ_VERBS),
    # cluster.x-k8s.io, controlplane.cluster.x-k8s.io and infrastructure.cluster.x-k8s.io
    # (v1beta1): Cluster API
    _cluster_api("cluster.x-k8s.io/v1beta1", "clusters", "Cluster", short=("cl",), sub=("status",)),
    _cluster_api(
        "cluster.x-k8s.io/v1beta1",
        "machinedeployments",
        "MachineDeployment",
        short=("md",),
        sub=("status", "scale"),
    ),
    _cluster_api(
        "cluster.x-k8s.io/v1beta1",
        "machinesets",
        "MachineSet",
        short=("ms",),
        sub=("status", "scale"),
    ),
    _cluster_api("cluster.x-k8s.io/v1beta1", "machines", "Machine", short=("ma",), sub=("status",)),
    _cluster_api(
        "controlplane.cluster.x-k8s.io/v1beta1",
        "kubeadmcontrolplanes",
        "KubeadmControlPlane",
        short=("kcp",),
        sub=("status", "scale"),
    ),
    _cluster_api(
        "infrastructure.cluster.x-k8s.io/v1beta1",
        "sandboxmachinetemplates",
        "SandboxMachineTemplate",
        sub=(),
    ),
)

# Kinds whose objects are computed per request and never stored.
VIRTUAL_GROUPS = frozenset({"authentication.k8s.io", "authorization.k8s.io"})

# The order `kubectl api-versions` and discovery present groups in (real servers use priority).
GROUP_ORDER = (
    "",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "metrics.k8s.io",
)


class Registry:
    """The live set of resource types: the built-ins plus whatever CRDs define, and the deprecated
    versions served as aliases of built-ins at the control plane's version."""

    def __init__(
        self,
        types: tuple[ResourceType, ...] = BUILTINS,
        *,
        deprecated: tuple[DeprecatedVersion, ...] = DEPRECATED,
    ) -> None:
        self._by_path: dict[tuple[str, str, str], ResourceType] = {}
        self._by_kind: dict[tuple[str, str], ResourceType] = {}
        self.generation = 0  # bumps on every change; discovery and OpenAPI hashes follow it
        for rt in types:
            self.add(rt)
        self._deprecated = deprecated
        self._version = ""
        self._aliases: dict[tuple[str, str, str], tuple[ResourceType, DeprecatedVersion]] = {}
        self.follow(DEFAULT_VERSION)

    def add(self, rt: ResourceType) -> None:
        self._by_path[(rt.group, rt.version, rt.plural)] = rt
        self._by_kind[(rt.api_version, rt.kind)] = rt
        self.generation += 1

    def remove(self, group: str, plural: str) -> None:
        for key, rt in list(self._by_path.items()):
            if rt.group == group and rt.plural == plural and rt.custom:
                del self._by_path[key]
                self._by_kind.pop((rt.api_version, rt.kind), None)
                self.generation += 1

    def follow(self, control_plane_version: str) -> None:
        """Serve the deprecated versions a control plane at this version (`v1.38.0`) serves."""
        if control_plane_version == self._version:
            return
        self._version = control_plane_version
        served = self._served_aliases(release_of(control_plane_version))
        if served.keys() != self._aliases.keys():
            self.generation += 1
        self._aliases = served

    def _served_aliases(
        self, at: Release
    ) -> dict[tuple[str, str, str], tuple[ResourceType, DeprecatedVersion]]:
        served = {}
        for entry in self._deprecated:
            if not entry.served_at(at):
                continue
            for plural, _kind in entry.resources:
                current = self._by_path.get((entry.group, entry.replacement, plural))
                if current is not None:
                    alias = dataclasses.replace(current, version=entry.version)
                    served[(entry.group, entry.version, plural)] = (alias, entry)
        return served

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_path.get((group, version, plural))

    def resolve(self, group: str, version: str, plural: str) -> ResourceType | None:
        """The type a request path addresses, as its objects are stored: its own, or for a
        deprecated version served now, its group's current type."""
        found = self._by_path.get((group, version, plural))
        if found is not None:
            return found
        alias = self._aliases.get((group, version, plural))
        return None if alias is None else self.lookup(group, alias[1].replacement, plural)

    def deprecation(self, group: str, version: str, plural: str) -> DeprecatedVersion | None:
        """The deprecated version a request path addresses, while it is served."""
        alias = self._aliases.get((group, version, plural))
        return None if alias is None else alias[1]

    def by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        return self._by_kind.get((api_version, kind))

    def for_group(self, group: str, plural: str) -> ResourceType | None:
        """The stored type of a (group, plural), whatever its version."""
        for rt in self._by_path.values():
            if rt.group == group and rt.plural == plural:
                return rt
        return None

    def __iter__(self) -> Iterator[ResourceType]:
        """The stored types, each (group, plural) once; served aliases are not among them."""
        return iter(self._by_path.values())

    def group_versions(self) -> dict[str, list[str]]:
        """{group: [versions]} served, in discovery order (the current version, the preferred
        one, before a deprecated one); the core group is ''."""
        found: dict[str, list[str]] = {}
        served = [*self._by_path.values(), *(alias for alias, _ in self._aliases.values())]
        for rt in served:
            versions = found.setdefault(rt.group, [])
            if rt.version not in versions:
                versions.append(rt.version)
        rank = {g: i for i, g in enumerate(GROUP_ORDER)}
        return dict(sorted(found.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))

    def in_group_version(self, group: str, version: str) -> list[ResourceType]:
        """The types served in one group/version, a deprecated one's as its aliases."""
        own = [rt for rt in self._by_path.values() if (rt.group, rt.version) == (group, version)]
        aliases = [a for a, _ in self._aliases.values() if (a.group, a.version) == (group, version)]
        return own or aliases
