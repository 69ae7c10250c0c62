"""What a write leads to besides itself, read off the object as it is and as it will be.

The gate judges changes, not patch documents: `remove /spec/replicas`, `{"spec": {"replicas":
null}}`, `replace /spec`, a `copy` into `/spec/replicas` or `replicas: "1"` all say nothing a
reader of the document would call a scale, and all of them scale. So every consequence here
compares the live object with the server's dry run of the write (`after`), never the request:

- a new replica count is a scale (from the live count to the dry run's);
- images the object runs after the write and did not run before are the action's `images`,
  which an ImagePolicy judges;
- owner references gained make the object's life another object's: garbage collection deletes
  it when that owner goes (a short-lived Job, say), so it is judged as a delete;
- deleting a namespace deletes everything in it, so each object in it is judged as a delete
  too, by the rules written for it (`contents`).

Knows nothing of policies' verdicts; `calls` plans with it, `gate` judges what it plans.
"""

from __future__ import annotations

from collections.abc import Iterator

from core.connection import Api, Json
from core.errors import ToolError
from mcp_servers.kube.resources import Resource

# Namespaced kinds that rules are written for; deleting their namespace deletes them too.
CONTENTS = (
    "deployments.apps",
    "statefulsets.apps",
    "daemonsets.apps",
    "replicasets.apps",
    "cronjobs.batch",
    "jobs.batch",
    "persistentvolumeclaims",
    "services",
    "configmaps",
    "secrets",
    "networkpolicies.networking.k8s.io",
    "ingresses.networking.k8s.io",
    "poddisruptionbudgets.policy",
    "horizontalpodautoscalers.autoscaling",
    "roles.rbac.authorization.k8s.io",
    "rolebindings.rbac.authorization.k8s.io",
    "resourcequotas",
    "limitranges",
)


def count(value: object) -> int | None:
    """A replica count as the API server would read it: integers, integral floats and numeric
    strings count; anything else (None, negative, 1.5, a list) is no count."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return value if isinstance(value, int) and value >= 0 else None


def replicas(obj: Json | None) -> int | None:
    spec = (obj or {}).get("spec")
    return count(spec.get("replicas")) if isinstance(spec, dict) else None


def images(obj: Json | None) -> list[str]:
    """Every image the object's pods run: its pod spec's containers, init and ephemeral ones."""
    spec = _pod_spec(obj or {})
    found: list[str] = []
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for container in _list(spec.get(field)):
            image = container.get("image") if isinstance(container, dict) else None
            if isinstance(image, str) and image not in found:
                found.append(image)
    return found


def new_images(live: Json | None, after: Json | None) -> list[str]:
    """Images `after` runs that `live` did not (all of them for a new object)."""
    before = set(images(live))
    return [image for image in images(after) if image not in before]


def owned_anew(live: Json | None, after: Json | None) -> bool:
    """Whether the write gives an existing object an owner it did not have."""
    if live is None or after is None:
        return False
    return bool(_owners(after) - _owners(live))


def contents(
    api: Api, resources: list[Resource], namespace: str
) -> Iterator[tuple[Resource, Json]]:
    """Every named object of `resources` in `namespace` (one list call each; a kind this
    identity may not list is skipped: the API server's own RBAC still judges the delete)."""
    for resource in resources:
        try:
            answer = api.get(resource.path(namespace), what=resource.label)
        except ToolError:
            continue
        for item in _list(answer.get("items")):
            if isinstance(item, dict) and (item.get("metadata") or {}).get("name"):
                yield resource, item


def _owners(obj: Json) -> set[tuple[str, str, str]]:
    references = _list((obj.get("metadata") or {}).get("ownerReferences"))
    return {
        (str(r.get("kind")), str(r.get("name")), str(r.get("uid")))
        for r in references
        if isinstance(r, dict)
    }


def _pod_spec(obj: Json) -> Json:
    spec = obj.get("spec")
    for step in ("jobTemplate", "spec", "template", "spec"):
        if not isinstance(spec, dict) or "containers" in spec:
            break
        if step in spec:
            spec = spec[step]
    return spec if isinstance(spec, dict) else {}


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []
