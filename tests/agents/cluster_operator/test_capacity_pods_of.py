"""The capacity review tells a Deployment's pods by their names: `web`'s are `web-<hash>-<x>`,
never `web-api`'s or `webby`'s, however many pods the namespace runs."""

from __future__ import annotations

from agents.cluster_operator.capacity import pods_of


def test_a_deployments_pods_are_its_own_and_no_namesakes() -> None:
    names = ["web-7d4b9c8f6-x2kq9", "web-7d4b9c8f6-abcde", "web-api-5f6c7d8e9-qwert",
             "webby-66b7c8d9f-zxcvb", "web-1", "web-7d4b9c8f6-toolong",
             "api-5f6c7d8e9-x2kq9"]  # fmt: skip
    rows = [{"name": name, "cpu_m": 1} for name in names]
    assert [r["name"] for r in pods_of("web", rows)] == names[:2]
    assert [r["name"] for r in pods_of("web-api", rows)] == ["web-api-5f6c7d8e9-qwert"]
    assert pods_of("we", rows) == []
