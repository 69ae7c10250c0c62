"""The simulated world outside the API: what nodes, registries and applications really do.

The API holds what people asked for; the world holds what the sandbox pretends is physically
true: which images a registry has, how each application behaves (ports, paths, startup, CPU and
memory, logs, latency, errors), the health of each node's hardware and kubelet, the cloud
behind the Cluster API provider (`sandbox.clusterapi.infrastructure`), the control plane's
version (`sandbox.version`), and the API server's own misbehaviour when a reliability test asks
for it. Controllers and the kubelet read
it; faults and scenarios change it. Nothing here is visible to clients except through its
effects (status, events, logs, metrics), as in a real cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sandbox.clusterapi.infrastructure import Infrastructure
from sandbox.kubelet.images import ImageCatalog
from sandbox.kubelet.profiles import ProfileBook
from sandbox.version import DEFAULT as DEFAULT_VERSION


@dataclass
class Condition:
    """A node condition forced by a fault (status "True" for pressure means trouble)."""

    status: str
    reason: str
    message: str


@dataclass
class NodeHealth:
    """What is physically true of one node, beyond its API object."""

    heartbeat: bool = True  # False: the kubelet stops renewing its Lease and posting status
    conditions: dict[str, Condition] = field(default_factory=dict)  # type -> forced condition


@dataclass
class ApiFaults:
    """Fractions of API requests that misbehave (0.0 to 1.0), for reliability tests."""

    error_rate: float = 0.0  # 500 InternalError
    throttle_rate: float = 0.0  # 429 TooManyRequests with Retry-After
    timeout_rate: float = 0.0  # 504 after the request's deadline
    drop_watch_rate: float = 0.0  # watch streams cut short after their first event

    def any(self) -> bool:
        return any((self.error_rate, self.throttle_rate, self.timeout_rate, self.drop_watch_rate))


@dataclass
class World:
    seed: int = 0
    images: ImageCatalog = field(default_factory=ImageCatalog.default)
    profiles: ProfileBook = field(default_factory=ProfileBook)
    nodes: dict[str, NodeHealth] = field(default_factory=dict)
    api: ApiFaults = field(default_factory=ApiFaults)
    infrastructure: Infrastructure = field(default_factory=Infrastructure)
    control_plane_version: str = DEFAULT_VERSION  # what /version reports; an upgrade moves it

    def __post_init__(self) -> None:
        self.profiles.images = self.images  # an image's default profile comes from this catalog

    def node(self, name: str) -> NodeHealth:
        return self.nodes.setdefault(name, NodeHealth())
