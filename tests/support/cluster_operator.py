"""The Cluster Operator on a sandbox, as its tests drive it, with the kube server's policy gate
and the policy server sharing one SQLite store and the test's own policy documents (written per
test, so a scene's limits are its own and no wall-clock maintenance window decides it).

`Operator` opens one conversation per call (`patrol`, `capacity`, `ask`) on the same agent home,
so what one patrol remembers (its eviction intents) the next one reads, as on a schedule.
`window_policy` writes a node ChangePolicy whose maintenance window opens on the sandbox's clock.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, timedelta
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio

from agents.cluster_operator.conversation import Conversation, conversation
from agents.runtime.brain import Deterministic
from agents.runtime.contract import Outcome
from agents.runtime.toolbox import CallRecord, Servers
from core.policy.audit import AuditRecord
from core.policy.proposals import ApprovalRequest, ProposalRecord
from core.policy.settings import PolicySettings
from core.policy.store.sqlite import SqliteStore
from kubecrew.demo.shop import OWNERSHIP
from mcp_servers.gitops.settings import GitopsSettings
from mcp_servers.kube.settings import KubeSettings
from mcp_servers.metrics.settings import MetricsSettings
from sandbox.server import Sandbox

AGENT = "cluster-operator"
T = TypeVar("T")


class Operator:
    def __init__(self, sandbox: Sandbox, root: Path, *, repo: Path | None = None) -> None:
        self.root, self.repo = root, repo  # with a repo, the gitops server reads it
        self.policies = root / "policies"
        self.policies.mkdir()
        (self.policies / "ownership.yaml").write_text(OWNERSHIP)
        self.store = root / "store.sqlite"
        self.home = root / "agent-home"
        self.kubeconfig = sandbox.kubeconfig
        self.metrics: MetricsSettings | None = None  # a metrics server, when a test runs one
        self.last: Conversation | None = None

    def policy(self, name: str, text: str) -> None:
        (self.policies / f"{name}.yaml").write_text(text)

    def servers(self) -> Servers:
        paths = (self.policies,)
        return Servers(
            kube=KubeSettings(
                kubeconfig=self.kubeconfig, policies=paths, policy_store=str(self.store),
                agent=AGENT,
            ),
            policy=PolicySettings(policies=paths, store=str(self.store), agent=AGENT),
            gitops=None if self.repo is None else GitopsSettings(
                repo=self.repo, state_dir=self.root / "prs", kubeconfig=self.kubeconfig
            ),
            metrics=self.metrics,
        )  # fmt: skip

    def _run(
        self,
        call: str,
        *args: Any,
        counters: Literal["accept", "refuse"],
        thread: str | None = None,
    ) -> Outcome:
        async def go() -> Outcome:
            async with conversation(
                self.servers(), Deterministic(), home=self.home, counters=counters, thread=thread
            ) as talk:
                self.last = talk
                method = getattr(talk, call)
                outcome: Outcome = await method(*args)
                return outcome

        return anyio.run(go)

    def patrol(self) -> Outcome:
        return self._run("patrol", counters="accept")

    def capacity(self, *, counters: Literal["accept", "refuse"] = "accept") -> Outcome:
        return self._run("capacity", counters=counters)

    def ask(self, question: str, *, thread: str | None = None) -> Outcome:
        """One message; the same `thread` carries on a conversation ("drain node-2", "yes")."""
        return self._run("ask", question, counters="accept", thread=thread)

    def called(self) -> list[str]:
        return [c.tool for c in self.last_calls()]

    def last_calls(self) -> list[CallRecord]:
        """The tool calls of the latest conversation, in order."""
        assert self.last is not None
        return list(self.last.toolbox.calls)

    def mutations(self) -> list[AuditRecord]:
        return self.read_store(lambda s: s.audit(kind="mutation"))

    def proposal(self, proposal: str) -> ProposalRecord:
        return self.read_store(lambda s: s.get(proposal))

    def approvals(self) -> list[ApprovalRequest]:
        return self.read_store(lambda s: s.approvals())

    def read_store(self, fn: Callable[[SqliteStore], T]) -> T:
        opened = SqliteStore(self.store)
        try:
            return fn(opened)
        finally:
            opened.close()


WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_WINDOWED = """\
apiVersion: kubecrew.io/v1alpha1
kind: ChangePolicy
metadata: {name: node-changes}
spec:
  selector: {kinds: [Node]}
  maintenance:
    actions: [drain]
    windows: [%(window)s]
  blastRadius: {maxEvictionsPerHour: %(evictions)d}
"""
_TRAINING = """\
---
apiVersion: kubecrew.io/v1alpha1
kind: ChangePolicy
metadata: {name: training-preemption}
spec:
  selector: {namespaces: [ml]}
  maintenance:
    actions: [evict]
    windows: [%(window)s]
"""


def window_policy(
    sandbox: Sandbox,
    *,
    opens_in: timedelta,
    lasts: timedelta = timedelta(hours=2),
    max_evictions_per_hour: int = 10,
    training_may_be_evicted: bool = False,
) -> str:
    """Node drains only in a window opening `opens_in` from the sandbox's clock (UTC), not the
    wall clock's: the test's world decides when it is open. With `training_may_be_evicted`, a
    ChangePolicy for namespace ml allows evicting its pods in the same window."""
    now = sandbox.call(lambda cluster: cluster.clock.now()).astimezone(UTC)
    start = (now + opens_in).replace(second=0, microsecond=0)
    if opens_in > timedelta(0):
        start += timedelta(minutes=1)  # never before now + opens_in
    end = start + lasts
    window = (
        f'{{name: test-window, days: [{WEEKDAYS[start.weekday()]}], start: "{start:%H:%M}", '
        f'end: "{end:%H:%M}", timezone: UTC}}'
    )
    text = _WINDOWED % {"window": window, "evictions": max_evictions_per_hour}
    return text + (_TRAINING % {"window": window} if training_may_be_evicted else "")
