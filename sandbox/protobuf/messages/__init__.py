"""The layout tables of every message the decoder knows, one module per family of API groups.

`catalog()` links them once into a `Catalog`. To support a new kind, add its messages to the
module of its group (or a new module listed here) and name it in its package's `kinds`.
"""

from __future__ import annotations

import functools

from sandbox.protobuf.layout import Catalog, build_catalog
from sandbox.protobuf.messages.access import AUTHENTICATION, AUTHORIZATION, RBAC
from sandbox.protobuf.messages.core import CORE
from sandbox.protobuf.messages.meta import META
from sandbox.protobuf.messages.networking import NETWORKING
from sandbox.protobuf.messages.workloads import APPS, AUTOSCALING, BATCH, POLICY, SCHEDULING

PACKAGES = (
    META,
    CORE,
    APPS,
    BATCH,
    POLICY,
    AUTOSCALING,
    SCHEDULING,
    RBAC,
    AUTHENTICATION,
    AUTHORIZATION,
    NETWORKING,
)


@functools.cache
def catalog() -> Catalog:
    return build_catalog(PACKAGES)
