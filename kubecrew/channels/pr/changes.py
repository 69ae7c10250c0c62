"""Whether a pull request's change is the action its approval request approves.

A grant on a PR answers the request the PR carries, and the request names one action (scale
Deployment shop/web 5 -> 3). Nothing else ties the two: the PR's branch can say anything. So
before a review's approval counts (`pr_approvals`), the PR's files are read whole, before and
after (`Provider.file_changes`), cut into Kubernetes objects, and compared with the action:

- scale: the target changes, and only at `spec.replicas`, to the approved count;
- resize: the target changes, and only in its containers' `resources`;
- patch, restart, rollback: the target changes (and, when the action names replicas, to them);
- delete: the target is removed;
- apply: every object the PR changes is the target or lives in its namespace (a namespace's
  blueprint writes its quota, limits and bindings there), and a named replica count holds;
- drain, cordon, uncordon, evict: not something a pull request does.
An object the action does not cover, changed beside it, is a difference too. The replica count
*before* is not compared: the approval is for what the cluster ends up running, and git may
lag the live count (an autoscaler, a hand scale) without making the change any other.

Files that are not YAML are not applied by the sync and are not judged; a YAML document that
is not one object (a kustomization) is, since it changes what is rendered.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

from core.policy.actions import Action, TargetRef
from mcp_servers.gitops.providers.base import FileChange
from mcp_servers.gitops.repo import kind_is_cluster_scoped

Key = tuple[str, str, str]  # kind, namespace ("" when cluster-scoped), name
SINGLE = ("scale", "resize", "patch", "restart", "rollback")
NOT_BY_PR = ("drain", "cordon", "uncordon", "evict")
_RESOURCES = ("spec.template.spec.containers[", "spec.template.spec.initContainers[")


def difference(action: Action, changes: list[FileChange], *, default_ns: str = "default") -> str:
    """How the change differs from `action`, in words; "" when it is that action."""
    if action.type in NOT_BY_PR:
        return f"a {action.type} is not a change a pull request makes"
    changed, odd = _changed(changes, default_ns)
    target = _key(action.target)
    shown = _show(target)
    if odd:
        return f"it changes {odd[0]}, which is not one Kubernetes object"
    before, after = changed.get(target, (None, None))
    if action.type == "delete":
        if target not in changed or after is not None:
            return f"it does not remove {shown}"
    elif target not in changed and action.type != "apply":
        return f"it does not change {shown}"
    others = [k for k in changed if k != target and not _covered(action, k)]
    if others:
        more = f" and {len(others) - 1} more" * (len(others) > 1)
        return f"it also changes {_show(others[0])}{more}, which the request does not cover"
    if action.replicas is not None and action.type != "delete" and target in changed:
        now = ((after or {}).get("spec") or {}).get("replicas")
        if now != action.replicas.to:
            return f"it sets spec.replicas of {shown} to {now}, not {action.replicas.to}"
    fields = _fields(before, after)
    if action.type == "scale" and (extra := [f for f in fields if f != "spec.replicas"]):
        return f"it changes {extra[0]} of {shown} as well, and a scale changes spec.replicas only"
    if action.type == "resize":
        extra = [f for f in fields if not (f.startswith(_RESOURCES) and ".resources" in f)]
        if extra:
            return f"it changes {extra[0]} of {shown}, and a resize changes resources only"
    return ""


def _key(target: TargetRef) -> Key:
    namespace = "" if kind_is_cluster_scoped(target.kind) else target.namespace or ""
    return target.kind, namespace, target.name


def _show(key: Key) -> str:
    kind, namespace, name = key
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def _covered(action: Action, key: Key) -> bool:
    """Whether an `apply` of the target reaches an object other than the target."""
    if action.type != "apply":
        return False
    target = _key(action.target)
    if target[0] == "Namespace":
        return key[1] == target[2]
    return bool(target[1]) and key[1] == target[1]


def _changed(
    changes: list[FileChange], default_ns: str
) -> tuple[dict[Key, tuple[dict[str, Any] | None, dict[str, Any] | None]], list[str]]:
    """The objects whose text differs (before, after; None where absent), and the changed
    YAML documents that are no object ("path document N")."""
    objects: dict[Key, list[dict[str, Any] | None]] = {}
    odd: dict[str, list[dict[str, Any] | None]] = {}
    for change in changes:
        if not change.path.endswith((".yaml", ".yml")):
            continue
        for side, text in enumerate((change.before, change.after)):
            for index, doc in _documents(text):
                key = _object_key(doc, default_ns)
                if key is None:
                    odd.setdefault(f"{change.path} document {index}", [None, None])[side] = doc
                else:
                    objects.setdefault(key, [None, None])[side] = doc
    changed = {k: (v[0], v[1]) for k, v in objects.items() if v[0] != v[1]}
    return changed, [where for where, (b, a) in odd.items() if b != a]


def _documents(text: str | None) -> Iterator[tuple[int, dict[str, Any]]]:
    if text is None:
        return
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError:
        docs = [{"unreadable": True}]  # a file that does not parse is no object either
    for index, doc in enumerate(docs):
        yield index, doc if isinstance(doc, dict) else {"value": doc}


def _object_key(doc: dict[str, Any], default_ns: str) -> Key | None:
    meta = doc.get("metadata") or {}
    kind, name = doc.get("kind"), meta.get("name") if isinstance(meta, dict) else None
    if not isinstance(kind, str) or not isinstance(name, str) or not kind or not name:
        return None
    scoped = kind_is_cluster_scoped(kind)
    return kind, "" if scoped else str(meta.get("namespace") or default_ns), name


def _fields(before: Any, after: Any, at: str = "") -> list[str]:
    """The paths where `before` and `after` differ (lists of mappings by index)."""
    if before == after:
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        found: list[str] = []
        for key in [*before, *(k for k in after if k not in before)]:
            found += _fields(before.get(key), after.get(key), f"{at}.{key}" if at else str(key))
        return found
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            p
            for i, (b, a) in enumerate(zip(before, after, strict=True))
            for p in _fields(b, a, f"{at}[{i}]")
        ]
    return [at or "the whole object"]
