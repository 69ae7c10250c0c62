"""Leader election on a real Lease of the sandbox, with short timings (lease 3 s, renew 2 s,
retry 0.25 s): one replica of two leads; a clean stop hands over at the next try; a holder that
vanishes without a word is taken over only once its lease has run out; a holder that can no
longer renew stops its work before anyone else may take the Lease; the schedule's stamps ride on
the Lease to the next holder."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from core.connection import Clusters
from core.telemetry import REGISTRY
from kubecrew.leader import Leadership, LeaseError, Timings, fenced
from sandbox.server import Options, Sandbox
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

TIMINGS = Timings(lease_s=3.0, renew_s=2.0, retry_s=0.25)
NAMESPACE = "kubecrew-system"


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Sandbox]:
    with Sandbox(Options(home=tmp_path / "sandbox", nodes=1, rate=10.0)) as running:
        Kubectl(running.kubeconfig, tmp_path / "cache")("create", "namespace", NAMESPACE)
        yield running


def replica(cluster: Sandbox, identity: str, lines: list[str] | None = None) -> Leadership:
    api = Clusters(kubeconfig=cluster.kubeconfig).api()
    say = lines.append if lines is not None else None
    return Leadership(api, NAMESPACE, "crew", identity=identity, timings=TIMINGS, say=say)


def holder(kubectl: Kubectl) -> str:
    lease = kubectl.json("get", "lease", "crew", "-n", NAMESPACE)
    return str(lease["spec"].get("holderIdentity") or "")


def test_one_leads_and_a_clean_stop_hands_over_at_the_next_try(
    cluster: Sandbox, tmp_path: Path
) -> None:
    kubectl = Kubectl(cluster.kubeconfig, tmp_path / "cache")
    first = replica(cluster, "first").start()
    second = replica(cluster, "second")
    try:
        assert first.leading
        second.start()
        time.sleep(TIMINGS.lease_s)  # a whole lease: the holder renews, the other never takes it
        assert first.leading and not second.leading
        assert holder(kubectl) == "first"

        first.stop()  # released: no holder, a lease of 1 s
        eventually(lambda: second.leading, timeout=10, what="the second replica leads")
        lease = kubectl.json("get", "lease", "crew", "-n", NAMESPACE)
        assert lease["spec"]["holderIdentity"] == "second"
        assert lease["spec"]["leaseTransitions"] == 1
        assert not first.leading
    finally:
        first.stop()
        second.stop()


def test_a_holder_that_vanishes_is_taken_over_only_after_its_lease(
    cluster: Sandbox, tmp_path: Path
) -> None:
    first = replica(cluster, "first").start()
    second = replica(cluster, "second").start()
    try:
        first.stop(release=False)  # as `kill -9`: no release, the record just stops changing
        gone = time.monotonic()
        eventually(lambda: second.leading, timeout=15, what="the second replica takes over")
        waited = time.monotonic() - gone
        assert waited >= TIMINGS.lease_s - TIMINGS.retry_s  # never before the lease ran out
        assert holder(Kubectl(cluster.kubeconfig, tmp_path / "cache")) == "second"
    finally:
        second.stop()


def test_a_holder_that_cannot_renew_stops_its_work_before_the_lease_runs_out(
    tmp_path: Path,
) -> None:
    running = Sandbox(Options(home=tmp_path / "sandbox", nodes=1, rate=10.0))
    running.start()
    Kubectl(running.kubeconfig, tmp_path / "cache")("create", "namespace", NAMESPACE)
    lines: list[str] = []
    api = Clusters(kubeconfig=running.kubeconfig).api()
    timings = Timings(lease_s=6.0, renew_s=2.0, retry_s=0.25)  # room to tell the two apart
    leader = Leadership(api, NAMESPACE, "crew", identity="first", timings=timings, say=lines.append)
    leader.start()
    gone: list[float] = []
    stopped: list[float] = []

    def api_goes_away() -> None:
        gone.append(time.monotonic())
        running.stop()

    async def work() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            stopped.append(time.monotonic())

    async def main() -> tuple[bool, None]:
        async with anyio.create_task_group() as group:
            group.start_soon(anyio.to_thread.run_sync, api_goes_away)
            return await fenced(leader, work)

    try:
        finished, _ = anyio.run(main)
        assert not finished and stopped
        # The last renewal was at most a retry period before the API went away; the work
        # stopped before the lease ran out, counted from then.
        assert stopped[0] - gone[0] < timings.lease_s - timings.retry_s
        assert not leader.leading
        eventually(lambda: any("lost the Lease" in line for line in lines), timeout=5)
    finally:
        leader.stop(release=False)


def test_the_leader_gauge_says_whether_this_process_holds_the_lease(cluster: Sandbox) -> None:
    alone = replica(cluster, "alone").start()

    def gauge() -> float | None:
        return REGISTRY.get_sample_value("kubecrew_leader", {"lease": alone.lease})

    try:
        eventually(lambda: gauge() == 1, timeout=10, what="kubecrew_leader 1 while leading")
    finally:
        alone.stop()
    assert gauge() == 0


def test_stamps_ride_on_the_lease_to_the_next_holder(cluster: Sandbox) -> None:
    first = replica(cluster, "first").start()
    first.stamp("started.patrol", "2026-12-05T10:00:00Z")
    first.stop()
    second = replica(cluster, "second").start()
    try:
        assert second.leading
        assert second.stamps() == {"started.patrol": "2026-12-05T10:00:00Z"}
    finally:
        second.stop()


def test_an_identity_that_may_not_use_the_lease_is_one_line_at_start(cluster: Sandbox) -> None:
    api = Clusters(kubeconfig=cluster.kubeconfig).api()
    absent = Leadership(api, "no-such-namespace", "crew", timings=TIMINGS)
    with pytest.raises(LeaseError, match="cannot take part in the election of Lease"):
        absent.start()
