"""A rejected downscale is not proposed again at every review: the shop's sale freeze rejects
web's 5 -> 1 outright; the next review proposes nothing and reports the rejection it remembers
(its proposal, its reasons, and what would make the agent judge it again), and once web runs 4
replicas the workload is new to judge, so the review proposes afresh (and is rejected again).
"""

from __future__ import annotations

import json

from kubecrew.demo.governance import UNDERUSED
from kubecrew.demo.shop import manifests
from tests.support.capacity import proposed_scale, replicas, shop_of_five
from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

FREEZE = """\
apiVersion: kubecrew.io/v1alpha1
kind: CapacityPolicy
metadata: {name: shop-sale-freeze, labels: {kubecrew.io/team: shop}}
spec:
  selector: {namespaces: [shop], kinds: [Deployment]}
  rules:
    - name: no-downscale-during-the-sale
      actions: [scale]
      when: 'action.replicas.to < action.replicas.from'
"""
RULE = "CapacityPolicy shop-sale-freeze / rule no-downscale-during-the-sale"


def scale_proposals(operator: Operator) -> list[str]:
    listed = operator.read_store(lambda s: s.list())
    return [p.id for p in listed if p.action.type == "scale"]


def test_a_rejected_downscale_is_reported_not_proposed_again_until_the_workload_changes(
    kubectl: Kubectl, operator: Operator
) -> None:
    operator.policy("capacity", manifests(FREEZE, UNDERUSED))
    shop_of_five(kubectl)

    first = operator.capacity()
    [saving] = first.data["savings"]
    assert saving["outcome"] == "rejected" and saving["applied"] is None, first.answer
    assert saving["requests"] == "web: cpu 100m, memory 32Mi"
    basis = (
        "not proposed again while it runs 5 replicas, each requesting web: cpu 100m, memory 32Mi"
    )
    assert basis in first.answer and RULE in first.answer

    again = operator.capacity()
    assert not proposed_scale(operator) and "scale" not in operator.called(), again.answer
    [kept] = again.data["savings"]
    assert (kept["proposal"], kept["outcome"]) == (saving["proposal"], "rejected")
    [told] = kept["steps"]
    assert told.startswith(f"rejected earlier (proposal {saving['proposal']}): ")
    assert RULE in told and told.endswith(basis)
    assert scale_proposals(operator) == [saving["proposal"]] and replicas(kubectl) == 5

    kubectl("scale", "deploy/web", "-n", "shop", "--replicas=4")
    kubectl("rollout", "status", "deploy/web", "-n", "shop", "--timeout=60s")

    def measured() -> bool:
        path = "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods"
        return len(json.loads(kubectl("get", "--raw", path))["items"]) == 4

    eventually(measured, what="metrics for the 4 web pods")
    changed = operator.capacity()
    [fresh] = changed.data["savings"]
    assert fresh["replicas"] == 4 and fresh["proposal"] != saving["proposal"], changed.answer
    assert fresh["outcome"] == "rejected" and proposed_scale(operator)
    assert sorted(scale_proposals(operator)) == sorted([saving["proposal"], fresh["proposal"]])
    assert replicas(kubectl) == 4 and not operator.mutations()
