"""The watch-backed caches (mcp_servers/common/cache) against the sandbox over real HTTPS: what
they answer is what the API server answers, they follow changes, re-list after a 410 and never
serve what the API server deleted, and a read that does not say stale_ok never comes from them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.errors import NotFound
from mcp_servers.common.cache import CachedClusters, Informers
from mcp_servers.common.cache.reflector import Reflector
from mcp_servers.common.cache.store import Kind, Store, after_token, field_match, label_match
from mcp_servers.common.watched import WatchedClusters
from mcp_servers.kube.reads import Reads
from mcp_servers.kube.resources import Catalog
from mcp_servers.kube.settings import KubeSettings
from mcp_servers.kube.views import Views
from mcp_servers.kube.writes import Writes
from sandbox.server import Options, Sandbox
from tests.support.clock import RATE
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

PODS = "/api/v1/namespaces/{ns}/pods"


def pod(name: str, **labels: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "nginx"}]},
    }


@pytest.fixture
def short_history(tmp_path: Path) -> Iterator[Sandbox]:
    """A sandbox that keeps only 20 changes for watches to resume from."""
    with Sandbox(Options(home=tmp_path / "sandbox", nodes=1, rate=RATE, history=20)) as running:
        yield running


def cached(sandbox: Sandbox) -> CachedClusters:
    return CachedClusters(sandbox.kubeconfig)


def synced(clusters: CachedClusters, plural: str) -> Reflector:
    """The running reflector of `plural`, once its store holds a whole list."""
    found = [r for r in clusters.informers.reflectors() if r.kind.plural == plural]
    assert found, f"no reflector for {plural} was started"
    assert found[0].synced.wait(10), f"the {plural} cache did not sync"
    return found[0]


def names(answer: dict[str, object]) -> list[str]:
    return [item["metadata"]["name"] for item in answer["items"]]  # type: ignore[attr-defined]


def test_lists_from_the_cache_match_the_api_server_with_selectors_and_pages(
    sandbox: Sandbox,
) -> None:
    clusters = cached(sandbox)
    direct = WatchedClusters(sandbox.kubeconfig).api()
    for n in range(7):
        direct.request(
            "POST", PODS.format(ns="default"), body=pod(f"p{n}", app="web" if n % 2 else "db")
        )
    api = clusters.api(stale_ok=True)
    path = PODS.format(ns="default")
    api.get(path)  # the first read asks the API server and starts the cache
    reflector = synced(clusters, "pods")
    for query in (
        {},
        {"labelSelector": "app=web"},
        {"labelSelector": "app in (web,db),app!=db"},
        {"labelSelector": "!app"},
        {"fieldSelector": "metadata.name=p3"},
        {"fieldSelector": "spec.schedulerName=nobody,metadata.name!=p0"},
    ):
        want = direct.get(path, **query)
        got = api.get(path, **query)
        assert names(got) == names(want), query
        assert got["kind"] == "PodList"
    first = api.get(path, limit=3)
    assert names(first) == ["p0", "p1", "p2"]
    assert first["metadata"]["remainingItemCount"] == 4
    rest = api.get(path, limit=10, **{"continue": first["metadata"]["continue"]})
    assert names(rest) == ["p3", "p4", "p5", "p6"] and "continue" not in rest["metadata"]
    assert api.get(f"{path}/p4")["metadata"]["name"] == "p4"
    assert "managedFields" not in api.get(f"{path}/p4")["metadata"]
    assert reflector.lists == 1
    clusters.close()


def test_the_cache_follows_changes_and_a_fresh_read_never_uses_it(sandbox: Sandbox) -> None:
    clusters = cached(sandbox)
    stale_ok, fresh = clusters.api(stale_ok=True), clusters.api()
    direct = WatchedClusters(sandbox.kubeconfig).api()
    path = PODS.format(ns="default")
    stale_ok.get(path)
    reflector = synced(clusters, "pods")
    direct.request("POST", path, body=pod("late", app="web"))
    eventually(lambda: names(stale_ok.get(path)) == ["late"], what="the cache saw the create")
    reflector.stop()  # from here on the cache hears nothing
    direct.request("DELETE", f"{path}/late", query={"gracePeriodSeconds": 0})
    assert names(fresh.get(path)) == []  # a read that did not say stale_ok asks the API server
    with pytest.raises(NotFound):
        fresh.get(f"{path}/late")
    clusters.close()


def test_a_cache_that_missed_events_relists_after_410_and_serves_no_deleted_object(
    short_history: Sandbox,
) -> None:
    clusters = cached(short_history)
    api = clusters.api(stale_ok=True)
    direct = WatchedClusters(short_history.kubeconfig).api()
    path = PODS.format(ns="default")
    for name in ("keep", "doomed"):
        direct.request("POST", path, body=pod(name))
    api.get(path)
    first = synced(clusters, "pods")
    missed_from = first.store.version
    held = [direct.get(f"{path}/keep"), direct.get(f"{path}/doomed")]
    first.stop()
    direct.request("DELETE", f"{path}/doomed", query={"gracePeriodSeconds": 0})
    for n in range(30):  # more changes than the sandbox keeps: `missed_from` is now too old
        direct.request("POST", "/api/v1/namespaces/default/configmaps",
                       body={"metadata": {"name": f"churn-{n}"}})  # fmt: skip
    # A reflector that resumes from where the first one stopped, as one whose watch broke does.
    resumed = Reflector(lambda: clusters.direct(), first.kind, None, idle_s=60, fits=lambda: True)
    resumed.store.replace(held, missed_from)
    resumed._version = missed_from  # where its next watch resumes
    resumed.start()
    eventually(lambda: resumed.lists == 1 and resumed.synced.is_set(), what="a re-list")
    assert resumed.store.get(("default", "doomed")) is None
    assert resumed.store.get(("default", "keep")) is not None
    resumed.stop()
    clusters.close()


def test_a_write_never_acts_on_the_cache_and_its_answer_updates_it(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    clusters = cached(sandbox)
    kubectl = Kubectl(sandbox.kubeconfig, tmp_path / "kube-cache")
    kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=1")
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")  # quiet from here on
    api = clusters.api(stale_ok=True)
    path = "/apis/apps/v1/namespaces/default/deployments"
    api.get(path)
    store = synced(clusters, "deployments").store
    wrong = api.get(f"{path}/web")
    wrong["spec"]["replicas"] = 9  # what a cache that missed a change would hold
    store.written(wrong)
    assert api.get(f"{path}/web")["spec"]["replicas"] == 9  # a stale-ok read takes the cache
    writes = Writes(clusters, KubeSettings(kubeconfig=sandbox.kubeconfig))
    answer = writes.scale("deployment", "web", 2, namespace="default")
    replicas = [c for c in answer["changes"] if c["path"] == "spec.replicas"]
    assert replicas == [{"path": "spec.replicas", "old": 1, "new": 2}]  # the live object's 1
    assert kubectl("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}") == "2"
    assert api.get(f"{path}/web")["spec"]["replicas"] == 2  # the write's answer replaced it
    clusters.close()


def test_label_and_field_selectors_this_store_reads() -> None:
    web = label_match("app=web,tier in (a, b),!legacy")
    assert web is not None
    assert web({"app": "web", "tier": "a"})
    assert not web({"app": "web", "tier": "c"})
    assert not web({"app": "web", "tier": "a", "legacy": "1"})
    assert label_match("app notin (x),team") is not None
    assert label_match("version>3") is None  # not a list selector: the API server says why
    kind = Kind("/api/v1", "pods", "Pod", fields=("spec.nodeName",))
    on_node = field_match("spec.nodeName=n1,metadata.namespace!=kube-system", kind)
    assert on_node is not None
    assert on_node(("shop", "web-1"), {"spec.nodeName": "n1"})
    assert not on_node(("kube-system", "dns"), {"spec.nodeName": "n1"})
    assert field_match("status.hostIP=1.2.3.4", kind) is None


def test_an_older_watch_event_never_undoes_a_write_this_server_saw() -> None:
    store = Store(Kind("/apis/apps/v1", "deployments", "Deployment"))
    meta = {"name": "web", "namespace": "shop"}
    store.replace([{"metadata": {**meta, "resourceVersion": "10"}, "spec": {"replicas": 1}}], "10")
    store.written({"metadata": {**meta, "resourceVersion": "15"}, "spec": {"replicas": 3}})
    store.apply(
        "MODIFIED", {"metadata": {**meta, "resourceVersion": "12"}, "spec": {"replicas": 2}}
    )
    assert store.get(("shop", "web"))["spec"]["replicas"] == 3  # type: ignore[index]
    store.unsettle(("shop", "web"), "20")
    assert not store.settled(("shop", "web"))
    store.apply(
        "MODIFIED", {"metadata": {**meta, "resourceVersion": "20"}, "spec": {"replicas": 5}}
    )
    assert store.settled(("shop", "web"))


def test_paths_the_informers_answer_and_those_they_leave_to_the_api_server() -> None:
    informers = Informers(lambda context: None)  # type: ignore[arg-type, return-value]
    assert informers.target("/api/v1/namespaces/shop/pods").kind.plural == "pods"  # type: ignore[union-attr]
    assert informers.target("/api/v1/nodes/n1").name == "n1"  # type: ignore[union-attr]
    assert informers.target("/apis/apps/v1/deployments").namespace is None  # type: ignore[union-attr]
    assert informers.target("/api/v1/namespaces/shop/pods/web/log").rest == "log"  # type: ignore[union-attr]
    assert informers.target("/api/v1/namespaces/shop/secrets") is None  # never kept
    assert informers.target("/api/v1/namespaces/shop") is None
    assert informers.target("/api/v1/pods/web") is None


def test_pages_across_namespaces_count_what_is_left_with_and_without_a_selector() -> None:
    store = Store(Kind("/api/v1", "pods", "Pod"))
    objects = [
        {"metadata": {"namespace": space, "name": f"p{n}", "labels": {"even": str(n % 2 == 0)}}}
        for space in ("b", "a", "c")
        for n in range(4)
    ]
    store.replace(objects, "7")

    def walk(match: Any) -> list[tuple[str, str]]:
        seen: list[tuple[str, str]] = []
        answer = store.listing(None, match, limit=5)
        while True:
            seen += [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in answer["items"]]
            token = answer["metadata"].get("continue")
            if not token:
                return seen
            left = answer["metadata"]["remainingItemCount"]
            answer = store.listing(None, match, limit=5, after=after_token(token))
            assert left >= len(answer["items"])

    everything = walk(None)
    assert everything == sorted(everything) and len(everything) == 12
    assert store.listing(None, limit=5)["metadata"]["remainingItemCount"] == 7
    even = walk(lambda key, entry: entry.labels["even"] == "True")
    assert even == [(s, f"p{n}") for s in ("a", "b", "c") for n in (0, 2)]


def test_no_cached_answer_is_older_than_what_the_server_read_afresh(sandbox: Sandbox) -> None:
    clusters = cached(sandbox)
    stale_ok, fresh = clusters.api(stale_ok=True), clusters.api()
    path = PODS.format(ns="default")
    fresh.request("POST", path, body=pod("web", app="web"))
    stale_ok.get(path)
    store = synced(clusters, "pods").store
    planted = stale_ok.get(f"{path}/web")
    planted["metadata"]["labels"] = {"app": "planted"}  # what only the cache says
    store.written(planted)
    assert stale_ok.get(f"{path}/web")["metadata"]["labels"] == {"app": "planted"}
    services = "/api/v1/namespaces/default/services"
    fresh.request("POST", services, body={"metadata": {"name": "web"},
                                          "spec": {"ports": [{"port": 80}]}})  # fmt: skip
    fresh.get(f"{services}/web")  # newer than anything the (quiet) pods cache has seen
    assert stale_ok.get(f"{path}/web")["metadata"]["labels"] == {"app": "web"}
    clusters.close()


def test_a_fresh_list_of_a_quiet_kind_leaves_its_cache_answering(sandbox: Sandbox) -> None:
    """A list's own resourceVersion is the cluster's: another kind's change moves it past a quiet
    kind's watch. What a fresh list showed is its items, and the cache holds those."""
    clusters = cached(sandbox)
    stale_ok, fresh = clusters.api(stale_ok=True), clusters.api()
    path = PODS.format(ns="default")
    fresh.request("POST", path, body=pod("web", app="web"))
    stale_ok.get(path)
    synced(clusters, "pods")
    direct = WatchedClusters(sandbox.kubeconfig).api()
    configmaps = "/api/v1/namespaces/default/configmaps"
    direct.request("POST", configmaps, body={"metadata": {"name": "x"}})
    listed = fresh.get(path)
    store_version = int(clusters.informers.reflectors()[0].store.version)
    assert int(listed["metadata"]["resourceVersion"]) > store_version  # the cluster moved on
    assert "managedFields" not in stale_ok.get(f"{path}/web")["metadata"]  # the cache answered
    assert names(stale_ok.get(path)) == ["web"]
    clusters.close()


def test_the_overview_from_the_pods_summaries_is_the_overview_from_every_pod(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """The overview counts pods per node, their requests and the unhealthy ones from the
    summaries the pods cache keeps (no pod decoded), and says what a walk over them says."""
    kubectl = Kubectl(sandbox.kubeconfig, tmp_path / "kube-cache")
    kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=3")
    kubectl("set", "resources", "deployment/web", "--requests=cpu=250m,memory=64Mi")
    kubectl("create", "deployment", "broken", "--image=nginx:0.0.0-no-such-tag")
    fresh = CachedClusters(sandbox.kubeconfig).api()
    fresh.request("POST", PODS.format(ns="default"), body=pod("nowhere"))  # never scheduled

    def running() -> int:
        phases = [p["status"].get("phase") for p in kubectl.json("get", "pods")["items"]]
        return phases.count("Running")

    eventually(lambda: running() == 3, what="web's three pods running")
    settings = KubeSettings(kubeconfig=sandbox.kubeconfig, cache=True)
    clusters = CachedClusters(sandbox.kubeconfig)
    views = Views(Reads(clusters, settings, Catalog()))
    api = clusters.api(stale_ok=True)
    pods = views.reads.catalog.resolve(api, "pods")
    api.get(pods.path(None))  # starts the pods cache
    synced(clusters, "pods")
    summed, walked = views._summed(api, pods), views._walked(clusters.direct(), pods)
    assert summed is not None, "the pods cache gave no summaries"
    assert (summed.pods, summed.unhealthy, summed.placed) == (
        walked.pods,
        walked.unhealthy,
        walked.placed,
    )
    assert summed.requested == walked.requested and walked.requested
    shown = [(r["namespace"], r["name"], r["status"]) for r in summed.bad_pods]
    assert shown == [(r["namespace"], r["name"], r["status"]) for r in walked.bad_pods]
    assert {r["name"].split("-")[0] for r in summed.bad_pods} == {"broken", "nowhere"}
    overview = views.overview()
    assert overview["pod_count"] == walked.pods and overview["unhealthy_pods"]
    clusters.close()
