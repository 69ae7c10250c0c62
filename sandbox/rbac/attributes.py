"""What a request asks for, in RBAC's terms, and how a refusal reads.

`Attributes` is the authorizer's view of one request (Kubernetes' `authorizer.Attributes`): who,
which verb, and either a resource (group, resource, subresource, namespace, name) or a non-resource
path. `forbidden_message` renders a denial with the exact wording kube-apiserver uses, because
kubectl prints it verbatim and agents and people grep for it.

This module knows nothing of how rules are stored or evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass

from sandbox.auth import UserInfo
from sandbox.errors import Forbidden, qualified


@dataclass(frozen=True)
class Attributes:
    user: UserInfo
    verb: str
    namespace: str = ""
    api_group: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""  # set, with resource empty, for a non-resource request such as /healthz

    @property
    def is_resource_request(self) -> bool:
        return bool(self.resource) or not self.path

    @property
    def combined_resource(self) -> str:
        """`pods` or `pods/log`: the form rules and messages name a (sub)resource by."""
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ""


def forbidden_message(attrs: Attributes, *, reason: str = "") -> str:
    """The Status message of a 403, e.g. `pods is forbidden: User "bob" cannot list ...`.

    `reason` is the authorizer's explanation (empty when no rule matched), appended after a colon
    as the real server does.
    """
    user = attrs.user.username
    if not attrs.is_resource_request:
        text = f'forbidden: User "{user}" cannot {attrs.verb} path "{attrs.path}"'
    else:
        scope = (
            f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
        )
        denial = (
            f'User "{user}" cannot {attrs.verb} resource "{attrs.combined_resource}" '
            f'in API group "{attrs.api_group}" {scope}'
        )
        what = qualified(attrs.resource, attrs.api_group)
        text = (
            f'{what} "{attrs.name}" is forbidden: {denial}'
            if attrs.name
            else (f"{what} is forbidden: {denial}")
        )
    return f"{text}: {reason}" if reason else text


def forbidden(attrs: Attributes, *, reason: str = "") -> Forbidden:
    """The 403 error to raise for a denied request, with Kubernetes' `details`."""
    message = forbidden_message(attrs, reason=reason)
    if not attrs.is_resource_request:
        return Forbidden(message)
    return Forbidden(message, name=attrs.name or None, group=attrs.api_group, kind=attrs.resource)
