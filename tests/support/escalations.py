"""The Platform as the org's arbiter, as its deterministic test and its model-planned twin
(tests/agents/runtime/model_scenes) both drive it, on the Cluster Operator's policies and store:
`CHANGES` is the shop's ChangePolicy (deletes need shop-admins, a patch rule reads the live
object), `propose_as_dev_team` proposes through the policy server as agent dev-team, and
`arbitrate` runs one Platform conversation answering the escalations, planned by the planner
given (the deterministic brain by default). `MIN_REPLICAS` is the rule a denial cites.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.shared.memory import create_connected_server_and_client_session

from agents.platform.conversation import conversation
from agents.runtime.brain import Deterministic, Planner
from agents.runtime.contract import Outcome
from agents.runtime.toolbox import Servers
from core.policy.settings import PolicySettings
from mcp_servers.kube.settings import KubeSettings
from mcp_servers.policy.server import build
from tests.support.cluster_operator import Operator
from tests.support.mcp_hosts import answer

CHANGES = """\
apiVersion: kubecrew.io/v1alpha1
kind: ChangePolicy
metadata: {name: shop-changes, labels: {kubecrew.io/team: shop}}
spec:
  selector: {namespaces: [shop]}
  approvals:
    - name: deletes
      actions: [delete]
      approvers: {groups: [shop-admins]}
  rules:
    - name: not-frozen
      actions: [patch]
      when: 'target.metadata.name == "frozen"'
      message: the frozen workload is never patched
"""
MIN_REPLICAS = "CapacityPolicy shop-min-capacity / rule min-replicas"


def arbitrate(operator: Operator, planner: Planner | None = None) -> tuple[Outcome, list[str]]:
    """One Platform conversation on the operator's policies and store: answer escalations
    (planned by `planner`, the deterministic brain by default)."""
    paths = (operator.policies,)
    servers = Servers(
        kube=KubeSettings(
            kubeconfig=operator.kubeconfig, policies=paths, policy_store=str(operator.store),
            agent="platform",
        ),
        policy=PolicySettings(policies=paths, store=str(operator.store), agent="platform"),
    )  # fmt: skip

    async def go() -> tuple[Outcome, list[str]]:
        home = operator.policies.parent / "platform-home"
        async with conversation(servers, planner or Deterministic(), home=home) as talk:
            outcome = await talk.ask("any escalations?")
            return outcome, [c.tool for c in talk.toolbox.calls]

    return anyio.run(go)


def propose_as_dev_team(operator: Operator, **arguments: Any) -> dict[str, Any]:
    settings = PolicySettings(
        policies=(operator.policies,), store=str(operator.store), agent="dev-team"
    )

    async def go() -> dict[str, Any]:
        async with create_connected_server_and_client_session(build(settings)) as session:
            return answer(await session.call_tool("propose", arguments))

    return anyio.run(go)
