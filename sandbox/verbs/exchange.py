"""One resource request in flight: what it addresses, who sent it, and how to answer it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sandbox.auth import UserInfo
from sandbox.cluster import Cluster
from sandbox.http import Receive, Request, Send, decode_object
from sandbox.registry import ResourceType
from sandbox.routing import Route
from sandbox.watch import Streams


@dataclass(frozen=True)
class Exchange:
    cluster: Cluster
    target: Route
    request: Request
    user: UserInfo
    receive: Receive
    send: Send
    streams: Streams

    @property
    def rt(self) -> ResourceType:
        assert self.target.rt is not None, "an Exchange is made for resource routes only"
        return self.target.rt

    @property
    def namespace(self) -> str:
        """The request's namespace; '' for cluster-scoped types and for all-namespace lists."""
        return self.target.namespace if self.rt.namespaced else ""

    def body(self, decoders: dict[str, Callable[[bytes], Any]]) -> Any:
        return decode_object(self.request, decoders)
