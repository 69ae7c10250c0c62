"""Who is calling: bearer-token authentication the way kube-apiserver does it.

Two credentials are accepted, as on a real cluster started with a static token file and the
ServiceAccount token issuer:

* static tokens, one per kubeconfig user (`new_token()` makes them), mapped to a fixed `UserInfo`;
* bound ServiceAccount tokens: JWTs with the real claim layout (`iss`, `sub`, `aud`, `exp`, `iat`,
  `nbf`, `jti` and the private `kubernetes.io` claim), valid only while the ServiceAccount with the
  uid named in the token still exists. They are signed with HS256 over a secret key instead of
  RS256: clients never verify the signature, so only the sandbox needs to, and the stdlib suffices.

A request without a bearer token is anonymous, as on a real server with anonymous auth on (other
schemes, such as Basic, are not handled and fall through to anonymous too). A bearer token that
does not check out is a 401 whose message says only "Unauthorized"; the reason travels as the
chained cause for debugging. Tokens themselves are never logged, put in messages or kept in clear.

This module knows nothing of HTTP routing, RBAC or storage: ServiceAccounts are read through
`ObjectReader`, which the store implements.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Protocol

from sandbox.errors import Cause, Unauthorized, invalid

AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
SERVICE_ACCOUNTS = "system:serviceaccounts"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"
CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"

# TokenRequest limits enforced by the real API server's validation.
MIN_EXPIRATION_SECONDS = 600
MAX_EXPIRATION_SECONDS = 1 << 32
# Real servers validate exp/nbf/iat with go-jose's default one-minute leeway for clock skew.
_LEEWAY_SECONDS = 60
_MIN_KEY_BYTES = 32
_HEADER_ALG = "HS256"


class ObjectReader(Protocol):
    """Read access to stored objects; the store implements it, tests use a small dict."""

    def objects(
        self, group: str, plural: str, namespace: str | None = None
    ) -> list[dict[str, Any]]:
        """All stored objects of that resource (namespace None = all); callers never mutate them."""
        ...


def _no_extra() -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({})


@dataclass(frozen=True)
class UserInfo:
    """An authenticated (or anonymous) identity, as Kubernetes' `user.Info`."""

    username: str
    groups: tuple[str, ...]
    uid: str = ""
    # Excluded from the hash (a mapping is unhashable) but still compared.
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=_no_extra, hash=False)


ANONYMOUS = UserInfo(username="system:anonymous", groups=(UNAUTHENTICATED,))


def service_account_username(namespace: str, name: str) -> str:
    return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"


def new_token() -> str:
    """A random static token for a kubeconfig user; it never contains dots, unlike a JWT."""
    return secrets.token_urlsafe(32)


class _Rejected(Exception):
    """Why a bearer token was refused; chained under Unauthorized, never shown to the client."""


class Authenticator:
    """Turns an `Authorization` header into a `UserInfo`, and issues ServiceAccount tokens."""

    def __init__(
        self,
        *,
        static_tokens: Mapping[str, UserInfo],
        signing_key: bytes,
        reader: ObjectReader,
        issuer: str = DEFAULT_ISSUER,
        api_audiences: Sequence[str] = (),
    ) -> None:
        if len(signing_key) < _MIN_KEY_BYTES:
            raise ValueError(f"signing_key must be at least {_MIN_KEY_BYTES} bytes")
        self._key = signing_key
        self._reader = reader
        self._issuer = issuer
        # Like --api-audiences: a token must be meant for this server; the default is the issuer.
        self._audiences = tuple(api_audiences) or (issuer,)
        self._kid = _b64encode(hmac.new(signing_key, b"key-id", hashlib.sha256).digest())
        # Keyed by digest so lookups neither keep tokens in clear nor leak them through timing.
        self._static = {_digest(t): _with_authenticated(u) for t, u in static_tokens.items()}

    def authenticate(self, authorization: str | None, *, now: datetime) -> UserInfo:
        token = _bearer_token(authorization)
        if token is None:
            return ANONYMOUS
        try:
            return self._user_for(token, now=now)
        except _Rejected as exc:
            raise Unauthorized("Unauthorized") from exc

    def issue_token(
        self,
        *,
        namespace: str,
        name: str,
        uid: str,
        audiences: list[str],
        expiration_seconds: int,
        now: datetime,
    ) -> tuple[str, datetime]:
        """A bound token for ServiceAccount namespace/name and its expiry (TokenRequest)."""
        _check_expiration(name, expiration_seconds)
        issued = _epoch(now)
        expires = issued + expiration_seconds
        claims = {
            "aud": list(audiences) or list(self._audiences),
            "exp": expires,
            "iat": issued,
            "iss": self._issuer,
            "jti": str(uuid.uuid4()),
            "kubernetes.io": {
                "namespace": namespace,
                "serviceaccount": {"name": name, "uid": uid},
            },
            "nbf": issued,
            "sub": service_account_username(namespace, name),
        }
        header = {"alg": _HEADER_ALG, "kid": self._kid}
        signing_input = f"{_b64json(header)}.{_b64json(claims)}"
        token = f"{signing_input}.{self._sign(signing_input)}"
        return token, datetime.fromtimestamp(expires, tz=UTC)

    def _user_for(self, token: str, *, now: datetime) -> UserInfo:
        user = self._static.get(_digest(token))
        if user is not None:
            return user
        if token.count(".") != 2:
            raise _Rejected("not a known static token nor a JWT")
        claims = self._verified_claims(token)
        self._check_claims(claims, now=now)
        return self._service_account_user(claims)

    def _sign(self, signing_input: str) -> str:
        mac = hmac.new(self._key, signing_input.encode("ascii"), hashlib.sha256)
        return _b64encode(mac.digest())

    def _verified_claims(self, token: str) -> dict[str, Any]:
        header_part, payload_part, signature = token.split(".")
        header = _decode_json(header_part)
        # Checking alg first refuses "none" and algorithm-confusion tokens outright.
        if header.get("alg") != _HEADER_ALG:
            raise _Rejected("unexpected signing algorithm")
        expected = self._sign(f"{header_part}.{payload_part}")
        if not hmac.compare_digest(expected.encode("ascii"), signature.encode("ascii", "replace")):
            raise _Rejected("signature does not verify")
        return _decode_json(payload_part)

    def _check_claims(self, claims: Mapping[str, Any], *, now: datetime) -> None:
        if claims.get("iss") != self._issuer:
            raise _Rejected("token issued by another issuer")
        audiences = claims.get("aud")
        if isinstance(audiences, str):
            audiences = [audiences]
        if not isinstance(audiences, list) or not set(audiences) & set(self._audiences):
            raise _Rejected("token audiences are not for this server")
        moment = _epoch(now)
        if moment > _int_claim(claims, "exp") + _LEEWAY_SECONDS:
            raise _Rejected("service account token has expired")
        if moment < _int_claim(claims, "nbf") - _LEEWAY_SECONDS:
            raise _Rejected("service account token is not valid yet")
        if moment < _int_claim(claims, "iat") - _LEEWAY_SECONDS:
            raise _Rejected("service account token was issued in the future")

    def _service_account_user(self, claims: Mapping[str, Any]) -> UserInfo:
        namespace, name, uid = _service_account_claim(claims)
        username = service_account_username(namespace, name)
        if claims.get("sub") != username:
            raise _Rejected("subject does not match the service account claim")
        self._check_service_account(namespace, name, uid)
        extra: dict[str, tuple[str, ...]] = {}
        jti = claims.get("jti")
        if isinstance(jti, str) and jti:
            extra[CREDENTIAL_ID] = (f"JTI={jti}",)
        return UserInfo(
            username=username,
            groups=(SERVICE_ACCOUNTS, f"{SERVICE_ACCOUNTS}:{namespace}", AUTHENTICATED),
            uid=uid,
            extra=MappingProxyType(extra),
        )

    def _check_service_account(self, namespace: str, name: str, uid: str) -> None:
        for account in self._reader.objects("", "serviceaccounts", namespace):
            meta = account.get("metadata") or {}
            if meta.get("name") != name:
                continue
            if meta.get("uid") != uid:
                raise _Rejected(f"service account UID ({meta.get('uid')}) does not match claim")
            return
        raise _Rejected(f"service account {namespace}/{name} has been deleted")


def _bearer_token(authorization: str | None) -> str | None:
    """The token of a `Bearer` header, or None when the request carries no bearer token."""
    parts = (authorization or "").strip().split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


def _with_authenticated(user: UserInfo) -> UserInfo:
    if user.username == ANONYMOUS.username:
        return user
    if AUTHENTICATED in user.groups or UNAUTHENTICATED in user.groups:
        return user
    return UserInfo(
        username=user.username,
        groups=(*user.groups, AUTHENTICATED),
        uid=user.uid,
        extra=user.extra,
    )


def _check_expiration(name: str, seconds: int) -> None:
    if seconds < MIN_EXPIRATION_SECONDS:
        message = f"Invalid value: {seconds}: may not specify a duration less than 10 minutes"
    elif seconds > MAX_EXPIRATION_SECONDS:
        message = f"Invalid value: {seconds}: may not specify a duration larger than 2^32 seconds"
    else:
        return
    cause = Cause(field="spec.expirationSeconds", message=message)
    raise invalid("TokenRequest", "authentication.k8s.io", name, [cause])


def _service_account_claim(claims: Mapping[str, Any]) -> tuple[str, str, str]:
    private = claims.get("kubernetes.io")
    if not isinstance(private, dict):
        raise _Rejected("missing kubernetes.io claim")
    account = private.get("serviceaccount")
    namespace = private.get("namespace")
    if not isinstance(account, dict) or not isinstance(namespace, str) or not namespace:
        raise _Rejected("malformed kubernetes.io claim")
    name, uid = account.get("name"), account.get("uid")
    if not isinstance(name, str) or not name or not isinstance(uid, str):
        raise _Rejected("malformed serviceaccount claim")
    return namespace, name, uid


def _int_claim(claims: Mapping[str, Any], key: str) -> int:
    value = claims.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Rejected(f"missing or malformed {key} claim")
    return value


def _epoch(moment: datetime) -> int:
    if moment.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    return int(moment.timestamp())


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64json(value: Mapping[str, Any]) -> str:
    return _b64encode(json.dumps(value, separators=(",", ":")).encode("utf-8"))


def _decode_json(part: str) -> dict[str, Any]:
    try:
        raw = base64.b64decode(part + "=" * (-len(part) % 4), altchars=b"-_", validate=True)
        value = json.loads(raw)
    except (binascii.Error, ValueError) as exc:
        raise _Rejected("malformed token segment") from exc
    if not isinstance(value, dict):
        raise _Rejected("token segment is not a JSON object")
    return value
