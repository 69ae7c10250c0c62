"""The RBAC authorizer: may this user do this verb on this resource or path?

It evaluates exactly what kube-apiserver's RBAC authorizer evaluates: every ClusterRoleBinding,
then (for a namespaced request) the RoleBindings of that namespace, keeping the bindings with a
subject that names the user, one of the user's groups, or the user's ServiceAccount; a binding's
roleRef names a Role in the binding's namespace or a ClusterRole (aggregated ClusterRoles resolve to
what they select). The first rule that allows wins and names its binding in the reason, as the real
server's `RBAC: allowed by ...`; a denial carries the errors met on the way (a roleRef to a missing
role), which the real server appends to its 403 message. Members of `system:masters` are always
allowed, ahead of RBAC, as kube-apiserver's privileged-group authorizer does.

The HTTP layer calls `authorize` on every request, so the objects of one read are indexed by
subject and the effective rules of each (user, namespace) are memoized. When the reader exposes a
cheap change counter (`VersionedReader.version`) that work is kept until the counter moves;
otherwise each call starts from a fresh read. This module knows nothing of HTTP or of how objects
are stored.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from sandbox.auth import ObjectReader, UserInfo, service_account_username
from sandbox.rbac.aggregation import ClusterRoleIndex
from sandbox.rbac.attributes import Attributes, Decision
from sandbox.rbac.rules import Rule, compile_rules, unique

RBAC_GROUP = "rbac.authorization.k8s.io"
SYSTEM_MASTERS = "system:masters"
# Bounds the per-read memo; a sandbox has a handful of identities, so this is rarely reached.
_MEMO_LIMIT = 1024


class VersionedReader(ObjectReader, Protocol):
    """A reader whose `version` changes whenever any stored object changes."""

    @property
    def version(self) -> int: ...


@dataclass(frozen=True)
class _Grant:
    """One binding that applies to a user: its rules, or why they could not be resolved."""

    description: str  # `ClusterRoleBinding "x" of ClusterRole "y" to Group "z"`
    rules: tuple[Rule, ...] = ()
    error: str = ""


@dataclass(frozen=True)
class _Match:
    position: int
    subject_index: int
    binding: Mapping[str, Any]
    subject: Mapping[str, Any]


class _BindingIndex:
    """Bindings of one kind and scope, indexed by the username or group each subject names."""

    def __init__(self, bindings: Iterable[Mapping[str, Any]], *, namespace: str) -> None:
        self._users: dict[str, list[_Match]] = {}
        self._groups: dict[str, list[_Match]] = {}
        for position, binding in enumerate(bindings):
            for index, subject in enumerate(binding.get("subjects") or ()):
                if isinstance(subject, Mapping):
                    self._add(_Match(position, index, binding, subject), namespace)

    def _add(self, match: _Match, namespace: str) -> None:
        kind, name = match.subject.get("kind"), match.subject.get("name")
        if not isinstance(name, str):
            return
        if kind == "User":
            self._users.setdefault(name, []).append(match)
        elif kind == "Group":
            self._groups.setdefault(name, []).append(match)
        elif kind == "ServiceAccount":
            # An unqualified ServiceAccount subject means one in the binding's own namespace.
            sa_namespace = match.subject.get("namespace") or namespace
            if sa_namespace:
                username = service_account_username(sa_namespace, name)
                self._users.setdefault(username, []).append(match)

    def matching(self, user: UserInfo) -> list[_Match]:
        """Bindings naming the user, in stored order, each with the first subject that matched."""
        found = list(self._users.get(user.username, ()))
        for group in user.groups:
            found.extend(self._groups.get(group, ()))
        found.sort(key=lambda m: (m.position, m.subject_index))
        seen: set[int] = set()
        result = []
        for match in found:
            if match.position not in seen:
                seen.add(match.position)
                result.append(match)
        return result


class _Policy:
    """The RBAC objects of one read, parsed lazily and memoized."""

    def __init__(self, reader: ObjectReader) -> None:
        self._reader = reader
        self._namespaced: dict[str, _BindingIndex] = {}
        self._roles: dict[str, dict[str, tuple[Rule, ...]]] = {}
        self._grants: dict[tuple[str, tuple[str, ...], str], tuple[_Grant, ...]] = {}

    @functools.cached_property
    def _cluster_bindings(self) -> _BindingIndex:
        return _BindingIndex(self._reader.objects(RBAC_GROUP, "clusterrolebindings"), namespace="")

    @functools.cached_property
    def _cluster_roles(self) -> ClusterRoleIndex:
        return ClusterRoleIndex(self._reader.objects(RBAC_GROUP, "clusterroles"))

    def grants(self, user: UserInfo, namespace: str) -> tuple[_Grant, ...]:
        key = (user.username, tuple(user.groups), namespace)
        cached = self._grants.get(key)
        if cached is None:
            cached = self._compute_grants(user, namespace)
            if len(self._grants) >= _MEMO_LIMIT:
                self._grants.clear()
            self._grants[key] = cached
        return cached

    def _compute_grants(self, user: UserInfo, namespace: str) -> tuple[_Grant, ...]:
        grants = [
            self._grant(m, kind="ClusterRoleBinding", namespace="")
            for m in self._cluster_bindings.matching(user)
        ]
        if namespace:
            grants.extend(
                self._grant(m, kind="RoleBinding", namespace=namespace)
                for m in self._role_bindings(namespace).matching(user)
            )
        return tuple(grants)

    def _role_bindings(self, namespace: str) -> _BindingIndex:
        index = self._namespaced.get(namespace)
        if index is None:
            bindings = self._reader.objects(RBAC_GROUP, "rolebindings", namespace)
            index = self._namespaced[namespace] = _BindingIndex(bindings, namespace=namespace)
        return index

    def _grant(self, match: _Match, *, kind: str, namespace: str) -> _Grant:
        ref = match.binding.get("roleRef") or {}
        role_kind, role_name = str(ref.get("kind", "")), str(ref.get("name", ""))
        description = _describe(match, kind=kind, namespace=namespace, role_kind=role_kind)
        rules: tuple[Rule, ...] | None
        if role_kind == "ClusterRole":
            rules = self._cluster_roles.rules(role_name)
        elif role_kind == "Role" and namespace:
            rules = self._namespace_roles(namespace).get(role_name)
        else:
            return _Grant(description, error=f'unsupported role reference kind: "{role_kind}"')
        if rules is None:
            missing = f'{role_kind.lower()}.{RBAC_GROUP} "{role_name}" not found'
            return _Grant(description, error=missing)
        return _Grant(description, rules=rules)

    def _namespace_roles(self, namespace: str) -> dict[str, tuple[Rule, ...]]:
        roles = self._roles.get(namespace)
        if roles is None:
            roles = self._roles[namespace] = {
                str((role.get("metadata") or {}).get("name", "")): compile_rules(role.get("rules"))
                for role in self._reader.objects(RBAC_GROUP, "roles", namespace)
            }
        return roles


def _describe(match: _Match, *, kind: str, namespace: str, role_kind: str) -> str:
    """How the real server names the binding that allowed a request."""
    meta = match.binding.get("metadata") or {}
    name = str(meta.get("name", ""))
    if kind == "RoleBinding":
        name = f"{name}/{namespace}"
    ref_name = (match.binding.get("roleRef") or {}).get("name", "")
    subject_kind = match.subject.get("kind", "")
    subject_name = str(match.subject.get("name", ""))
    if subject_kind == "ServiceAccount":
        subject_name = f"{subject_name}/{match.subject.get('namespace') or namespace}"
    return f'{kind} "{name}" of {role_kind} "{ref_name}" to {subject_kind} "{subject_name}"'


def _denial_reason(errors: list[str]) -> str:
    """Kubernetes' aggregate-error text: one error bare, several deduplicated in brackets."""
    distinct = list(dict.fromkeys(errors))
    if not distinct:
        return ""
    text = distinct[0] if len(distinct) == 1 else "[" + ", ".join(distinct) + "]"
    return f"RBAC: {text}"


def _reader_version(reader: ObjectReader) -> int | None:
    version = getattr(reader, "version", None)
    if isinstance(version, int) and not isinstance(version, bool):
        return version
    return None


class Authorizer:
    def __init__(self, reader: ObjectReader) -> None:
        self._reader = reader
        self._cached: tuple[int, _Policy] | None = None

    def authorize(self, attrs: Attributes) -> Decision:
        if SYSTEM_MASTERS in attrs.user.groups:
            return Decision(allowed=True)
        errors: list[str] = []
        for grant in self._policy().grants(attrs.user, attrs.namespace):
            if grant.error:
                errors.append(grant.error)
            elif any(rule.allows(attrs) for rule in grant.rules):
                return Decision(allowed=True, reason=f"RBAC: allowed by {grant.description}")
        return Decision(allowed=False, reason=_denial_reason(errors))

    def rules_for(
        self, user: UserInfo, namespace: str
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(resourceRules, nonResourceRules) as a SelfSubjectRulesReview reports them."""
        rules = unique(r for g in self._policy().grants(user, namespace) for r in g.rules)
        resource = [r.resource_rule() for r in rules if r.resources]
        non_resource = [r.non_resource_rule() for r in rules if r.non_resource_urls]
        return resource, non_resource

    def _policy(self) -> _Policy:
        version = _reader_version(self._reader)
        if version is None:
            return _Policy(self._reader)
        if self._cached is None or self._cached[0] != version:
            self._cached = (version, _Policy(self._reader))
        return self._cached[1]
