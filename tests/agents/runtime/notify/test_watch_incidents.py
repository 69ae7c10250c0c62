"""Warning events of a crash-looping Deployment are one incident, handled once, across restarts
of the watcher; once the patrol finds it fixed it is resolved, and breaking it again re-opens
it once. The patrol also finds what raises no event at all (a Service selecting no pod)."""

from __future__ import annotations

from dataclasses import replace

from agents.runtime.notify.incidents import Incident
from agents.runtime.notify.watcher import WatchPlan
from tests.agents.runtime.notify.watcher import Watcher
from tests.support.diagnosis import deployment
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

CRASHING = {"image": "busybox:1.36", "command": ["sh", "-c", "echo broken; exit 3"]}
HEALTHY = {"image": "busybox:1.36", "command": ["sh", "-c", "sleep 3600"]}
WEB = "Deployment/shop/web"


def web(watcher: Watcher, *, count: int = 1) -> Incident:
    def seen() -> Incident | None:
        found = [i for i in watcher.incidents() if i.fingerprint == WEB]
        return found[0] if found and found[0].count >= count else None

    found = eventually(seen, timeout=45, what=f"{WEB} counted {count} times")
    assert found is not None
    return found


def test_ten_warnings_of_one_deployment_are_one_incident_across_a_restart(
    kubectl: Kubectl, plan: WatchPlan
) -> None:
    kubectl("create", "namespace", "shop")
    first = Watcher(plan).start()
    try:
        kubectl("apply", "-f", "-", input=deployment("web", CRASHING, replicas=2))
        incident = web(first, count=10)
    finally:
        first.stop()
    assert [i.fingerprint for i in first.incidents()] == [WEB]
    assert [i.fingerprint for i in first.handled] == [WEB]
    assert incident.kind == "Deployment" and incident.opened == 1

    again = Watcher(plan).start()  # lists the events already there: merged, not news
    try:
        web(again, count=incident.count + 1)
    finally:
        again.stop()
    assert again.handled == []
    assert [i.fingerprint for i in again.incidents()] == [WEB]
    assert any("incident opened: CrashLoopBackOff on Deployment web" in x for x in first.lines)


def test_a_watcher_that_takes_over_handles_once_what_an_earlier_one_left_open(
    kubectl: Kubectl, plan: WatchPlan
) -> None:
    kubectl("create", "namespace", "shop")
    first = Watcher(plan).start()  # as `kubecrew watch`: it only diagnoses
    try:
        kubectl("apply", "-f", "-", input=deployment("web", CRASHING, replicas=2))
        incident = web(first, count=2)
    finally:
        first.stop()
    assert [i.fingerprint for i in first.handled] == [WEB]

    healing = Watcher(replace(plan, take_over=True)).start()  # as `kubecrew watch --heal`
    try:
        web(healing, count=incident.count + 3)
    finally:
        healing.stop()
    assert [i.fingerprint for i in healing.handled] == [WEB]  # once, however many signals
    assert any("incident still open from before: CrashLoopBackOff" in x for x in healing.lines)


def test_a_resolved_incident_is_reopened_once_when_it_fails_again(
    kubectl: Kubectl, plan: WatchPlan
) -> None:
    kubectl("create", "namespace", "shop")
    watcher = Watcher(replace(plan, every_s=1.0)).start()
    try:
        kubectl("apply", "-f", "-", input=deployment("web", CRASHING))
        web(watcher)
        kubectl("apply", "-f", "-", input=deployment("web", HEALTHY))
        eventually(
            lambda: web(watcher).state == "resolved", timeout=45, what="the patrol resolves web"
        )
        kubectl("apply", "-f", "-", input=deployment("web", CRASHING))
        back = eventually(lambda: web(watcher).opened == 2, timeout=45, what="web re-opened")
        assert back
        web(watcher, count=web(watcher).count + 3)  # more warnings: merged into the re-opening
    finally:
        watcher.stop()
    # Whatever the patrol saw first (the rollout's DeploymentUnavailable, or the crash loop),
    # web is one incident: handled once per opening.
    assert [i.fingerprint for i in watcher.handled] == [WEB, WEB]
    assert web(watcher).opened == 2


SERVICE = """\
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: wbe}
  ports: [{port: 80}]
"""


def test_the_patrol_finds_a_broken_service_that_raises_no_event(
    kubectl: Kubectl, plan: WatchPlan
) -> None:
    kubectl("create", "namespace", "shop")
    kubectl("apply", "-f", "-", input=deployment("web", HEALTHY))
    kubectl("rollout", "status", "deploy/web", "-n", "shop", "--timeout=60s")  # healthy first
    kubectl("apply", "-f", "-", input=SERVICE)
    watcher = Watcher(replace(plan, every_s=1.0)).start()
    fingerprint = "Service/shop/web"
    try:
        found = eventually(
            lambda: [i for i in watcher.incidents() if i.fingerprint == fingerprint],
            timeout=30,
            what="the patrol's incident",
        )
    finally:
        watcher.stop()
    assert found[0].source == "patrol"
    assert [i.fingerprint for i in watcher.handled] == [fingerprint]
