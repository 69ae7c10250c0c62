"""Who may do what: the cluster's RBAC objects evaluated as the API server's RBAC authorizer does.

`Access.review` answers three questions from Roles, ClusterRoles and their bindings:
- who may `verb` a resource (in a namespace, or anywhere): every subject a binding grants it to;
- may one subject do it (yes or no, with the bindings and rules that grant it);
- everything one subject may do (as `kubectl auth can-i --list --as` shows it).

The evaluation follows the authorizer's rules, which are facts of Kubernetes: a rule allows a
request when its verbs, apiGroups and resources hold the request's (`*` holds everything), the
resource is matched as `plural/subresource` (so `pods` does not grant `pods/log`; `*/scale`
grants every scale subresource), and a rule with resourceNames allows only those names (so never
a list or a create). ClusterRoleBindings grant everywhere; a RoleBinding grants only in its own
namespace, whether it refers to a Role there or to a ClusterRole; a cluster-scoped resource is
granted by ClusterRoleBindings alone. A ServiceAccount subject without a namespace means one in
the binding's namespace. A ClusterRole with an aggregationRule and no rules yet is given the
rules of the ClusterRoles its selectors pick, as the aggregation controller would.

Group membership is not an RBAC fact: it comes from how an identity signs in. For a user the
review counts only `system:authenticated`, which every signed-in identity has; for a
ServiceAccount also the groups the API server gives every ServiceAccount. Answers say so.

Reading needs list on the four RBAC kinds. What this identity may not read is named in
`partial` and the rest is still evaluated, so an answer never claims more certainty than it has.
This module knows nothing of MCP; the tool in `server.py` calls `Access.review`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from pydantic import ValidationError

from core.connection import Api, Json
from core.errors import InvalidArgument, NotFound, PermissionDenied
from core.policy.documents.selectors import LabelSelector
from mcp_servers.common import arguments, bounds
from mcp_servers.kube.reads import Reads
from mcp_servers.kube.views import VERBS

RBAC = "rbac.authorization.k8s.io"
AUTHENTICATED = "system:authenticated"
SA_PREFIX = "system:serviceaccount:"
# Words people use for a subresource, with the resource it belongs to.
SUBRESOURCE_WORDS = {
    "log": ("pods", "log"), "logs": ("pods", "log"), "exec": ("pods", "exec"),
    "attach": ("pods", "attach"), "portforward": ("pods", "portforward"),
    "port-forward": ("pods", "portforward"), "eviction": ("pods", "eviction"),
    "evictions": ("pods", "eviction"),
}  # fmt: skip
_SUBJECT = re.compile(r"^[A-Za-z0-9_.:@-]+(/[A-Za-z0-9_.:@-]+)?$")
SubjectKind = Literal["User", "Group", "ServiceAccount"]


@dataclass(frozen=True)
class Subject:
    kind: SubjectKind
    name: str
    namespace: str = ""  # a ServiceAccount's

    @property
    def username(self) -> str:
        if self.kind == "ServiceAccount":
            return f"{SA_PREFIX}{self.namespace}:{self.name}"
        return self.name if self.kind == "User" else ""

    def groups(self) -> tuple[str, ...]:
        """The groups RBAC may assume this subject is in (see the module docstring)."""
        if self.kind == "Group":
            return (self.name,)
        if self.kind == "ServiceAccount":
            sa = "system:serviceaccounts"
            return (sa, f"{sa}:{self.namespace}", AUTHENTICATED)
        return (AUTHENTICATED,)

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"

    def row(self) -> Json:
        return {"kind": self.kind, "name": self.name,
                **({"namespace": self.namespace} if self.namespace else {})}  # fmt: skip


@dataclass(frozen=True)
class Request:
    """The attributes of one API request, as the authorizer sees them."""

    verb: str
    group: str
    resource: str
    subresource: str = ""
    name: str = ""
    namespace: str = ""  # "" for a cluster-scoped resource, or for "in any namespace"

    @property
    def combined(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


@dataclass(frozen=True)
class Rule:
    verbs: tuple[str, ...]
    groups: tuple[str, ...]
    resources: tuple[str, ...]
    names: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()  # nonResourceURLs

    @classmethod
    def of(cls, raw: Json) -> Rule:
        return cls(
            verbs=tuple(raw.get("verbs") or ()),
            groups=tuple(raw.get("apiGroups") or ()),
            resources=tuple(raw.get("resources") or ()),
            names=tuple(raw.get("resourceNames") or ()),
            urls=tuple(raw.get("nonResourceURLs") or ()),
        )

    def allows(self, request: Request, *, any_name: bool = False) -> bool:
        """Whether this rule allows `request`; `any_name`: a rule limited to resourceNames
        counts too (the caller reports the names)."""
        return (
            ("*" in self.verbs or request.verb in self.verbs)
            and ("*" in self.groups or request.group in self.groups)
            and self._resource(request)
            and (not self.names or any_name or request.name in self.names)
        )

    def _resource(self, request: Request) -> bool:
        for resource in self.resources:
            if resource in ("*", request.combined):
                return True
            if request.subresource and resource == f"*/{request.subresource}":
                return True
        return False

    def row(self) -> Json:
        row: Json = {"verbs": list(self.verbs)}
        if self.urls:
            row["non_resource_urls"] = list(self.urls)
        else:
            row["resources"] = [_qualified(r, g) for g in self.groups for r in self.resources]
        if self.names:
            row["resource_names"] = list(self.names)
        return row


@dataclass(frozen=True)
class Binding:
    kind: Literal["RoleBinding", "ClusterRoleBinding"]
    name: str
    namespace: str  # "" for a ClusterRoleBinding
    role_kind: str
    role: str
    subjects: tuple[Subject, ...]

    @property
    def label(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        role_where = f"{self.namespace}/" if self.role_kind == "Role" else ""
        return f"{self.kind} {where}{self.name} -> {self.role_kind} {role_where}{self.role}"

    def holds(self, subject: Subject, groups: Iterable[str]) -> Subject | None:
        """The subject of this binding that `subject` (in `groups`) is, or None."""
        for listed in self.subjects:
            if listed.kind == "Group":
                if listed.name in groups:
                    return listed
            elif subject.kind != "Group" and _username(listed, self.namespace) == subject.username:
                return listed
        return None


@dataclass
class Policy:
    """The RBAC objects read, ready to evaluate. `partial` lists what could not be read."""

    roles: dict[tuple[str, str], list[Rule]] = field(default_factory=dict)
    cluster_roles: dict[str, list[Rule]] = field(default_factory=dict)
    bindings: list[Binding] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)

    def rules_of(self, binding: Binding) -> list[Rule]:
        if binding.role_kind == "Role":
            return self.roles.get((binding.namespace, binding.role), [])
        return self.cluster_roles.get(binding.role, [])

    def applying(self, namespace: str | None, *, namespaced: bool) -> Iterator[Binding]:
        """Bindings that can grant in `namespace` (None: any namespace, each labelled)."""
        for binding in self.bindings:
            cluster_wide = binding.kind == "ClusterRoleBinding"
            if cluster_wide or (namespaced and namespace in (None, binding.namespace)):
                yield binding

    def grants(self, request: Request, *, namespaced: bool) -> Iterator[tuple[Binding, Rule]]:
        """Each binding and rule that allows `request`; with no namespace in a request for a
        namespaced resource, the RoleBindings of every namespace read count, each for its own."""
        for binding in self.applying(request.namespace or None, namespaced=namespaced):
            for rule in self.rules_of(binding):
                if rule.allows(request, any_name=not request.name):
                    yield binding, rule


class Access:
    def __init__(self, reads: Reads) -> None:
        self.reads = reads

    def review(
        self,
        verb: str = "",
        resource: str = "",
        *,
        namespace: str | None = None,
        subject: str | None = None,
        limit: int = bounds.DEFAULT_LIMIT,
        context: str | None = None,
    ) -> Json:
        if not subject and not (verb and resource):
            raise InvalidArgument(
                "give verb and resource (who may do it), a subject (what it may do), or all "
                "three (may the subject do it)"
            )
        if verb and verb not in VERBS:
            raise InvalidArgument(f"verb {verb!r}: use one of {', '.join(VERBS)}")
        api = self.reads.api(context)
        scope = self.reads.namespace(namespace) if namespace else None
        request, namespaced = self._request(api, verb or "*", resource, scope)
        policy = self._policy(api, scope, namespaced=namespaced)
        if not subject:
            return _who(policy, request, namespaced=namespaced, limit=limit)
        who = parse_subject(subject, known=policy.bindings)
        if verb and resource:
            return _may(policy, who, request, namespaced=namespaced)
        return _rights(policy, who, scope, about=request, limit=limit)

    def _request(
        self, api: Api, verb: str, resource: str, namespace: str | None
    ) -> tuple[Request, bool]:
        if not resource:
            return Request(verb, "*", "*", namespace=namespace or ""), True
        word, _, sub = resource.lower().partition("/")
        if word in SUBRESOURCE_WORDS and not sub:
            word, sub = SUBRESOURCE_WORDS[word]
        if sub:
            arguments.kind(sub, argument="subresource")
        found = self.reads.catalog.resolve(api, word)
        where = namespace if found.namespaced and namespace else ""
        return Request(verb, found.group, found.plural, sub, namespace=where), found.namespaced

    def _policy(self, api: Api, namespace: str | None, *, namespaced: bool) -> Policy:
        """The RBAC objects that can matter: Roles and RoleBindings only for a namespaced
        resource, only in `namespace` when one is given."""
        policy = Policy()
        raw_cluster_roles = self._read(api, policy, "clusterroles", None)
        by_name = {o["metadata"]["name"]: o for o in raw_cluster_roles}
        policy.cluster_roles = {name: _aggregated(name, by_name, set()) for name in by_name}
        local = ("roles", "rolebindings") if namespaced else ()
        for obj in self._read(api, policy, "roles", namespace) if local else []:
            meta = obj["metadata"]
            rules = [Rule.of(r) for r in obj.get("rules") or []]
            policy.roles[(meta.get("namespace", ""), meta["name"])] = rules
        for plural in ("clusterrolebindings", *local[1:]):
            for obj in self._read(api, policy, plural, namespace if plural in local else None):
                policy.bindings.append(_binding(obj))
        if len(policy.partial) == 2 + len(local):
            raise PermissionDenied(
                "this identity may not list roles, rolebindings, clusterroles or "
                f"clusterrolebindings ({RBAC}): grant it get/list on them to answer access "
                "questions"
            )
        return policy

    def _read(self, api: Api, policy: Policy, plural: str, namespace: str | None) -> list[Json]:
        resource = self.reads.catalog.resolve(api, f"{plural}.{RBAC}")
        try:
            return self.reads.objects(api, resource, namespace)
        except (PermissionDenied, NotFound) as exc:
            where = f" in {namespace}" if namespace else ""
            policy.partial.append(f"{plural}{where}: {exc.message}")
            return []


def parse_subject(text: str, *, known: Iterable[Binding] = ()) -> Subject:
    """`alice`, `user:alice`, `group:shop-admins`, `kubecrew-system/dev-team`,
    `serviceaccount:kubecrew-system/dev-team` or `system:serviceaccount:ns:name`. A bare name
    that bindings know only as a Group is that Group."""
    text = text.strip()
    if len(text) > 300 or not _SUBJECT.match(text.replace(" ", "")):
        raise InvalidArgument(
            f"subject {text!r}: write a user (alice), group:NAME, or NAMESPACE/SERVICEACCOUNT"
        )
    if text.startswith(SA_PREFIX):
        namespace, _, name = text[len(SA_PREFIX) :].partition(":")
        return _service_account(namespace, name, text)
    prefix, colon, rest = text.partition(":")
    prefix = prefix.lower()
    if colon and prefix in ("group", "g"):
        return Subject("Group", rest)
    if colon and prefix in ("serviceaccount", "sa"):
        namespace, _, name = rest.partition("/")
        return _service_account(namespace, name, text)
    if colon and prefix == "user":
        return Subject("User", rest)
    if "/" in text:
        namespace, _, name = text.partition("/")
        return _service_account(namespace, name, text)
    listed = [s for b in known for s in b.subjects if s.name == text]
    if listed and all(s.kind == "Group" for s in listed):
        return Subject("Group", text)
    return Subject("User", text)


def _service_account(namespace: str, name: str, text: str) -> Subject:
    if not namespace or not name:
        raise InvalidArgument(f"subject {text!r}: a ServiceAccount is NAMESPACE/NAME")
    arguments.namespace(namespace, argument="service account namespace")
    arguments.name(name, argument="service account name")
    return Subject("ServiceAccount", name, namespace)


# -- the three answers ----------------------------------------------------------------------


def _who(policy: Policy, request: Request, *, namespaced: bool, limit: int) -> Json:
    found: dict[Subject, list[Json]] = {}
    for binding, rule in policy.grants(request, namespaced=namespaced):
        via: Json = {"binding": binding.label, "scope": binding.namespace or "cluster"}
        if rule.names:
            via["only_names"] = list(rule.names)
        for subject in binding.subjects:
            named = _resolved(subject, binding)
            if via not in found.setdefault(named, []):
                found[named].append(via)
    rows = [
        {**s.row(), "via": v, **({"limited": True} if all("only_names" in x for x in v) else {})}
        for s, v in sorted(found.items(), key=lambda item: (item[0].kind, str(item[0])))
    ]
    shown = bounds.page(rows, limit=limit, what="subjects")
    return {
        "question": "who",
        "request": _request_row(request),
        "subjects": shown.items,
        "total": shown.total,
        "partial": policy.partial,
        "note": "; ".join(n for n in (shown.note, GROUPS_NOTE) if n),
    }


def _may(policy: Policy, subject: Subject, request: Request, *, namespaced: bool) -> Json:
    """Yes or no, with the grants; asked with no namespace about a namespaced resource, yes
    means everywhere (a ClusterRoleBinding) and `allowed_in` names where RoleBindings allow it."""
    groups = subject.groups()
    grants: list[Json] = []
    limited: list[Json] = []
    for binding, rule in policy.grants(request, namespaced=namespaced):
        through = binding.holds(subject, groups)
        if through is None:
            continue
        row = {"binding": binding.label, "scope": binding.namespace or "cluster",
               "rule": rule.row(), "through": str(through)}  # fmt: skip
        (limited if rule.names and not request.name else grants).append(row)
    everywhere = any(g["scope"] == "cluster" for g in grants)
    answer: Json = {
        "question": "may",
        "subject": subject.row(),
        "groups_counted": list(groups),
        "request": _request_row(request),
        "allowed": everywhere or (bool(request.namespace) and bool(grants)),
        "grants": grants,
        "only_some_names": limited,
        "partial": policy.partial,
        "note": GROUPS_NOTE,
    }
    if namespaced and not request.namespace:
        answer["allowed_in"] = sorted({g["scope"] for g in grants} - {"cluster"})
    return answer


def _rights(
    policy: Policy, subject: Subject, namespace: str | None, *, about: Request, limit: int
) -> Json:
    """Every rule the subject holds in `namespace` (None: anywhere), narrowed to `about`'s verb
    and resource when they are not `*`."""
    groups = subject.groups()
    rows: list[Json] = []
    for binding in policy.applying(namespace, namespaced=True):
        through = binding.holds(subject, groups)
        if through is None:
            continue
        implicit = subject.kind != "Group" and through.kind == "Group"
        for rule in policy.rules_of(binding):
            if _about(rule, about):
                rows.append({**rule.row(), "scope": binding.namespace or "cluster",
                             "via": binding.label, "through": str(through),
                             "implicit": implicit})  # fmt: skip
    rows.sort(key=lambda r: (r["implicit"], r["scope"] != "cluster", r["via"]))
    shown = bounds.page(rows, limit=limit, what="rules")
    return {
        "question": "rights",
        "subject": subject.row(),
        "groups_counted": list(groups),
        **({"namespace": namespace} if namespace else {}),
        "rules": shown.items,
        "total": shown.total,
        "partial": policy.partial,
        "note": "; ".join(n for n in (shown.note, GROUPS_NOTE) if n),
    }


GROUPS_NOTE = (
    "group membership comes from authentication, not RBAC: a user is counted only in "
    "system:authenticated, a ServiceAccount also in system:serviceaccounts[:namespace]"
)


def _about(rule: Rule, request: Request) -> bool:
    """Whether `rule` grants `request`'s verb on its resource (either may be `*`: any)."""
    if request.verb != "*" and not {"*", request.verb} & set(rule.verbs):
        return False
    if request.resource == "*":
        return True
    widened = Rule(("*",), rule.groups, rule.resources)
    return widened.allows(Request("*", request.group, request.resource, request.subresource),
                          any_name=True)  # fmt: skip


def _request_row(request: Request) -> Json:
    return {
        "verb": request.verb,
        "resource": _qualified(request.combined, request.group),
        **({"namespace": request.namespace} if request.namespace else {}),
    }


def _qualified(resource: str, group: str) -> str:
    """As kubectl writes it: `pods/log`, `deployments.apps/scale`."""
    if not group or group == "*":
        return resource
    plural, slash, sub = resource.partition("/")
    return f"{plural}.{group}{slash}{sub}"


def _username(subject: Subject, binding_namespace: str) -> str:
    if subject.kind == "ServiceAccount":
        return f"{SA_PREFIX}{subject.namespace or binding_namespace}:{subject.name}"
    return subject.name


def _resolved(subject: Subject, binding: Binding) -> Subject:
    """A binding's ServiceAccount subject with its namespace filled in."""
    if subject.kind == "ServiceAccount" and not subject.namespace:
        return Subject("ServiceAccount", subject.name, binding.namespace)
    return subject


def _binding(obj: Json) -> Binding:
    meta, ref = obj["metadata"], obj.get("roleRef") or {}
    subjects = tuple(
        Subject(s.get("kind", "User"), s.get("name", ""), s.get("namespace", ""))
        for s in obj.get("subjects") or []
        if s.get("kind") in ("User", "Group", "ServiceAccount")
    )
    kind: Literal["RoleBinding", "ClusterRoleBinding"] = (
        "RoleBinding" if meta.get("namespace") else "ClusterRoleBinding"
    )
    return Binding(kind, meta["name"], meta.get("namespace", ""), ref.get("kind", ""),
                   ref.get("name", ""), subjects)  # fmt: skip


def _aggregated(name: str, by_name: dict[str, Json], seen: set[str]) -> list[Rule]:
    """A ClusterRole's rules; for an aggregated one still without rules, those of the
    ClusterRoles its selectors pick (themselves aggregated, each once)."""
    role = by_name[name]
    rules = [Rule.of(r) for r in role.get("rules") or []]
    aggregation = role.get("aggregationRule") or {}
    if rules or not aggregation:
        return rules
    seen = seen | {name}
    for raw in aggregation.get("clusterRoleSelectors") or []:
        try:
            selector = LabelSelector.model_validate(raw)
        except ValidationError:
            continue  # a selector the API server would not have admitted picks nothing here
        for other, obj in sorted(by_name.items()):
            labels = obj["metadata"].get("labels") or {}
            if other not in seen and selector.matches(labels):
                rules += [r for r in _aggregated(other, by_name, seen) if r not in rules]
    return rules
