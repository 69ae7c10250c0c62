"""Cell formatting shared by several kinds: label sets, selectors, container lists, capped lists.

Each helper reproduces one Kubernetes formatting rule (`labels.FormatLabels`,
`metav1.FormatLabelSelector`, the "a,b,c + 2 more..." lists) so that the family modules stay
about their kinds. Helpers here read plain JSON values and know nothing of any one kind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

NONE = "<none>"
UNSET = "<unset>"


def sub(obj: Mapping[str, Any] | None, *path: str) -> dict[str, Any]:
    """The mapping at `path` inside `obj`, or an empty one; tolerates missing and null levels."""
    node: Any = obj
    for key in path:
        # Objects are decoded JSON, so `dict` is exact, and much faster to test than `Mapping`.
        if not isinstance(node, dict):
            return {}
        node = node.get(key)
    return node if isinstance(node, dict) else {}


def field(obj: Mapping[str, Any] | None, key: str) -> dict[str, Any]:
    """`sub` for one level; the hot paths (pods) call it several times per row."""
    value = obj.get(key) if obj else None
    return value if isinstance(value, dict) else {}


def items(obj: Mapping[str, Any] | None, key: str) -> list[Any]:
    """The list under `key`, or an empty one."""
    value = obj.get(key) if obj else None
    return value if isinstance(value, list) else []


def format_labels(labels: Mapping[str, Any] | None) -> str:
    """`a=1,b=2` sorted by key, or `<none>`."""
    if not labels:
        return NONE
    return ",".join(f"{key}={labels[key]}" for key in sorted(labels))


def selector_string(selector: Mapping[str, Any] | None) -> str:
    """A LabelSelector in Kubernetes' selector syntax (`app=web,tier in (a,b),!legacy`)."""
    if not selector:
        return ""
    requirements: list[tuple[str, str]] = [
        (key, f"{key}={value}") for key, value in (selector.get("matchLabels") or {}).items()
    ]
    for expression in selector.get("matchExpressions") or ():
        key = str(expression.get("key", ""))
        requirements.append((key, _requirement(key, expression)))
    requirements.sort(key=lambda pair: pair[0])
    return ",".join(text for _, text in requirements)


def _requirement(key: str, expression: Mapping[str, Any]) -> str:
    operator = expression.get("operator")
    values = ",".join(sorted(str(v) for v in expression.get("values") or ()))
    if operator == "In":
        return f"{key} in ({values})"
    if operator == "NotIn":
        return f"{key} notin ({values})"
    if operator == "DoesNotExist":
        return f"!{key}"
    return key  # Exists


def format_selector(selector: Mapping[str, Any] | None) -> str:
    """`metav1.FormatLabelSelector`: the selector, or `<none>` when it selects by nothing."""
    return selector_string(selector) or NONE


def containers_and_images(pod_spec: Mapping[str, Any] | None) -> tuple[str, str]:
    containers = items(pod_spec, "containers")
    names = ",".join(str(c.get("name", "")) for c in containers)
    images = ",".join(str(c.get("image", "")) for c in containers)
    return names, images


def template_spec(obj: Mapping[str, Any]) -> dict[str, Any]:
    """`spec.template.spec` of a workload."""
    return sub(obj, "spec", "template", "spec")


def bool_text(value: Any) -> str:
    """`True`/`False` as Kubernetes prints an optional boolean, `<unset>` when absent."""
    if value is None:
        return UNSET
    return "True" if value else "False"


def capped(entries: Iterable[str], *, limit: int = 3, empty: str = UNSET) -> str:
    """`a,b,c + 2 more...` after `limit` entries; `empty` when there are none."""
    shown: list[str] = []
    count = 0
    for entry in entries:
        if count < limit:
            shown.append(entry)
        count += 1
    text = ",".join(shown)
    if count > limit:
        return f"{text} + {count - limit} more..."
    return text or empty


def join_host_port(host: str, port: Any) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def condition_status(conditions: Iterable[Mapping[str, Any]], kind: str) -> str | None:
    """The status of the first condition of type `kind`, or None when there is none."""
    for condition in conditions:
        if condition.get("type") == kind:
            return str(condition.get("status", ""))
    return None


def load_balancer_addresses(ingress: Iterable[Mapping[str, Any]]) -> str:
    """Sorted, de-duplicated IPs (or hostnames) of a load balancer status."""
    found = {
        str(i.get("ip") or i.get("hostname")) for i in ingress if i.get("ip") or i.get("hostname")
    }
    return ",".join(sorted(found))
