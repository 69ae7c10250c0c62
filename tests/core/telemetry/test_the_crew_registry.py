"""The crew's metrics registry (core.telemetry.metrics): only the crew's own `kubecrew_`
metrics, none of the client library's default collectors, and the leader gauge another part of
the crew sets through `leading`."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from core.telemetry import REGISTRY, exposition, leading


def test_the_registry_holds_only_the_crews_metrics() -> None:
    names = {family.name for family in REGISTRY.collect()}
    assert names and all(name.startswith("kubecrew_") for name in names), names
    assert {"kubecrew_incidents_opened", "kubecrew_tool_call_duration_seconds"} <= names
    assert not any(name.startswith(("process_", "python_")) for name in names)


def test_the_leader_gauge_follows_the_lease_held() -> None:
    leading("kubecrew-watch-test", True)
    assert REGISTRY.get_sample_value("kubecrew_leader", {"lease": "kubecrew-watch-test"}) == 1
    leading("kubecrew-watch-test", False)

    body, content_type = exposition()
    assert content_type.startswith("text/plain; version=")
    [leader] = [
        f for f in text_string_to_metric_families(body.decode()) if f.name == "kubecrew_leader"
    ]
    held = {s.labels["lease"]: s.value for s in leader.samples}
    assert held["kubecrew-watch-test"] == 0
