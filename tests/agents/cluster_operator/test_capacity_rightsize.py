"""The capacity review right-sizes what it cannot scale down: the shop's web runs its minimum of 3
replicas, each requesting 500m CPU and using about 20m, so no downscale is proposed; the review
proposes resizing web's CPU request to what runs it at TARGET, the cost policy supports it and
nothing objects, and `set_resources` applies exactly that under the proposal; web's pods come
back with the new request. api (one replica) is oversized too, but the shop's CapacityPolicy
rejects any CPU request under 200m: reported rejected, not changed. A second review proposes no
other resize and writes no request. The scene and its checks: tests/support/capacity.py, which
the model-planned twin runs too.
"""

from __future__ import annotations

from sandbox.server import Sandbox
from tests.support.capacity import capacity_review_right_sizes_what_it_cannot_scale_down
from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl


def test_capacity_review_right_sizes_what_it_cannot_scale_down(
    sandbox: Sandbox, kubectl: Kubectl, operator: Operator
) -> None:
    capacity_review_right_sizes_what_it_cannot_scale_down(sandbox, kubectl, operator)
