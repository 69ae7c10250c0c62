"""The cluster's own time, for the ages and recency windows the kube server computes.

The crew reads stamps as the cluster wrote them (`core.connection`'s clock header), so an age
is the cluster's now minus a stamp, never this machine's: on a real cluster the two agree within
seconds; on a sandbox that lives ten times faster than life they do not. The cluster's now is
the newest node Lease renewal (`kube-node-lease`, which every kubelet renews every few seconds),
read at most once a second per context; an identity that may not read them, or a cluster with
none, falls back to this machine's clock. The agents read the same clock the same way
(`agents.cluster_operator.clock`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from core.connection import Api
from core.errors import ToolError

LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
REFRESH_S = 1.0  # real seconds a reading stands for
SAMPLE = 50  # leases read: any renewing node's is within its renew period of now


@dataclass
class ClusterClock:
    refresh: float = REFRESH_S
    _seen: dict[str, tuple[float, datetime]] = field(default_factory=dict)

    def now(self, api: Api) -> datetime:
        seen = self._seen.get(api.context)
        if seen is not None and time.monotonic() - seen[0] < self.refresh:
            return seen[1]
        now = self._read(api)
        self._seen[api.context] = (time.monotonic(), now)
        return now

    def _read(self, api: Api) -> datetime:
        try:
            leases = api.get(LEASES, what="the node leases (the cluster's clock)", limit=SAMPLE)
        except ToolError:
            return datetime.now(UTC)
        stamps = [
            datetime.fromisoformat(str(renewed).replace("Z", "+00:00"))
            for lease in leases.get("items") or []
            if (renewed := (lease.get("spec") or {}).get("renewTime"))
        ]
        return max(stamps) if stamps else datetime.now(UTC)
