"""Consolidation through the node pool, on a sandbox whose nodes are three idle machines of
the Cluster API pool `workers`: the capacity review proposes draining one, the patrol drains it
and then takes it out of its pool (its Machine marked cluster.x-k8s.io/delete-machine, the
MachineDeployment scaled 3 -> 2 under its own proposal), so Cluster API deletes exactly that
machine and brings no fresh node back. A pool at its floor (the autoscaler's min-size
annotation, or a CapacityPolicy's minimum) gives no node back. Judged on the cluster: replicas,
Machines and Nodes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl
from tests.support.pool_world import MIN_SIZE, machines, nodeless, nodes, pools, ready, replicas
from tests.support.waiting import eventually

POOL_MINIMUM = """\
apiVersion: kubecrew.io/v1alpha1
kind: CapacityPolicy
metadata: {name: pool-minimum}
spec:
  selector: {kinds: [MachineDeployment]}
  minReplicas: 3
"""


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    with nodeless(tmp_path / "sandbox") as running:
        yield running


def test_a_drained_pool_node_leaves_through_its_pool_and_is_not_replaced(
    kubectl: Kubectl, operator: Operator
) -> None:
    pools(kubectl, workers=3)
    before = machines(kubectl)

    review = operator.capacity()
    [found] = review.data["consolidation"]
    assert found["pool"] == "default/workers" and found["queued"], review.answer
    assert "so no fresh node replaces it" in operator.proposal(found["proposal"]).proposal.rationale

    patrol = operator.patrol()

    [removed] = patrol.data["pool_removals"]
    assert removed["node"] == found["node"] and removed["removed"], patrol.answer
    assert (removed["replicas_from"], removed["replicas_to"]) == (3, 2)
    record = operator.proposal(removed["proposal"])
    assert str(record.proposal.action.target) == "MachineDeployment default/workers"
    assert f"Node {found['node']} (pool default/workers" in patrol.answer
    written = [r.summary.split(" under proposal ")[0] for r in operator.mutations()]
    assert any(w.startswith("patch: patch Machine default/") for w in written), written
    assert any("scale MachineDeployment default/workers 3 -> 2" in w for w in written), written

    eventually(lambda: found["node"] not in nodes(kubectl, "workers"), what="the node gone")
    eventually(lambda: len(machines(kubectl)) == 2, what="its machine gone")
    assert replicas(kubectl, "workers") == 2 and set(machines(kubectl)) < set(before)
    assert ready(kubectl, "workers") == 2

    again = operator.patrol()  # the node's maintenance entry left with it
    assert again.data["pool_removals"] == [] and again.data["maintenance"] == [], again.answer
    assert replicas(kubectl, "workers") == 2 and len(machines(kubectl)) == 2


@pytest.mark.parametrize("floor", ["min-size-annotation", "capacity-policy"])
def test_a_pool_at_its_floor_gives_no_node_back(
    kubectl: Kubectl, operator: Operator, floor: str
) -> None:
    if floor == "capacity-policy":
        operator.policy("pool-minimum", POOL_MINIMUM)
    annotated = {MIN_SIZE: "3"} if floor == "min-size-annotation" else None
    pools(kubectl, workers=3, workers_annotations=annotated)

    review = operator.capacity()

    assert review.data["consolidation"] == [], review.answer
    assert "propose" not in operator.called()
    assert replicas(kubectl, "workers") == 3 and len(machines(kubectl)) == 3
