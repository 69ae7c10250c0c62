"""Server-side Tables for Events: core/v1 and events.k8s.io/v1 Events print Last Seen, Object
and Count the way `kubectl get events` shows them, a series overriding the singleton fields.
"""

from __future__ import annotations

import pytest

from tests.sandbox.table_objects import Json, ago, column_names, meta, render, row_by_name

EVENT_CORE = {
    "metadata": meta("web-1.17f"),
    "involvedObject": {"kind": "Pod", "name": "web-1", "fieldPath": "spec.containers{app}"},
    "reason": "BackOff",
    "type": "Warning",
    "message": "Back-off restarting failed container\n",
    "source": {"component": "kubelet", "host": "node-1"},
    "firstTimestamp": ago(600),
    "lastTimestamp": ago(30),
    "count": 12,
}
EVENT_V1 = {
    "metadata": meta("web-1.18a"),
    "regarding": {"kind": "Deployment", "name": "web"},
    "reason": "ScalingReplicaSet",
    "type": "Normal",
    "note": "Scaled up replica set web-7d4b9 to 3",
    "reportingController": "deployment-controller",
    "eventTime": ago(90),
}


@pytest.mark.parametrize(
    ("group", "event", "expected"),
    [
        pytest.param(
            "",
            EVENT_CORE,
            {
                "Last Seen": "30s",
                "Type": "Warning",
                "Reason": "BackOff",
                "Object": "pod/web-1",
                "Subobject": "spec.containers{app}",
                "Source": "kubelet, node-1",
                "Message": "Back-off restarting failed container",
                "First Seen": "10m",
                "Count": 12,
                "Name": "web-1.17f",
            },
            id="core-v1",
        ),
        pytest.param(
            "events.k8s.io",
            EVENT_V1,
            {
                "Last Seen": "90s",
                "Object": "deployment/web",
                "Source": "deployment-controller",
                "Message": "Scaled up replica set web-7d4b9 to 3",
                "First Seen": "90s",
                "Count": 1,
            },
            id="events-k8s-io-singleton",
        ),
        pytest.param(
            "",
            EVENT_CORE | {"series": {"count": 40, "lastObservedTime": ago(5)}},
            {"Last Seen": "5s", "Count": 40},
            id="series-overrides-last-seen-and-count",
        ),
    ],
)
def test_events_print_last_seen_object_and_count(group: str, event: Json, expected: Json) -> None:
    table = render(group, "Event", event)
    assert column_names(table, priority=0) == ["Last Seen", "Type", "Reason", "Object", "Message"]
    assert column_names(table, priority=1) == ["Subobject", "Source", "First Seen", "Count", "Name"]
    row = row_by_name(table)
    assert {key: row[key] for key in expected} == expected
