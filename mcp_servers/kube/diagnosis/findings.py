"""What a diagnosis says: Findings with the Evidence that proves them, and the Fixes proposed.

A `Finding` names one problem of one object (the object a person would change: a Deployment
rather than each of its 300 crashing pods, whose names go in `related`), with a severity, a
summary a person can read, the evidence (events, conditions, log lines, metrics, spec fields) and
a confidence between 0 and 1. `details` carries the facts a playbook needs to build a Fix (the
failing image, the memory limit, the missing ConfigMap keys) so that `recommend.py` never
re-reads the cluster. A `Fix` is a precise change: a patch to a named object, a manifest, or
(patch_type "steps") an operation that is no patch, such as a rollback or a drain.

Every Fix carries `steps`: the calls of this server's write tools that apply it, with their
arguments exactly as the tools take them, so a client (an agent, a test, a person with the MCP
Inspector) applies a Fix by calling them in order and never translates a patch by hand. For a
patch or a manifest the steps are derived (`patch`, `apply`); other fixes name theirs.

These are plain frozen dataclasses: no client, no cluster, no MCP; `as_dict` makes them JSON.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["critical", "high", "medium", "low"]
EvidenceKind = Literal["event", "condition", "log", "metric", "spec", "status"]
# "steps": the change is the write-tool calls in `steps` (rollout undo, cordon and drain, taint
# removal); `patch` is then empty.
PatchType = Literal["merge", "strategic", "manifest", "steps"]
Risk = Literal["low", "medium", "high"]

SEVERITY_RANK: dict[str, int] = {"critical": 0, "high": 1, "medium": 2, "low": 3}


@dataclass(frozen=True)
class ObjectRef:
    kind: str
    name: str
    namespace: str = ""  # empty for cluster-scoped objects

    def __str__(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        return f"{self.kind} {self.name}{where}"


@dataclass(frozen=True)
class Evidence:
    kind: EvidenceKind
    source: str  # where it was seen: "event Failed on Pod web-1", "Node node-2 condition Ready"
    text: str


@dataclass(frozen=True)
class Finding:
    code: str  # stable identifier of the rule: "ImagePullBackOff", "ServiceSelectorNoMatch", ...
    ref: ObjectRef
    severity: Severity
    summary: str
    evidence: tuple[Evidence, ...] = ()
    confidence: float = 0.9
    related: tuple[ObjectRef, ...] = ()  # the pods, claims or nodes the problem shows on
    details: dict[str, Any] = field(default_factory=dict)  # facts the playbooks read

    def concerns(self, ref: ObjectRef) -> bool:
        return ref == self.ref or ref in self.related


@dataclass(frozen=True)
class Step:
    """One call of a write tool of this server: `tool` ("patch", "apply", "rollout_undo",
    "cordon", "drain", "taint", "delete") and its arguments."""

    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Fix:
    finding: str  # the Finding's code
    target: ObjectRef  # the object to change (or create, for a manifest)
    title: str
    patch_type: PatchType
    patch: dict[str, Any]  # the patch body, or the whole manifest for patch_type "manifest"
    expected_effect: str
    risk: Risk
    risk_note: str
    confidence: float
    evidence: tuple[str, ...] = ()  # why this value: "ReplicaSet web-7d9 ran nginx:1.27"
    steps: tuple[Step, ...] = ()  # the write-tool calls that apply it; derived for patches
    placeholders: bool = False  # values a person must fill in first: never applied unattended

    def __post_init__(self) -> None:
        if not self.steps and self.patch_type != "steps":  # a patch says how it is applied
            derived = (patch_step(self.target, self.patch_type, self.patch),)
            object.__setattr__(self, "steps", derived)  # frozen: set once, while being built


def patch_step(target: ObjectRef, patch_type: PatchType, patch: dict[str, Any]) -> Step:
    """The write-tool call that applies `patch` to `target`: `apply` for a manifest."""
    if patch_type == "manifest":
        return Step("apply", {"manifest": json.dumps(patch)})
    arguments = {"kind": target.kind, "name": target.name, "patch": patch, "patch_type": patch_type}
    return Step("patch", in_namespace(target.namespace, **arguments))


def in_namespace(namespace: str, **arguments: Any) -> dict[str, Any]:
    """Tool arguments with `namespace` added when there is one (cluster-scoped: none)."""
    return {**arguments, "namespace": namespace} if namespace else arguments


def as_dict(value: Finding | Fix) -> dict[str, Any]:
    """The JSON-able form of a Finding or Fix; `details` is dropped (it is for playbooks)."""
    data = dataclasses.asdict(value)
    data.pop("details", None)
    return data


def ranked(findings: list[Finding]) -> list[Finding]:
    """Highest severity first, then the surest, then by object for a stable order."""
    return sorted(
        findings,
        key=lambda f: (SEVERITY_RANK[f.severity], -f.confidence, str(f.ref), f.code),
    )
