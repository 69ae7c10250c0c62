"""What an ImagePolicy says about an action that brings images into a namespace: security.

An action carries `images` when the object it leaves behind runs an image it did not run
before (set_image, a patch or manifest that changes a pod template, a new workload). Each such
image outside every allowed registry is a rejection: a node would pull it from a registry the
org does not trust. An image that is not pinned by digest where the policy requires digests is a
warning, not a rejection, so a tag bump stays possible while the audit keeps reporting it.
"""

from __future__ import annotations

from core.policy.checks.base import Scope, finding
from core.policy.documents.common import Concern
from core.policy.documents.images import ImagePolicy, pinned, repository
from core.policy.findings import Finding

_CONCERN: Concern = "security"


def check(scope: Scope, policy: ImagePolicy) -> list[Finding]:
    spec, found = policy.spec, list[Finding]()
    allowed = ", ".join(spec.allowedRegistries)
    for image in scope.action.images or []:
        if not spec.allows(image):
            message = (
                f"{image} would be pulled from {repository(image)}, outside the allowed "
                f"registries ({allowed})"
            )
            found.append(finding(policy, "allowed-registries", "reject", message, concern=_CONCERN))
        else:
            message = f"{image} comes from an allowed registry"
            found.append(finding(policy, "allowed-registries", "pass", message, concern=_CONCERN))
        if spec.requireDigest and not pinned(image):
            message = f"{image} is not pinned by digest (image@sha256:...), which the policy asks"
            found.append(finding(policy, "require-digest", "warn", message, concern=_CONCERN))
    return found
