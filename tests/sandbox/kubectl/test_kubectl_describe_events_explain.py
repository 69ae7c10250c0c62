"""kubectl describe, events and explain against the sandbox: describe shows an object with its
events (and a namespace with its quota and limits), `kubectl events` and `get events` list the
namespace's events, and explain prints a field's documentation.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.sandbox.kubectl.read_objects import pod, utc_timestamp
from tests.sandbox.kubectl.suite import create, header, rows
from tests.support.kubectl import Kubectl

pytestmark = pytest.mark.kubectl


def event_for(
    obj: dict[str, Any], *, namespace: str, reason: str, message: str, kind_type: str = "Normal"
) -> dict[str, Any]:
    meta = obj["metadata"]
    now = utc_timestamp()
    involved = {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
    }
    if meta.get("namespace"):
        involved["namespace"] = meta["namespace"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{meta['name']}.{reason.lower()}", "namespace": namespace},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "type": kind_type,
        "source": {"component": "kubecrew-test"},
        "count": 1,
        "firstTimestamp": now,
        "lastTimestamp": now,
    }


def _describe_target(kubectl: Kubectl, kind: str, namespace: str) -> tuple[list[str], str]:
    """Make the object to describe; returns the resource/name args and the event's namespace."""
    if kind == "pod":
        create(kubectl, pod("web", namespace))
        return ["pod", "web", "-n", namespace], namespace
    if kind == "deployment":
        kubectl("create", "deployment", "web", "--image=nginx:1.27", "-n", namespace)
        return ["deployment", "web", "-n", namespace], namespace
    return ["node", "node-3"], "default"


@pytest.mark.parametrize("kind", ["pod", "deployment", "node"])
def test_describe_shows_the_object_and_its_events(
    shared_kubectl: Kubectl, namespace: str, kind: str
) -> None:
    args, event_namespace = _describe_target(shared_kubectl, kind, namespace)
    obj = shared_kubectl.json("get", *args)
    message = f"checked by {namespace}"
    create(
        shared_kubectl,
        event_for(
            obj, namespace=event_namespace, reason="Checked", message=message, kind_type="Warning"
        ),
    )
    described = shared_kubectl("describe", *args)
    assert described.splitlines()[0].split() == ["Name:", obj["metadata"]["name"]]
    _, _, events = described.partition("\nEvents:\n")
    shown = [(r["Type"], r["Reason"], r["From"], r["Message"]) for r in rows(events)]
    assert ("Warning", "Checked", "kubecrew-test", message) in shown


def test_describe_namespace_shows_status_quota_and_limits(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    shared_kubectl("create", "quota", "small", "--hard=pods=4", "-n", namespace)
    # What the ResourceQuota controller would write.
    usage = {"status": {"hard": {"pods": "4"}, "used": {"pods": "1"}}}
    shared_kubectl(
        "patch",
        "quota",
        "small",
        "-n",
        namespace,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps(usage),
    )
    described = shared_kubectl("describe", "namespace", namespace)
    assert f"Labels:       kubernetes.io/metadata.name={namespace}\n" in described
    assert "Status:       Active\n" in described
    _, _, quotas = described.partition("Resource Quotas\n  Name:     small\n")
    table = rows(quotas.split("\n\n")[0])
    assert table[1:] == [{"Resource": "pods", "Used": "1", "Hard": "4"}]
    assert "No LimitRange resource." in described
    # kubectl 1.37 looks up no events for a namespace, so its describe has no Events section.
    assert "Events:" not in described


def untouched(manifest: dict[str, Any]) -> dict[str, Any]:
    """The pod with a scheduler nobody runs: Pending and unbound, so no component reports on it
    and the namespace holds only the events a test writes."""
    return {**manifest, "spec": {**manifest["spec"], "schedulerName": "no-scheduler"}}


@pytest.fixture
def two_events(shared_kubectl: Kubectl, namespace: str) -> None:
    create(shared_kubectl, untouched(pod("web", namespace)), untouched(pod("db", namespace)))
    web = shared_kubectl.json("get", "pod", "web", "-n", namespace)
    db = shared_kubectl.json("get", "pod", "db", "-n", namespace)
    create(
        shared_kubectl,
        event_for(web, namespace=namespace, reason="Pulled", message="image pulled"),
        event_for(
            db,
            namespace=namespace,
            reason="BackOff",
            message="back-off restarting",
            kind_type="Warning",
        ),
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(
            (), {("Normal", "Pulled", "Pod/web"), ("Warning", "BackOff", "Pod/db")}, id="all"
        ),
        pytest.param(("--for", "pod/db"), {("Warning", "BackOff", "Pod/db")}, id="for-object"),
        pytest.param(("--types", "Normal"), {("Normal", "Pulled", "Pod/web")}, id="types"),
    ],
)
@pytest.mark.usefixtures("two_events")
def test_kubectl_events_lists_the_namespace_events(
    shared_kubectl: Kubectl, namespace: str, args: tuple[str, ...], expected: set[tuple[str, ...]]
) -> None:
    table = shared_kubectl("events", "-n", namespace, *args)
    # Unlike `get events` (a server-side Table), `kubectl events` prints OBJECT as Kind/name.
    assert header(table) == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert {(r["TYPE"], r["REASON"], r["OBJECT"]) for r in rows(table)} == expected


@pytest.mark.usefixtures("two_events")
def test_get_events_shows_type_reason_object_and_message(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    table = shared_kubectl("get", "events", "-n", namespace)
    assert header(table) == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    shown = {(r["TYPE"], r["REASON"], r["OBJECT"], r["MESSAGE"]) for r in rows(table)}
    assert shown == {
        ("Normal", "Pulled", "pod/web", "image pulled"),
        ("Warning", "BackOff", "pod/db", "back-off restarting"),
    }


# -- explain ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "lines"),
    [
        pytest.param(
            "deployment.spec.replicas",
            [
                "GROUP:      apps",
                "KIND:       Deployment",
                "VERSION:    v1",
                "FIELD: replicas <integer>",
                "Number of desired pods.",
            ],
            id="deployment-replicas",
        ),
        pytest.param(
            "pod.spec.containers.image",
            ["KIND:       Pod", "VERSION:    v1", "FIELD: image <string>", "Container image name."],
            id="pod-container-image",
        ),
    ],
)
def test_explain_prints_the_field_documentation(
    shared_kubectl: Kubectl, field: str, lines: list[str]
) -> None:
    explained = shared_kubectl("explain", field)
    for line in lines:
        assert line in explained
