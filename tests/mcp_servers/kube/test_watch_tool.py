"""`watch_events`: events since a resourceVersion, each naming the workload that owns it.

A first call lists what is there; a call with the returned resourceVersion waits for what comes
next (a broken Deployment's pull failures), names the Deployment above the pods, and hands back
a newer resourceVersion; a quiet namespace answers empty after the bounded wait; a
resourceVersion older than the API server's history is answered by a relist (`resynced`).
"""

from __future__ import annotations

from pathlib import Path

from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Options, Sandbox
from tests.support.diagnosis import deployment
from tests.support.kube_tools import KubeTools
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually


def test_a_watch_from_a_version_returns_the_new_warnings_with_their_workload(
    kube: KubeTools, shared_kubectl: Kubectl, namespace: str
) -> None:
    start = kube.ok("watch_events", namespace=namespace)
    assert start["items"] == [] and start["resource_version"].isdigit()

    bad = deployment("web", {"image": "nginx:no-such-tag"}, namespace=namespace, replicas=2)
    shared_kubectl("apply", "-f", "-", input=bad)
    seen: list[dict[str, object]] = []
    version = start["resource_version"]

    def warned() -> bool:
        nonlocal version
        answer = kube.ok(
            "watch_events", namespace=namespace, resource_version=version, timeout_seconds=5
        )
        assert not answer["resynced"]
        version = answer["resource_version"]
        seen.extend(answer["items"])
        return any(e["reason"] in ("Failed", "BackOff") for e in seen)

    eventually(warned, timeout=30, what="pull failures of web's pods")
    assert int(version) > int(start["resource_version"])
    assert {e["type"] for e in seen} == {"Warning"}
    failed = next(e for e in seen if e["reason"] in ("Failed", "BackOff"))
    assert failed["object"]["kind"] == "Pod"  # type: ignore[index]
    assert str(failed["object"]["name"]).startswith("web-")  # type: ignore[index]
    assert failed["owner"] == {"kind": "Deployment", "name": "web", "namespace": namespace}

    listed = kube.ok("watch_events", namespace=namespace)  # a fresh start sees them too
    assert any(e["owner"]["name"] == "web" for e in listed["items"])
    normal = kube.ok("watch_events", namespace=namespace, type="Normal")
    assert {e["type"] for e in normal["items"]} == {"Normal"}


def test_a_quiet_namespace_answers_nothing_after_the_bounded_wait(
    kube: KubeTools, namespace: str
) -> None:
    version = kube.ok("watch_events", namespace=namespace)["resource_version"]
    answer = kube.ok(
        "watch_events", namespace=namespace, resource_version=version, timeout_seconds=1
    )
    assert answer["items"] == [] and not answer["resynced"]


def test_an_expired_version_is_answered_by_a_relist(tmp_path: Path) -> None:
    options = Options(home=tmp_path / "sandbox", nodes=1, rate=10.0, history=20)
    with Sandbox(options) as small:
        tools = KubeTools(KubeSettings(kubeconfig=small.kubeconfig))
        shop = Kubectl(small.kubeconfig, tmp_path / "cache")
        shop("create", "namespace", "shop")
        for n in range(30):  # more writes than the history keeps
            shop("create", "configmap", f"c{n}", "-n", "shop")
        answer = tools.ok("watch_events", resource_version="1", timeout_seconds=1, type="")
        assert answer["resynced"]
        assert int(answer["resource_version"]) > 30


def test_bad_arguments_and_missing_rights_say_what_to_do(
    kube: KubeTools, nobody: KubeTools, namespace: str
) -> None:
    assert "timeout_seconds must be 1 to 25" in kube.fails("watch_events", timeout_seconds=60)
    assert "use 'Warning', 'Normal'" in kube.fails("watch_events", type="Error")
    assert "a previous call returned" in kube.fails("watch_events", resource_version="abc")
    limited = KubeTools(KubeSettings(kubeconfig=kube.settings.kubeconfig, namespaces=("a", "b")))
    assert "watch one of them at a time" in limited.fails("watch_events")
    assert "allow-list" in limited.fails("watch_events", namespace="c")
    assert "permission denied" in nobody.fails("watch_events", namespace=namespace).lower()
