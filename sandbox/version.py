"""The control plane's Kubernetes version: what `/version` (and so `kubectl version`) reports.

It lives in the world (`World.control_plane_version`) because an upgrade moves it: the admin
endpoint (`PUT /kubecrew/v1/version`) and a scenario's `spec.version` set it, so an agent can
practise upgrading the control plane before its node pools (the sandbox's API itself does not
change with it: it serves Kubernetes 1.37's kinds whatever the number says).

`parse_version` accepts what Kubernetes releases are called (`v1.37.2`, `v1.38.0-rc.1`) and
refuses anything else with a message saying what to write; `version_info` is the `/version`
body for one. Plain functions, no state.
"""

from __future__ import annotations

import re
from typing import Any

from sandbox.schemas import KUBERNETES_VERSION

DEFAULT = f"v{KUBERNETES_VERSION}"
PATTERN = re.compile(r"v(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?\Z")
HINT = "must be a Kubernetes version such as v1.37.2"


def is_version(text: object) -> bool:
    return isinstance(text, str) and PATTERN.match(text) is not None


def parse_version(text: object) -> str:
    """`text` if it names a Kubernetes release; raises ValueError saying what to write."""
    if not is_version(text):
        raise ValueError(f"{text!r} {HINT}")
    return str(text)


def version_info(git_version: str) -> dict[str, Any]:
    """The `/version` body of a control plane at `git_version` (one `parse_version` accepted)."""
    found = PATTERN.match(git_version)
    assert found is not None, git_version
    major, minor = found.group(1), found.group(2)
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
