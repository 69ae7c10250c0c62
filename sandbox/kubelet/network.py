"""Pod IPs: each node owns a /24 of the pod network, 10.244.<node index>.0/24, as with flannel.

An address is picked from a hash of the pod's uid, then the next free one, so a run with the
same seed hands out the same addresses. Addresses go back to the pool when a pod's sandbox is
torn down. This module knows node names and nothing else.
"""

from __future__ import annotations

import hashlib

FIRST, LAST = 2, 254


def node_index(node: str) -> int:
    digits = "".join(ch for ch in node if ch.isdigit())
    if digits:
        return int(digits) % 250
    return int(hashlib.sha256(node.encode()).hexdigest(), 16) % 250


class PodNetwork:
    def __init__(self) -> None:
        self._used: dict[str, set[int]] = {}

    def allocate(self, node: str, uid: str) -> str:
        used = self._used.setdefault(node, set())
        span = LAST - FIRST + 1
        preferred = int(hashlib.sha256(uid.encode()).hexdigest(), 16) % span
        for step in range(span):
            host = FIRST + (preferred + step) % span
            if host not in used:
                used.add(host)
                return f"10.244.{node_index(node)}.{host}"
        return (
            f"10.244.{node_index(node)}.{FIRST + preferred}"  # a full /24: share, as a leak would
        )

    def reserve(self, node: str, address: str) -> None:
        host = _host(address)
        if host is not None:
            self._used.setdefault(node, set()).add(host)

    def release(self, node: str, address: str) -> None:
        host = _host(address)
        if host is not None:
            self._used.get(node, set()).discard(host)


def _host(address: str) -> int | None:
    try:
        return int(address.rsplit(".", 1)[1])
    except (IndexError, ValueError):
        return None
