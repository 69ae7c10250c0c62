"""Ages on a sandbox that lives ten times faster than life (the suite's sandboxes run at RATE):
`kubectl describe` and `date` compute them with the wall clock, `kubectl get` on the server, and
they agree. The stamps kubectl reads sit where the wall clock puts them (never a day behind,
never in the future), an Event a client writes at the wall's now is seen as just written, and
the crew, which asks for the cluster's own time, reads the stamps as the sandbox wrote them.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta

import pytest

from core.connection import Clusters
from sandbox.server import Sandbox
from tests.sandbox.kubectl.read_objects import pod, utc_timestamp
from tests.sandbox.kubectl.suite import create, rows
from tests.support.clock import RATE
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

pytestmark = pytest.mark.kubectl

_UNIT = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def seconds(age: str) -> int:
    """kubectl's human duration ("25s", "2m5s", "3h10m") in seconds."""
    parts = re.findall(r"(\d+)([dhms])", age)
    assert parts and "".join(n + u for n, u in parts) == age, f"not an age: {age!r}"
    return sum(int(n) * _UNIT[u] for n, u in parts)


def stamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def get_age(kubectl: Kubectl, name: str) -> int:
    [row] = rows(kubectl("get", "pod", name, "-n", "default"))
    return seconds(row["AGE"])


def described_scheduled_age(kubectl: Kubectl, name: str) -> int:
    described = kubectl("describe", "pod", name, "-n", "default")
    _, _, events = described.partition("\nEvents:\n")
    [line] = [line for line in events.splitlines() if " Scheduled " in line]
    return seconds(line.split()[2])


def test_describe_ages_match_get_ages_and_stamps_sit_on_the_wall_clock(
    kubectl: Kubectl,
) -> None:
    create(kubectl, pod("aged", "default"))
    eventually(lambda: get_age(kubectl, "aged") >= 20, what="the pod 20 s old in sandbox time")

    before = get_age(kubectl, "aged")
    described = described_scheduled_age(kubectl, "aged")
    after = get_age(kubectl, "aged")

    # Scheduled in the pod's first sandbox second; kubectl rounds both ages down to the second.
    assert before - 2 <= described <= after + 1, (before, described, after)
    created = stamp(
        kubectl.json("get", "pod", "aged", "-n", "default")["metadata"]["creationTimestamp"]
    )
    age_by_date = (datetime.now(UTC) - created).total_seconds()
    assert 0 <= age_by_date < after + 4 * RATE, (age_by_date, after)  # not a day behind


def test_an_event_written_at_the_walls_now_is_seen_as_just_written(kubectl: Kubectl) -> None:
    time.sleep(4)  # the sandbox is now some forty seconds ahead of the wall clock
    written = utc_timestamp()
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "fresh", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "aged", "namespace": "default"},
        "reason": "Checked",
        "message": "written now",
        "type": "Normal",
        "source": {"component": "kubecrew-test"},
        "firstTimestamp": written,
        "lastTimestamp": written,
    }
    create(kubectl, event)

    [row] = [r for r in rows(kubectl("get", "events", "-n", "default")) if r["REASON"] == "Checked"]
    assert seconds(row["LAST SEEN"]) <= 2 * RATE, row
    read = kubectl.json("get", "event", "fresh", "-n", "default")["lastTimestamp"]
    assert abs(stamp(read) - stamp(written)) <= timedelta(seconds=3 * RATE), (read, written)


def test_the_crew_reads_the_stamps_in_the_clusters_own_time(
    sandbox: Sandbox, kubectl: Kubectl
) -> None:
    time.sleep(2)
    create(kubectl, pod("timed", "default"))
    sandbox_now = sandbox.call(lambda cluster: cluster.clock.now())

    clusters = Clusters(sandbox.kubeconfig)
    try:
        as_crew = clusters.api().request("GET", "/api/v1/namespaces/default/pods/timed")
    finally:
        clusters.close()
    as_kubectl = kubectl.json("get", "pod", "timed", "-n", "default")

    crew_stamp = stamp(as_crew["metadata"]["creationTimestamp"])
    assert abs(crew_stamp - sandbox_now) <= timedelta(seconds=2 * RATE)
    ahead = crew_stamp - stamp(as_kubectl["metadata"]["creationTimestamp"])
    assert ahead >= timedelta(seconds=RATE), ahead  # the sandbox lives ahead of the wall
