"""kubectl describe service reads the Service's EndpointSlices through Go's typed structs.

A slice port's `name` is a `*string` that the EndpointSlice controller always sets, to "" for a
Service port without a name; kubectl dereferences it. The sandbox once left it out for unnamed
ports, and `kubectl describe service` crashed with a nil pointer panic (found by the sandbox's
fuzz test, tests/security/test_sandbox_fuzz.py).
"""

from __future__ import annotations

import json

import pytest

from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

pytestmark = pytest.mark.kubectl


def test_describe_service_with_an_unnamed_port_lists_its_endpoints(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    kubectl = shared_kubectl
    kubectl("create", "deployment", "web", "--image=nginx:1.27", "-n", namespace)
    kubectl("expose", "deployment", "web", "--port=80", "-n", namespace)

    def ready_endpoints() -> list[str]:
        slices = json.loads(kubectl("get", "endpointslices", "-n", namespace, "-o", "json"))
        return [
            address
            for item in slices["items"]
            for endpoint in item.get("endpoints") or []
            if endpoint["conditions"].get("ready")
            for address in endpoint["addresses"]
        ]

    addresses = eventually(ready_endpoints, what="a ready endpoint behind service web")
    described = kubectl("describe", "service", "web", "-n", namespace)
    assert f"{addresses[0]}:80" in described
