"""One RBAC PolicyRule, compiled once and matched against request attributes.

Matching follows Kubernetes exactly: `*` matches any verb, group, resource or URL; a rule resource
`pods/log` matches only that subresource and `*/scale` matches the scale subresource of anything;
non-empty `resourceNames` restrict a rule to those names (so never to list or create, which carry
no name); a non-resource URL ending in `*` matches by prefix.

This module knows nothing of roles, bindings or where rules come from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sandbox.rbac.attributes import Attributes

ALL = "*"


@dataclass(frozen=True)
class Rule:
    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, rule: Mapping[str, Any]) -> Rule:
        return cls(
            verbs=_strings(rule.get("verbs")),
            api_groups=_strings(rule.get("apiGroups")),
            resources=_strings(rule.get("resources")),
            resource_names=_strings(rule.get("resourceNames")),
            non_resource_urls=_strings(rule.get("nonResourceURLs")),
        )

    def to_dict(self) -> dict[str, Any]:
        """The PolicyRule JSON, omitting empty lists as the API server does."""
        out: dict[str, Any] = {"verbs": list(self.verbs)}
        for key, values in (
            ("apiGroups", self.api_groups),
            ("resources", self.resources),
            ("resourceNames", self.resource_names),
            ("nonResourceURLs", self.non_resource_urls),
        ):
            if values:
                out[key] = list(values)
        return out

    def allows(self, attrs: Attributes) -> bool:
        if ALL not in self.verbs and attrs.verb not in self.verbs:
            return False
        if not attrs.is_resource_request:
            return self._url_matches(attrs.path)
        return (
            (ALL in self.api_groups or attrs.api_group in self.api_groups)
            and self._resource_matches(attrs)
            and (not self.resource_names or attrs.name in self.resource_names)
        )

    def resource_rule(self) -> dict[str, Any]:
        """This rule as a SelfSubjectRulesReview `resourceRules` entry."""
        out: dict[str, Any] = {"verbs": list(self.verbs)}
        if self.api_groups:
            out["apiGroups"] = list(self.api_groups)
        if self.resources:
            out["resources"] = list(self.resources)
        if self.resource_names:
            out["resourceNames"] = list(self.resource_names)
        return out

    def non_resource_rule(self) -> dict[str, Any]:
        """This rule as a SelfSubjectRulesReview `nonResourceRules` entry."""
        return {"verbs": list(self.verbs), "nonResourceURLs": list(self.non_resource_urls)}

    def _resource_matches(self, attrs: Attributes) -> bool:
        wanted = attrs.combined_resource
        for resource in self.resources:
            if resource in (ALL, wanted):
                return True
            if attrs.subresource and resource == f"*/{attrs.subresource}":
                return True
        return False

    def _url_matches(self, path: str) -> bool:
        for url in self.non_resource_urls:
            if url in (ALL, path):
                return True
            if isinstance(url, str) and url.endswith(ALL) and path.startswith(url.rstrip(ALL)):
                return True
        return False


def compile_rules(rules: Iterable[Mapping[str, Any]] | None) -> tuple[Rule, ...]:
    return tuple(Rule.from_dict(rule) for rule in rules or () if isinstance(rule, Mapping))


def unique(rules: Iterable[Rule]) -> tuple[Rule, ...]:
    """Rules in first-seen order without exact duplicates."""
    return tuple(dict.fromkeys(rules))


def _strings(values: object) -> tuple[str, ...]:
    # Stored objects passed schema validation; a stray non-string would only never match.
    return tuple(values) if isinstance(values, list | tuple) else ()
