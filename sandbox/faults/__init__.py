"""Faults: deliberate trouble injected into the simulated world, and taken away again.

A fault is a typed, frozen spec validated from a plain dict (`{"kind": "node-heartbeat", "node":
"node-2"}`, from the admin endpoint, a scenario file or the CLI) plus what `Faults` records about
it: an id (`f-3`), when it took effect, and an optional `at` for faults a scenario schedules.
Faults change only `cluster.world` (node health, the image catalog, application profiles, API
misbehaviour, the cloud behind the Cluster API provider), never stored objects: the controllers
and the kubelet turn that into status, events, logs and metrics, as a real cluster would.

    specs.py   the kinds, parsed and validated from dicts (`parse_spec`)
    book.py    `Faults`: add, clear, clear_all, list; scheduling; keeping the world in step

Errors (both are the caller's mistake, never worth a retry):

    FaultError              base
     +-- FaultSpecError     a spec is malformed; `.field` names the bad field
     +-- UnknownFault       no fault has that id

This package knows no HTTP and no file formats; `sandbox.admin` and `sandbox.scenario` use it.
"""

from __future__ import annotations

from sandbox.faults.book import Fault, Faults, FaultTimer
from sandbox.faults.specs import (
    KINDS,
    FaultError,
    FaultSpec,
    FaultSpecError,
    UnknownFault,
    parse_spec,
)

__all__ = [
    "KINDS",
    "Fault",
    "FaultError",
    "FaultSpec",
    "FaultSpecError",
    "FaultTimer",
    "Faults",
    "UnknownFault",
    "parse_spec",
]
