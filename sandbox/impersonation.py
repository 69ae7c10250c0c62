"""`Impersonate-*` headers (`kubectl --as`, `--as-group`, `--as-uid`): act as another identity.

As in kube-apiserver, the authenticated caller needs the `impersonate` verb on each thing it
impersonates (`users` or `serviceaccounts`, `groups`, `uids`, `userextras/<key>`); the request then
runs as the impersonated identity, RBAC and all. Without any such header nothing changes.
"""

from __future__ import annotations

from sandbox.auth import UserInfo
from sandbox.errors import BadRequest
from sandbox.rbac import Attributes, Authorizer, forbidden

_SA_PREFIX = "system:serviceaccount:"


def impersonate(user: UserInfo, headers: dict[str, str], authz: Authorizer) -> UserInfo:
    target = headers.get("impersonate-user", "")
    groups = [g.strip() for g in headers.get("impersonate-group", "").split(",") if g.strip()]
    uid = headers.get("impersonate-uid", "")
    extra = {
        name[len("impersonate-extra-") :]: [v.strip() for v in value.split(",")]
        for name, value in headers.items()
        if name.startswith("impersonate-extra-")
    }
    if not target:
        if groups or uid or extra:
            raise BadRequest(
                "impersonating groups, a uid or extra fields requires "
                "impersonating a user too (Impersonate-User / kubectl --as)"
            )
        return user
    checks = [_user_attributes(user, target)]
    checks += [Attributes(user=user, verb="impersonate", resource="groups", name=g) for g in groups]
    if uid:
        checks.append(Attributes(user=user, verb="impersonate", resource="uids", name=uid))
    checks += [
        Attributes(
            user=user,
            verb="impersonate",
            api_group="authentication.k8s.io",
            resource="userextras",
            subresource=key,
            name=value,
        )
        for key, values in extra.items()
        for value in values
    ]
    for attrs in checks:
        decision = authz.authorize(attrs)
        if not decision.allowed:
            raise forbidden(attrs, reason=decision.reason)
    return UserInfo(
        username=target,
        groups=tuple(_groups(target, groups)),
        uid=uid,
        extra={k: tuple(v) for k, v in extra.items()},
    )


def _user_attributes(user: UserInfo, target: str) -> Attributes:
    if target.startswith(_SA_PREFIX) and target.count(":") == 3:
        namespace, name = target[len(_SA_PREFIX) :].split(":")
        return Attributes(
            user=user,
            verb="impersonate",
            namespace=namespace,
            resource="serviceaccounts",
            name=name,
        )
    return Attributes(user=user, verb="impersonate", resource="users", name=target)


def _groups(target: str, groups: list[str]) -> list[str]:
    found = list(groups)
    if target.startswith(_SA_PREFIX) and target.count(":") == 3:
        namespace = target.split(":")[2]
        found += ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"]
    if target != "system:anonymous" and "system:authenticated" not in found:
        found.append("system:authenticated")
    return found
