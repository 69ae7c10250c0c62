"""The create-only review resources: access reviews, rules reviews, self-subject and token reviews.

They are questions, not objects: nothing is stored, the answer comes back in `status` with 201,
as kube-apiserver does. `kubectl auth can-i` and `kubectl auth whoami` depend on them.
"""

from __future__ import annotations

from typing import Any

from sandbox.auth import Authenticator, UserInfo
from sandbox.errors import BadRequest, Unauthorized
from sandbox.rbac import Attributes, Authorizer
from sandbox.registry import ResourceType


def answer(
    rt: ResourceType,
    body: Any,
    *,
    user: UserInfo,
    namespace: str,
    authz: Authorizer,
    authn: Authenticator,
    now: Any,
) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise BadRequest(f"the body must be a {rt.kind} object")
    spec = body.get("spec") or {}
    status: dict[str, Any]
    if rt.kind in ("SelfSubjectAccessReview", "SubjectAccessReview", "LocalSubjectAccessReview"):
        subject = user if rt.kind == "SelfSubjectAccessReview" else _subject(spec)
        if rt.kind == "LocalSubjectAccessReview":
            spec = {
                **spec,
                "resourceAttributes": {
                    **(spec.get("resourceAttributes") or {}),
                    "namespace": namespace,
                },
            }
        decision = authz.authorize(_attributes(subject, spec))
        status = {"allowed": decision.allowed}
        if decision.reason:
            status["reason"] = decision.reason
    elif rt.kind == "SelfSubjectRulesReview":
        resource_rules, non_resource_rules = authz.rules_for(user, spec.get("namespace", ""))
        status = {
            "resourceRules": resource_rules,
            "nonResourceRules": non_resource_rules,
            "incomplete": False,
        }
    elif rt.kind == "SelfSubjectReview":
        status = {"userInfo": _user_info(user)}
    else:  # TokenReview
        status = _token_review(authn, spec, now)
    metadata = {**(body.get("metadata") or {}), "creationTimestamp": None}
    return {
        "kind": rt.kind,
        "apiVersion": rt.api_version,
        "metadata": metadata,
        "spec": spec,
        "status": status,
    }


def _subject(spec: dict[str, Any]) -> UserInfo:
    if not spec.get("user") and not spec.get("groups"):
        raise BadRequest("spec.user or spec.groups: at least one is required")
    return UserInfo(
        username=spec.get("user", ""),
        groups=tuple(spec.get("groups") or ()),
        uid=spec.get("uid", ""),
    )


def _attributes(user: UserInfo, spec: dict[str, Any]) -> Attributes:
    resource = spec.get("resourceAttributes")
    if resource:
        return Attributes(
            user=user,
            verb=resource.get("verb", ""),
            namespace=resource.get("namespace", ""),
            api_group=resource.get("group", ""),
            resource=resource.get("resource", ""),
            subresource=resource.get("subresource", ""),
            name=resource.get("name", ""),
        )
    non_resource = spec.get("nonResourceAttributes")
    if non_resource:
        return Attributes(
            user=user, verb=non_resource.get("verb", ""), path=non_resource.get("path", "")
        )
    raise BadRequest("spec.resourceAttributes or spec.nonResourceAttributes is required")


def _user_info(user: UserInfo) -> dict[str, Any]:
    info: dict[str, Any] = {"username": user.username, "groups": list(user.groups)}
    if user.uid:
        info["uid"] = user.uid
    if user.extra:
        info["extra"] = {key: list(values) for key, values in user.extra.items()}
    return info


def _token_review(authn: Authenticator, spec: dict[str, Any], now: Any) -> dict[str, Any]:
    try:
        user = authn.authenticate(f"Bearer {spec.get('token', '')}", now=now)
    except Unauthorized:
        return {"authenticated": False, "error": "invalid bearer token"}
    return {
        "authenticated": True,
        "user": _user_info(user),
        "audiences": list(spec.get("audiences") or []),
    }
