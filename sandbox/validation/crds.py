"""Rules for CustomResourceDefinitions: group, names, scope, versions, and the object's name.

A CRD's name is not free: it must be `<plural>.<group>`, because the API server serves the
resource at that path. The structural-schema rules (what `openAPIV3Schema` may contain) are not
checked here; only that each version has a schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sandbox.errors import Cause
from sandbox.validation import causes, names
from sandbox.validation.payload import items, mapping, strings, text

SCOPES = ("Cluster", "Namespaced")


def validate_custom_resource_definition(obj: Mapping[str, Any]) -> list[Cause]:
    spec = mapping(obj, "spec")
    found = _group(text(spec, "group"))
    found += _names(mapping(spec, "names"), "spec.names")
    scope = spec.get("scope")
    if not scope:
        found.append(causes.required("spec.scope"))
    elif scope not in SCOPES:
        found.append(causes.not_supported("spec.scope", scope, SCOPES))
    found += _versions(items(spec, "versions"), "spec.versions")
    name = text(mapping(obj, "metadata"), "name")
    expected = f"{text(mapping(spec, 'names'), 'plural')}.{text(spec, 'group')}"
    if name and name != expected:
        found.append(
            causes.invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group')
        )
    return found


def _group(group: str) -> list[Cause]:
    if not group:
        return [causes.required("spec.group")]
    if problems := names.dns1123_subdomain(group):
        return [causes.invalid("spec.group", group, ",".join(problems))]
    if "." not in group:
        return [causes.invalid("spec.group", group, "should be a domain with at least one dot")]
    return []


def _names(crd_names: Mapping[str, Any], path: str) -> list[Cause]:
    found: list[Cause] = []
    for key in ("plural", "kind"):
        if not text(crd_names, key):
            found.append(causes.required(f"{path}.{key}"))
    for key in ("plural", "singular"):
        value = text(crd_names, key)
        if value and (problems := names.dns1035_label(value)):
            found.append(causes.invalid(f"{path}.{key}", value, ",".join(problems)))
    for key in ("kind", "listKind"):
        value = text(crd_names, key)
        if value and (problems := names.dns1035_label(value.lower())):
            detail = "may have mixed case, but should otherwise match: " + ",".join(problems)
            found.append(causes.invalid(f"{path}.{key}", value, detail))
    kind = text(crd_names, "kind")
    if kind and kind == text(crd_names, "listKind"):
        found.append(
            causes.invalid(f"{path}.listKind", kind, "kind and listKind may not be the same")
        )
    for i, short in enumerate(strings(crd_names, "shortNames")):
        if problems := names.dns1035_label(short):
            found.append(causes.invalid(f"{path}.shortNames[{i}]", short, ",".join(problems)))
    return found


def _versions(versions: list[Mapping[str, Any]], path: str) -> list[Cause]:
    if not versions:
        return [causes.required(path, "must have exactly one version marked as storage version")]
    found: list[Cause] = []
    version_names = [text(v, "name") for v in versions]
    for i, version in enumerate(versions):
        if problems := names.dns1035_label(version_names[i]):
            found.append(causes.invalid(f"{path}[{i}].name", version_names[i], ",".join(problems)))
        if not isinstance(mapping(version, "schema").get("openAPIV3Schema"), Mapping):
            found.append(
                causes.required(f"{path}[{i}].schema.openAPIV3Schema", "schemas are required")
            )
    if len(set(version_names)) != len(version_names):
        found.append(causes.invalid(path, version_names, "must contain unique version names"))
    if sum(1 for v in versions if v.get("storage") is True) != 1:
        found.append(
            causes.invalid(
                path, version_names, "must have exactly one version marked as storage version"
            )
        )
    return found
