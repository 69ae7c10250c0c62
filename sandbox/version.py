"""The control plane's Kubernetes version: what `/version` (and so `kubectl version`) reports.

It lives in the world (`World.control_plane_version`) because an upgrade moves it: the admin
endpoint (`PUT /kubecrew/v1/version`) and a scenario's `spec.version` set it, so an agent can
practise upgrading the control plane before its node pools. The API follows it where an upgrade
meets it: the deprecated versions `sandbox.deprecations` lists are served, with their warnings,
until the minor that removes them (`Registry.follow`); the current kinds stay Kubernetes 1.37's.

`parse_version` accepts what Kubernetes releases are called (`v1.37.2`, `v1.38.0-rc.1`) and
refuses anything else with a message saying what to write; `version_info` is the `/version`
body for one. `precedes` and `skips_a_minor` order two releases the way an upgrade of a
KubeadmControlPlane (sandbox/control/controlplanes.py) and Cluster API's webhook judge it. Plain
functions, no state.
"""

from __future__ import annotations

import re
from typing import Any, TypeGuard

from sandbox.schemas import KUBERNETES_VERSION

DEFAULT = f"v{KUBERNETES_VERSION}"
PATTERN = re.compile(r"v(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?\Z")
HINT = "must be a Kubernetes version such as v1.37.2"


def is_version(text: object) -> TypeGuard[str]:
    return isinstance(text, str) and PATTERN.match(text) is not None


def parse_version(text: object) -> str:
    """`text` if it names a Kubernetes release; raises ValueError saying what to write."""
    if not is_version(text):
        raise ValueError(f"{text!r} {HINT}")
    return str(text)


def release(version: str) -> tuple[int, int, int]:
    """(major, minor, patch) of a version `parse_version` accepts."""
    found = PATTERN.match(version)
    assert found is not None, version
    return int(found.group(1)), int(found.group(2)), int(found.group(3))


def precedes(version: str, other: str) -> bool:
    """`version` is an older release than `other`: by number, a pre-release (v1.38.0-rc.1) before
    its release (pre-release tags compared as text, near enough for alpha, beta and rc)."""

    def key(text: str) -> tuple[int, int, int, bool, str]:
        found = PATTERN.match(text)
        assert found is not None, text
        tag = found.group(4) or ""
        return (*release(text), not tag, tag)

    return key(version) < key(other)


def skips_a_minor(current: str, wanted: str) -> bool:
    """Going from `current` to `wanted` jumps two or more minor releases (or to another major),
    which kubeadm, and so Cluster API, refuses: v1.37.x may go to any v1.38.y, not to v1.39.0."""
    major, minor, _ = release(current)
    return release(wanted)[:2] >= (major, minor + 2)


def version_info(git_version: str) -> dict[str, Any]:
    """The `/version` body of a control plane at `git_version` (one `parse_version` accepted)."""
    major, minor = (str(number) for number in release(git_version)[:2])
    return {
        "major": major,
        "minor": minor,
        "emulationMajor": major,
        "emulationMinor": minor,
        "minCompatibilityMajor": major,
        "minCompatibilityMinor": str(max(int(minor) - 1, 0)),
        "gitVersion": git_version,
        "gitCommit": "kubecrew-sandbox",
        "gitTreeState": "clean",
        "buildDate": "2026-12-01T00:00:00Z",
        "goVersion": "go1.25",
        "compiler": "gc",
        "platform": "linux/amd64",
    }
