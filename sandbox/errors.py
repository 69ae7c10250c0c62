"""Every error the sandbox API answers with, as Kubernetes `Status` bodies.

One tree, one job: turn a failure into the exact `Status` a real API server sends, so kubectl
and the client libraries print and branch on it as they would against Kubernetes.

    ApiError                      base; `.status()` renders the body, `.code` the HTTP status
     +-- BadRequest               400  malformed body, bad selector, bad patch document
     +-- Unauthorized             401  no or unknown credentials
     +-- Forbidden                403  RBAC said no (message names user, verb, resource, namespace)
     +-- NotFound                 404  object, resource type or path unknown
     +-- MethodNotAllowed         405  verb not served by the resource
     +-- NotAcceptable            406
     +-- AlreadyExists            409  create of an existing name
     +-- Conflict                 409  stale resourceVersion, server-side apply field conflict
     +-- Gone                     410  watch from a resourceVersion older than the kept history
     +-- RequestEntityTooLarge    413
     +-- UnsupportedMediaType     415
     +-- Invalid                  422  validation failed; `causes` name each field
     +-- TooManyRequests          429  eviction blocked by a PodDisruptionBudget
     +-- InternalError            500  a bug in the sandbox; never a traceback on the wire

Nothing here knows about HTTP framing or storage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(frozen=True)
class Cause:
    """One reason inside an Invalid or Conflict status (`details.causes[]`)."""

    field: str
    message: str
    reason: str = "FieldValueInvalid"

    def to_dict(self) -> dict[str, str]:
        return {"reason": self.reason, "message": self.message, "field": self.field}


@dataclass
class ApiError(Exception):
    message: str
    name: str | None = None
    group: str | None = None
    kind: str | None = None  # the resource (plural) as Kubernetes puts it in details.kind
    causes: list[Cause] = field(default_factory=list)
    retry_after: int | None = None

    code: ClassVar[int] = 500
    reason: ClassVar[str] = "InternalError"

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def status(self) -> dict[str, Any]:
        details: dict[str, Any] = {}
        if self.name is not None:
            details["name"] = self.name
        if self.group:
            details["group"] = self.group
        if self.kind is not None:
            details["kind"] = self.kind
        if self.causes:
            details["causes"] = [c.to_dict() for c in self.causes]
        if self.retry_after is not None:
            details["retryAfterSeconds"] = self.retry_after
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if details:
            body["details"] = details
        return body


class BadRequest(ApiError):
    code = 400
    reason = "BadRequest"


class Unauthorized(ApiError):
    code = 401
    reason = "Unauthorized"


class Forbidden(ApiError):
    code = 403
    reason = "Forbidden"


class NotFound(ApiError):
    code = 404
    reason = "NotFound"


class MethodNotAllowed(ApiError):
    code = 405
    reason = "MethodNotAllowed"


class NotAcceptable(ApiError):
    code = 406
    reason = "NotAcceptable"


class AlreadyExists(ApiError):
    code = 409
    reason = "AlreadyExists"


class Conflict(ApiError):
    code = 409
    reason = "Conflict"


class Gone(ApiError):
    code = 410
    reason = "Expired"


class RequestEntityTooLarge(ApiError):
    code = 413
    reason = "RequestEntityTooLarge"


class UnsupportedMediaType(ApiError):
    code = 415
    reason = "UnsupportedMediaType"


class Invalid(ApiError):
    code = 422
    reason = "Invalid"


class TooManyRequests(ApiError):
    code = 429
    reason = "TooManyRequests"


class InternalError(ApiError):
    code = 500
    reason = "InternalError"


def qualified(resource: str, group: str) -> str:
    """`pods`, `deployments.apps`: how Kubernetes names a resource in messages."""
    return f"{resource}.{group}" if group else resource


def not_found(resource: str, group: str, name: str) -> NotFound:
    return NotFound(
        f'{qualified(resource, group)} "{name}" not found', name=name, group=group, kind=resource
    )


def already_exists(resource: str, group: str, name: str) -> AlreadyExists:
    return AlreadyExists(
        f'{qualified(resource, group)} "{name}" already exists',
        name=name,
        group=group,
        kind=resource,
    )


def invalid(kind: str, group: str, name: str, causes: list[Cause]) -> Invalid:
    """422 with Kubernetes' message shape: `Deployment.apps "web" is invalid: spec.x: ...`."""
    what = f"{kind}.{group}" if group else kind
    summary = "; ".join(f"{c.field}: {c.message}" if c.field else c.message for c in causes)
    if len(causes) > 1:
        summary = (
            "["
            + ", ".join(f"{c.field}: {c.message}" if c.field else c.message for c in causes)
            + "]"
        )
    return Invalid(
        f'{what} "{name}" is invalid: {summary}', name=name, group=group, kind=kind, causes=causes
    )
