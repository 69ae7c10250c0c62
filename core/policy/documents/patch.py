"""PatchPolicy: the kernel and OS image every node of a pool must run, and how soon.

    spec:
      pools: [workers, gpu]             # MachineDeployment names; empty: every pool
      minimumKernel: "6.8.0-49"         # status.nodeInfo.kernelVersion at or above this
      minimumOSImage: "Ubuntu 24.04.2"  # status.nodeInfo.osImage at or above this (optional)
      template: patched-2026-12         # the machine template whose image carries the patch
      within: 72h                       # a node found below is rolled within this long

A node below the minimum is out of policy; the Cluster Operator rolls its pool onto `template`
(the MachineDeployment's infrastructureRef set to it, every machine replaced as in an upgrade:
maintenance windows, PDB-respecting drains, training Jobs kept until they checkpoint) and says
when the `within` deadline falls. Versions compare by their numbers in order ("6.8.0-49-generic"
is 6, 8, 0, 49; "Ubuntu 24.04.2 LTS" is 24, 4, 2), so a name or suffix never decides.

The document is data the agent reads back (`get_policy`); the policy store's evaluation does not
judge actions with it: it says what nodes must run, not whether a change may happen.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import model_validator

from core.policy.documents.common import API_VERSION, Duration, Metadata, Name, Strict

_NUMBERS = re.compile(r"\d+")


def release_numbers(text: str) -> tuple[int, ...]:
    """The numbers of a kernel or OS release, in order: "6.8.0-49-generic" -> (6, 8, 0, 49)."""
    return tuple(int(n) for n in _NUMBERS.findall(text))


def at_least(found: str, minimum: str) -> bool:
    """Whether release `found` is `minimum` or later (an empty minimum: always)."""
    return not minimum or release_numbers(found) >= release_numbers(minimum)


class PatchSpec(Strict):
    pools: list[Name] = []
    minimumKernel: str = ""
    minimumOSImage: str = ""
    template: Name
    within: Duration

    @model_validator(mode="after")
    def _something_required(self) -> PatchSpec:
        for field in ("minimumKernel", "minimumOSImage"):
            value = getattr(self, field)
            if value and not release_numbers(value):
                raise ValueError(f"{field} {value!r} has no version number to compare with")
        if not self.minimumKernel and not self.minimumOSImage:
            raise ValueError("say what nodes must run: minimumKernel, minimumOSImage or both")
        return self

    def below(self, kernel: str, os_image: str) -> list[str]:
        """What a node running `kernel` on `os_image` lacks ([]: it is within the policy)."""
        lacks = []
        if not at_least(kernel, self.minimumKernel):
            lacks.append(f"kernel {kernel or '?'} < {self.minimumKernel}")
        if not at_least(os_image, self.minimumOSImage):
            lacks.append(f"OS image {os_image or '?'} < {self.minimumOSImage}")
        return lacks

    def covers(self, pool: str) -> bool:
        return not self.pools or pool in self.pools


class PatchPolicy(Strict):
    apiVersion: Literal["kubecrew.io/v1alpha1"] = API_VERSION
    kind: Literal["PatchPolicy"] = "PatchPolicy"
    metadata: Metadata
    spec: PatchSpec
