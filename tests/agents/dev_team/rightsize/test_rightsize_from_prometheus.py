"""Right-sizing web from what it used, asked in a conversation with the Dev Team agent: a real
Prometheus scrapes the sandbox; web asks for far more than nginx uses, so the agent opens a pull
request lowering its requests with the numbers (p95 CPU, peak memory, samples, window, saving),
merged per policy, synced and validated. Without Prometheus, or with too few samples, the answer
says what is missing and nothing changes."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents.dev_team.conversation import conversation
from agents.dev_team.rightsize import MIN_SAMPLES
from agents.runtime.brain import Deterministic
from agents.runtime.contract import Outcome
from mcp_servers.gitops.providers.local import LocalProvider
from mcp_servers.gitops.repo import Repository
from mcp_servers.metrics.settings import MetricsSettings
from tests.support.gitops import git
from tests.support.prometheus import PROMETHEUS, running_prometheus
from tests.support.team import WEB, Team
from tests.support.waiting import eventually

pytestmark = pytest.mark.timeout(120)
needs_prometheus = pytest.mark.skipif(
    PROMETHEUS is None and not os.environ.get("CI"),
    reason="no `prometheus` binary on PATH; `make install` installs it (required in CI)",
)
GENEROUS = """\
          resources:  # sized for the launch
            requests:
              cpu: 500m
              memory: 512Mi
            limits:
              memory: 1Gi
"""


def ask(team: Team, question: str, metrics: MetricsSettings | None) -> tuple[Outcome, list[str]]:
    servers = dataclasses.replace(team.servers, metrics=metrics)

    async def go() -> tuple[Outcome, list[str]]:
        async with conversation(servers, Deterministic(), home=team.home) as talk:
            outcome = await talk.ask(question)
            return outcome, [c.tool for c in talk.toolbox.calls]

    return anyio.run(go)


def over_provision(team: Team) -> None:
    """web asks for 500m CPU and 512Mi (limit 1Gi), merged and synced: nginx uses a sliver."""
    git(team.repo, "reset", "-q", "--hard", "main")
    file = team.repo / WEB
    file.write_text(file.read_text().replace("# pinned\n", "# pinned\n" + GENEROUS, 1))
    git(team.repo, "-c", "user.name=dev", "-c", "user.email=dev@shop", "commit", "-qam", "size")
    team.sync()
    team.rolled_out()


def requests_of(team: Team) -> dict[str, Any]:
    live = team.kubectl.json("get", "deployment", "web", "-n", "shop")
    resources: dict[str, Any] = live["spec"]["template"]["spec"]["containers"][0]["resources"]
    return resources


@needs_prometheus
def test_an_over_provisioned_web_gets_a_merged_pr_lowering_its_requests(
    team: Team, tmp_path: Path
) -> None:
    over_provision(team)
    with running_prometheus(team.sandbox.kubeconfig, tmp_path / "prometheus") as prom:
        metrics = MetricsSettings(prometheus_url=prom.url, kubeconfig=team.sandbox.kubeconfig)

        early, _ = ask(team, "is web over-provisioned over the last 5s?", metrics)
        assert early.data["outcome"] == "no-metrics", early.answer
        assert "too few samples" in early.answer and "Nothing changed" in early.answer

        samples = 'sum(count_over_time(container_memory_working_set_bytes{namespace="shop"}[5m]))'
        eventually(lambda: (prom.value(samples) or 0) >= MIN_SAMPLES + 1, timeout=40)
        outcome, called = ask(team, "right-size web over the last 5m", metrics)

    assert outcome.nodes == ["understand", "task"]
    assert outcome.data["outcome"] == "resized", outcome.answer
    [web] = outcome.data["containers"]
    assert web["samples"] >= MIN_SAMPLES and web["pods"] >= 1
    assert 0 < web["cpu_p95"] < 0.1 and 0 < web["memory_peak"] < 64 * 2**20
    new = web["new"]
    assert 0.01 <= new["requests.cpu"] < 0.5 and 32 * 2**20 <= new["requests.memory"] < 2**29
    assert "limits.memory" not in new  # 1Gi still holds the new request and the peak
    assert outcome.data["savings_per_month"] > 0 and outcome.data["window"] == "5m"
    assert "quantile_over_time(0.95" in outcome.data["queries"]["cpu_p95"]
    assert (
        "p95" in outcome.answer
        and "samples" in outcome.answer
        and "saves about $" in outcome.answer
    )
    assert called.index("propose") < called.index("propose_change") < called.index("merge_pr")

    repo = Repository(team.repo, author_name="test", author_email="test@shop")
    pr = LocalProvider(repo, team.repo.parent / "prs").get(outcome.data["pr"]).pr
    assert pr.state == "merged" and pr.labels == ["kubecrew-rightsize"]
    manifest = repo.read("main", WEB)
    assert "resources:  # sized for the launch" in manifest and "cpu: 500m" not in manifest
    live = requests_of(team)
    assert live["requests"]["cpu"] == web["edits"][0]["value"]
    assert live["requests"]["memory"] == web["edits"][1]["value"]
    assert live["limits"] == {"memory": "1Gi"}


def test_without_prometheus_the_answer_says_what_is_missing_and_changes_nothing(
    team: Team,
) -> None:
    over_provision(team)
    head = git(team.repo, "rev-parse", "main")

    unset, called = ask(team, "right-size web", None)
    assert unset.data["outcome"] == "no-metrics", unset.answer
    assert "no metrics server is configured" in unset.answer
    assert "Nothing changed" in unset.answer and not {"query", "propose"} & set(called)

    without = MetricsSettings(kubeconfig=team.sandbox.kubeconfig)  # metrics.k8s.io only
    answer, called = ask(team, "is web oversized?", without)
    assert answer.data["outcome"] == "no-metrics", answer.answer
    assert "has no Prometheus, only metrics.k8s.io" in answer.answer
    assert not {"query", "propose", "propose_change"} & set(called)
    assert git(team.repo, "rev-parse", "main") == head
    assert requests_of(team)["requests"] == {"cpu": "500m", "memory": "512Mi"}
