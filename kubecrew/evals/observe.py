"""What the harness sees of a cluster, read over HTTP with the admin kubeconfig: objects and their
fields, rollouts, ready pods, Secret values, what a person may do (a SubjectAccessReview), and a
fingerprint of every object people write.

The fingerprint is how "nothing was touched" is observed rather than believed: it hashes what a
writer changes (a Deployment's spec, a ConfigMap's data, a Node's taints) and not what
controllers keep moving (status, resourceVersion), so two fingerprints differ only where some
client wrote. In a fleet the main cluster's reader holds the other clusters' readers by
kubeconfig context name: objectives read whichever they name, and the fingerprint covers them
all (`west:Deployment/shop/api`), so a safeguard sees a write in any of them.

`includes` is the one partial match objectives use: a map includes every key given with a value
it includes, a list includes each item given in one of its own items, a scalar is equal.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubecrew.practice.probe import ApiClient, SandboxUnreachable

Json = dict[str, Any]

# kind -> (API group path, plural, namespaced)
KINDS: dict[str, tuple[str, str, bool]] = {
    "Namespace": ("/api/v1", "namespaces", False),
    "Node": ("/api/v1", "nodes", False),
    "Pod": ("/api/v1", "pods", True),
    "Service": ("/api/v1", "services", True),
    "ConfigMap": ("/api/v1", "configmaps", True),
    "Secret": ("/api/v1", "secrets", True),
    "Deployment": ("/apis/apps/v1", "deployments", True),
    "StatefulSet": ("/apis/apps/v1", "statefulsets", True),
    "DaemonSet": ("/apis/apps/v1", "daemonsets", True),
    "PodDisruptionBudget": ("/apis/policy/v1", "poddisruptionbudgets", True),
    "NetworkPolicy": ("/apis/networking.k8s.io/v1", "networkpolicies", True),
    "ResourceQuota": ("/api/v1", "resourcequotas", True),
    "LimitRange": ("/api/v1", "limitranges", True),
    "HorizontalPodAutoscaler": ("/apis/autoscaling/v2", "horizontalpodautoscalers", True),
    "PersistentVolumeClaim": ("/api/v1", "persistentvolumeclaims", True),
    "Role": ("/apis/rbac.authorization.k8s.io/v1", "roles", True),
    "RoleBinding": ("/apis/rbac.authorization.k8s.io/v1", "rolebindings", True),
    "ClusterRoleBinding": ("/apis/rbac.authorization.k8s.io/v1", "clusterrolebindings", False),
    "Ingress": ("/apis/networking.k8s.io/v1", "ingresses", True),
    "Job": ("/apis/batch/v1", "jobs", True),
    "CronJob": ("/apis/batch/v1", "cronjobs", True),
    "MachineDeployment": ("/apis/cluster.x-k8s.io/v1beta1", "machinedeployments", True),
    "KubeadmControlPlane": (
        "/apis/controlplane.cluster.x-k8s.io/v1beta1",
        "kubeadmcontrolplanes",
        True,
    ),
}
# pods come and go by themselves; Jobs run to their end, made by CronJobs and by the crew's own
# prober (a check, not a change): neither is a write the fingerprint should see
WATCHED = [k for k in KINDS if k not in ("Pod", "Job")]
ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
WRITTEN_PARTS = ("spec", "data", "stringData", "metadata.labels", "metadata.annotations")


@dataclass(frozen=True)
class Cluster:
    """One cluster's reader; the main cluster's of a fleet also holds the others' by context
    name (`fleet`), so whoever has the main reader can read any of them (`on`)."""

    client: ApiClient
    name: str = ""  # its kubeconfig context in a fleet; "" for a world of one cluster
    fleet: Mapping[str, Cluster] = field(default_factory=dict)  # the other clusters, by name

    @classmethod
    def from_kubeconfig(
        cls, path: Path, *, name: str = "", fleet: Mapping[str, Cluster] | None = None
    ) -> Cluster:
        return cls(ApiClient.from_kubeconfig(path), name, dict(fleet or {}))

    def on(self, cluster: str | None) -> Cluster:
        """The reader of `cluster`: this one for None or its own name, else the fleet's."""
        if cluster is None or cluster == self.name:
            return self
        if cluster not in self.fleet:
            known = ", ".join([self.name, *self.fleet]) if self.fleet else "one, unnamed"
            raise ValueError(f"no cluster {cluster!r} in this world (its clusters: {known})")
        return self.fleet[cluster]

    def get(self, kind: str, name: str, namespace: str | None = None) -> Json | None:
        base, plural, namespaced = _kind(kind)
        where = f"/namespaces/{namespace or 'default'}" if namespaced else ""
        try:
            return self.client.get_json(f"{base}{where}/{plural}/{name}")
        except SandboxUnreachable as exc:
            if exc.status == 404:
                return None
            raise

    def replace(self, obj: Json, *, manager: str) -> Json:
        """PUT `obj` back (an update, as `kubectl edit` writes it) under field manager `manager`."""
        meta = obj["metadata"]
        base, plural, namespaced = _kind(str(obj.get("kind")))
        where = f"/namespaces/{meta['namespace']}" if namespaced else ""
        query = urllib.parse.urlencode({"fieldManager": manager})
        path = f"{base}{where}/{plural}/{meta['name']}?{query}"
        done: Json = self.client.call("PUT", path, obj)
        return done

    def items(self, kind: str, *, namespace: str | None = None, selector: str = "") -> list[Json]:
        base, plural, _ = _kind(kind)
        where = f"/namespaces/{namespace}" if namespace else ""
        query = f"?labelSelector={urllib.parse.quote(selector)}" if selector else ""
        items: list[Json] = self.client.get_json(f"{base}{where}/{plural}{query}")["items"]
        return items

    def rolled_out(self, namespace: str, name: str) -> bool:
        found = self.get("Deployment", name, namespace)
        if found is None:
            return False
        wanted = found.get("spec", {}).get("replicas", 1)
        status = found.get("status", {})
        return bool(
            status.get("observedGeneration", 0) >= found["metadata"].get("generation", 0)
            and status.get("updatedReplicas", 0) == wanted
            and status.get("availableReplicas", 0) == wanted
            and status.get("replicas", 0) == wanted
        )

    def ready_pods(self, namespace: str, selector: str) -> int:
        pods = self.items("Pod", namespace=namespace, selector=selector)
        return sum(
            1 for pod in pods if _ready(pod) and not pod["metadata"].get("deletionTimestamp")
        )

    def matching(
        self,
        kind: str,
        part: Json,
        *,
        namespace: str | None = None,
        name: str | None = None,
        without: Json | None = None,
        exactly: Json | None = None,
    ) -> list[Json]:
        """The objects of `kind` (in `namespace`, named `name` when given) that include `part`,
        do not include `without`, and hold the dotted fields of `exactly` at those values."""
        found = self.items(kind, namespace=namespace)
        return [
            obj
            for obj in found
            if (name is None or obj["metadata"]["name"] == name)
            and includes(obj, part)
            and (without is None or not includes(obj, without))
            and all(field_at(obj, path) == value for path, value in (exactly or {}).items())
        ]

    def may(
        self, user: str, verb: str, resource: str, *, groups: list[str], namespace: str | None
    ) -> tuple[bool, str]:
        """Whether `user` may `verb` `resource` (kubectl's `plural[.group][/subresource]`), and
        the API server's reason, from a SubjectAccessReview as `kubectl auth can-i --as` asks."""
        qualified, _, subresource = resource.partition("/")
        plural, _, group = qualified.partition(".")
        attributes = {"verb": verb, "resource": plural, "group": group}
        if subresource:
            attributes["subresource"] = subresource
        if namespace:
            attributes["namespace"] = namespace
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {"user": user, "groups": groups, "resourceAttributes": attributes},
        }
        status = (self.client.call("POST", ACCESS_REVIEWS, review) or {}).get("status", {})
        return bool(status.get("allowed")), str(status.get("reason") or "no reason given")

    def secret_values(self, namespace: str, name: str) -> list[str]:
        found = self.get("Secret", name, namespace) or {}
        values = [
            base64.b64decode(v).decode(errors="replace") for v in found.get("data", {}).values()
        ]
        return [v for v in values if len(v) >= 6]  # shorter values would match ordinary words

    def fingerprint(self) -> dict[str, str]:
        """`Kind/namespace/name` -> a hash of its uid and written parts, for every object; the
        fleet's other clusters' too, as `cluster:Kind/namespace/name`."""
        found = {
            f"{name}:{key}": digest
            for name, other in self.fleet.items()
            for key, digest in other.fingerprint().items()
        }
        for kind in WATCHED:
            for obj in self.items(kind):
                meta = obj["metadata"]
                key = f"{kind}/{meta.get('namespace', '')}/{meta['name']}".replace("//", "/")
                written = {part: field_at(obj, part) for part in WRITTEN_PARTS}
                text = json.dumps([meta.get("uid"), written], sort_keys=True)
                found[key] = hashlib.sha256(text.encode()).hexdigest()
        return found


def changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Objects created, deleted or written between two fingerprints, sorted."""
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def includes(whole: Any, part: Any) -> bool:
    """Whether `whole` includes `part` (see the module docstring)."""
    if isinstance(part, dict):
        return isinstance(whole, dict) and all(
            key in whole and includes(whole[key], value) for key, value in part.items()
        )
    if isinstance(part, list):
        return isinstance(whole, list) and all(
            any(includes(item, wanted) for item in whole) for wanted in part
        )
    if isinstance(part, bool) or isinstance(whole, bool):
        return whole is part  # True is no 1: `ready: true` must not pass on a count of one
    return bool(whole == part)


def _parts(path: str) -> list[str]:
    """A dotted path's parts; `\\.` is a dot inside a key (`spec.hard.requests\\.cpu`)."""
    return [part.replace("\\.", ".") for part in re.split(r"(?<!\\)\.", path)]


def field_at(obj: Any, path: str) -> Any:
    """The value at a dotted path (`spec.template.spec.containers.0.image`), None if absent."""
    here = obj
    for part in _parts(path):
        if isinstance(here, list) and part.isdigit() and int(part) < len(here):
            here = here[int(part)]
        elif isinstance(here, dict) and part in here:
            here = here[part]
        else:
            return None
    return here


def set_at(obj: Json, path: str, value: Any) -> None:
    """Set the value at a dotted path (as `field_at` reads it), creating maps on the way."""
    here: Any = obj
    parts = _parts(path)
    for part in parts[:-1]:
        here = here[int(part)] if isinstance(here, list) else here.setdefault(part, {})
    last = parts[-1]
    if isinstance(here, list):
        here[int(last)] = value
    else:
        here[last] = value


def _kind(kind: str) -> tuple[str, str, bool]:
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r} is not one the evals read; use one of {', '.join(KINDS)}")
    return KINDS[kind]


def _ready(pod: Json) -> bool:
    conditions = pod.get("status", {}).get("conditions", [])
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
