"""Bearer-token authentication: static tokens, bound ServiceAccount tokens, and refusals."""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sandbox.auth import (
    ANONYMOUS,
    CREDENTIAL_ID,
    DEFAULT_ISSUER,
    Authenticator,
    UserInfo,
    new_token,
)
from sandbox.errors import Invalid, Unauthorized

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
SA_UID = "6d0c3d4e-0b5f-4c43-9a57-3f0f2a1f7b10"
BOB_TOKEN = "bob-static-token"
ADMIN_TOKEN = "admin-static-token"


@dataclass
class AccountReader:
    """The ServiceAccounts a store would hold, keyed by namespace."""

    accounts: list[dict[str, Any]] = field(default_factory=list)

    def objects(
        self, group: str, plural: str, namespace: str | None = None
    ) -> list[dict[str, Any]]:
        if (group, plural) != ("", "serviceaccounts"):
            return []
        return [
            a for a in self.accounts if namespace is None or a["metadata"]["namespace"] == namespace
        ]


def account(namespace: str, name: str, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"namespace": namespace, "name": name, "uid": uid},
    }


@pytest.fixture
def reader() -> AccountReader:
    return AccountReader([account("team-a", "dev", SA_UID)])


@pytest.fixture
def key() -> bytes:
    return secrets.token_bytes(32)


@pytest.fixture
def authn(reader: AccountReader, key: bytes) -> Authenticator:
    return Authenticator(
        static_tokens={
            BOB_TOKEN: UserInfo("bob", groups=("devs",)),
            ADMIN_TOKEN: UserInfo("admin", groups=("system:masters", "system:authenticated")),
        },
        signing_key=key,
        reader=reader,
    )


def issue(authn: Authenticator, **overrides: Any) -> str:
    args: dict[str, Any] = {
        "namespace": "team-a",
        "name": "dev",
        "uid": SA_UID,
        "audiences": [],
        "expiration_seconds": 3600,
        "now": NOW,
    }
    args.update(overrides)
    token, _ = authn.issue_token(**args)
    return token


def decode(part: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    return value


def encode(value: dict[str, Any]) -> str:
    raw = json.dumps(value, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@pytest.mark.parametrize(
    "header",
    [None, "", "   ", "Bearer", "Bearer ", "Basic Ym9iOnNlY3JldA=="],
    ids=["absent", "empty", "blank", "bearer-without-token", "bearer-empty", "basic-scheme"],
)
def test_request_without_bearer_token_is_anonymous(
    authn: Authenticator, header: str | None
) -> None:
    user = authn.authenticate(header, now=NOW)

    assert user == ANONYMOUS
    assert user.username == "system:anonymous"
    assert user.groups == ("system:unauthenticated",)


@pytest.mark.parametrize(
    ("header", "username", "groups"),
    [
        (f"Bearer {BOB_TOKEN}", "bob", ("devs", "system:authenticated")),
        (f"bearer {BOB_TOKEN}", "bob", ("devs", "system:authenticated")),
        (f"  Bearer {BOB_TOKEN}  ", "bob", ("devs", "system:authenticated")),
        (f"Bearer {ADMIN_TOKEN}", "admin", ("system:masters", "system:authenticated")),
    ],
    ids=["bearer", "scheme-case-insensitive", "surrounding-space", "authenticated-not-repeated"],
)
def test_static_token_authenticates_as_its_user(
    authn: Authenticator, header: str, username: str, groups: tuple[str, ...]
) -> None:
    user = authn.authenticate(header, now=NOW)

    assert (user.username, user.groups) == (username, groups)


def test_service_account_token_authenticates_as_the_account(authn: Authenticator) -> None:
    token = issue(authn)

    user = authn.authenticate(f"Bearer {token}", now=NOW + timedelta(minutes=5))

    assert user.username == "system:serviceaccount:team-a:dev"
    assert user.groups == (
        "system:serviceaccounts",
        "system:serviceaccounts:team-a",
        "system:authenticated",
    )
    assert user.uid == SA_UID
    jti = decode(token.split(".")[1])["jti"]
    assert user.extra[CREDENTIAL_ID] == (f"JTI={jti}",)


def test_issued_token_carries_bound_token_claims(authn: Authenticator) -> None:
    token, expires = authn.issue_token(
        namespace="team-a",
        name="dev",
        uid=SA_UID,
        audiences=["https://kubernetes.default.svc.cluster.local", "vault"],
        expiration_seconds=7200,
        now=NOW,
    )
    header_part, payload_part, _ = token.split(".")
    header, claims = decode(header_part), decode(payload_part)

    assert header["alg"] == "HS256"
    assert expires == NOW + timedelta(seconds=7200)
    issued = int(NOW.timestamp())
    assert claims["iss"] == DEFAULT_ISSUER
    assert claims["sub"] == "system:serviceaccount:team-a:dev"
    assert claims["aud"] == ["https://kubernetes.default.svc.cluster.local", "vault"]
    assert (claims["iat"], claims["nbf"], claims["exp"]) == (issued, issued, issued + 7200)
    assert claims["kubernetes.io"] == {
        "namespace": "team-a",
        "serviceaccount": {"name": "dev", "uid": SA_UID},
    }
    assert claims["jti"]


def test_token_without_audiences_is_for_the_api_server(authn: Authenticator) -> None:
    claims = decode(issue(authn, audiences=[]).split(".")[1])

    assert claims["aud"] == [DEFAULT_ISSUER]


def test_each_issued_token_is_distinct(authn: Authenticator) -> None:
    assert issue(authn) != issue(authn)


def test_token_is_accepted_within_a_minute_of_clock_skew(authn: Authenticator) -> None:
    token = issue(authn, expiration_seconds=600)

    user = authn.authenticate(f"Bearer {token}", now=NOW + timedelta(seconds=600 + 59))

    assert user.username == "system:serviceaccount:team-a:dev"


def _tamper_payload(token: str) -> str:
    header, payload, signature = token.split(".")
    claims = decode(payload)
    claims["kubernetes.io"]["namespace"] = "kube-system"
    claims["sub"] = "system:serviceaccount:kube-system:dev"
    return f"{header}.{encode(claims)}.{signature}"


def _tamper_signature(token: str) -> str:
    head, _, signature = token.rpartition(".")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    return f"{head}.{flipped}"


def _unsigned(token: str) -> str:
    _, payload, _ = token.split(".")
    return f"{encode({'alg': 'none'})}.{payload}."


Forge = Callable[[Authenticator, AccountReader], tuple[str, datetime]]


def _expired(authn: Authenticator, reader: AccountReader) -> tuple[str, datetime]:
    return issue(authn, expiration_seconds=600), NOW + timedelta(seconds=600 + 61)


def _not_yet_valid(authn: Authenticator, reader: AccountReader) -> tuple[str, datetime]:
    return issue(authn), NOW - timedelta(minutes=5)


def _tampered(authn: Authenticator, reader: AccountReader) -> tuple[str, datetime]:
    return _tamper_payload(issue(authn)), NOW


def _bad_signature(authn: Authenticator, reader: AccountReader) -> tuple[str, datetime]:
    return _tamper_signature(issue(authn)), NOW


def _alg_none(authn: Authenticator, reader: AccountReader) -> tuple[str, datetime]:
    return _unsigned(issue(authn)), NOW


def _other_key(authn: Authenticator, reader: AccountReader) -> tuple[str, datetime]:
    stranger = Authenticator(static_tokens={}, signing_key=b"x" * 32, reader=reader)
    return issue(stranger), NOW


def _deleted_account(authn: Authenticator, reader: AccountReader) -> tuple[str, datetime]:
    token = issue(authn)
    reader.accounts.clear()
    return token, NOW


def _recreated_account(authn: Authenticator, reader: AccountReader) -> tuple[str, datetime]:
    token = issue(authn)
    reader.accounts[:] = [account("team-a", "dev", "another-uid")]
    return token, NOW


def _foreign_audience(authn: Authenticator, reader: AccountReader) -> tuple[str, datetime]:
    return issue(authn, audiences=["vault"]), NOW


def _unknown_static(authn: Authenticator, reader: AccountReader) -> tuple[str, datetime]:
    return "not-a-known-token", NOW


def _garbage_jwt(authn: Authenticator, reader: AccountReader) -> tuple[str, datetime]:
    return "abc.d$f.ghi", NOW


REJECTIONS: list[tuple[Forge, str]] = [
    (_expired, "has expired"),
    (_not_yet_valid, "not valid yet"),
    (_tampered, "signature does not verify"),
    (_bad_signature, "signature does not verify"),
    (_alg_none, "unexpected signing algorithm"),
    (_other_key, "signature does not verify"),
    (_deleted_account, "team-a/dev has been deleted"),
    (_recreated_account, "does not match claim"),
    (_foreign_audience, "audiences are not for this server"),
    (_unknown_static, "not a known static token"),
    (_garbage_jwt, "malformed token segment"),
]


@pytest.mark.parametrize(
    ("forge", "why"),
    REJECTIONS,
    ids=[
        "expired",
        "not-yet-valid",
        "tampered-claims",
        "tampered-signature",
        "alg-none",
        "signed-by-another-key",
        "service-account-deleted",
        "service-account-recreated",
        "audience-of-another-server",
        "unknown-static-token",
        "malformed-jwt",
    ],
)
def test_bad_bearer_token_is_unauthorized(
    authn: Authenticator, reader: AccountReader, forge: Forge, why: str
) -> None:
    token, when = forge(authn, reader)

    with pytest.raises(Unauthorized) as caught:
        authn.authenticate(f"Bearer {token}", now=when)

    error = caught.value
    assert error.status()["message"] == "Unauthorized"
    assert error.code == 401
    assert why in str(error.__cause__)
    assert token not in str(error) and token not in str(error.__cause__)


def test_token_from_another_issuer_is_unauthorized(reader: AccountReader, key: bytes) -> None:
    other = Authenticator(static_tokens={}, signing_key=key, reader=reader, issuer="https://other")
    ours = Authenticator(static_tokens={}, signing_key=key, reader=reader)
    token = issue(other, audiences=[DEFAULT_ISSUER])

    with pytest.raises(Unauthorized) as caught:
        ours.authenticate(f"Bearer {token}", now=NOW)

    assert "another issuer" in str(caught.value.__cause__)


def test_api_audiences_decide_which_tokens_are_accepted(reader: AccountReader, key: bytes) -> None:
    authn = Authenticator(
        static_tokens={}, signing_key=key, reader=reader, api_audiences=["sandbox"]
    )
    accepted = issue(authn, audiences=["sandbox", "vault"])
    refused = issue(authn, audiences=[DEFAULT_ISSUER])

    assert authn.authenticate(f"Bearer {accepted}", now=NOW).uid == SA_UID
    with pytest.raises(Unauthorized):
        authn.authenticate(f"Bearer {refused}", now=NOW)


@pytest.mark.parametrize(
    ("seconds", "message"),
    [
        (599, "Invalid value: 599: may not specify a duration less than 10 minutes"),
        (
            2**32 + 1,
            f"Invalid value: {2**32 + 1}: may not specify a duration larger than 2^32 seconds",
        ),
    ],
    ids=["shorter-than-ten-minutes", "longer-than-2^32-seconds"],
)
def test_token_request_outside_expiration_limits_is_invalid(
    authn: Authenticator, seconds: int, message: str
) -> None:
    with pytest.raises(Invalid) as caught:
        issue(authn, expiration_seconds=seconds)

    assert caught.value.message == (
        f'TokenRequest.authentication.k8s.io "dev" is invalid: spec.expirationSeconds: {message}'
    )
    assert caught.value.status()["details"]["causes"][0]["field"] == "spec.expirationSeconds"


def test_naive_time_is_refused(authn: Authenticator) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        issue(authn, now=datetime(2026, 12, 1, 12, 0))


def test_short_signing_key_is_refused(reader: AccountReader) -> None:
    with pytest.raises(ValueError, match="at least 32 bytes"):
        Authenticator(static_tokens={}, signing_key=b"short", reader=reader)


def test_new_tokens_are_random_and_never_look_like_a_jwt() -> None:
    tokens = {new_token() for _ in range(20)}

    assert len(tokens) == 20
    assert all(len(t) >= 40 and "." not in t and " " not in t for t in tokens)


def test_new_token_authenticates_once_configured(reader: AccountReader, key: bytes) -> None:
    token = new_token()
    authn = Authenticator(
        static_tokens={token: UserInfo("carol", groups=())}, signing_key=key, reader=reader
    )

    user = authn.authenticate(f"Bearer {token}", now=NOW)

    assert (user.username, user.groups) == ("carol", ("system:authenticated",))
