"""Proving a fix held: the rollout completed, every pod is Ready and stayed so (no restart)
for a soak period, the finding is gone from `diagnose`, and the golden signals are within
bounds when a metrics server is configured. A Service holds when its Endpoints have a ready
address (its pods serve) and the finding is gone; a PersistentVolumeClaim when it is Bound and
every pod using it Running (a claim no pod uses yet binds when one does: its class waits for
the first consumer), and the finding is gone.

Time is the cluster's own: "now" is the newest node Lease renewal (kubelets renew every 10 s
of their clock), and a pod has soaked when its Ready condition last changed at least
`soak_seconds` before that. So a sandbox running ten times faster than life soaks ten times
faster, and a real cluster soaks in real time, by one code path. A restart, or a rollout past
its progress deadline, fails at once: waiting out the deadline only delays the rollback.
Waiting polls the tools (`poll_seconds` of wall time apart) until the cluster clock passes the
deadline. While it waits it reports what it last observed (`agents.runtime.progress`): how many
of the wanted pods are Ready (of the fix's revision), then how long they have soaked of the soak
("validating: 2/2 pods ready, soak 12 s of 30 s"), or else its latest evidence; a count that only
moves is reported every `report_seconds` at most.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import anyio

from agents.runtime.errors import ToolFailed
from agents.runtime.loop.state import Target
from agents.runtime.progress import Pace, Progress
from agents.runtime.toolbox import Toolbox

FATAL = "failed:"  # evidence that no amount of waiting cures: stop validating at once
ROLLED_OUT = ("Deployment", "StatefulSet", "DaemonSet")  # kinds `rollout_status` follows
VALIDATING = "validating"


@dataclass(frozen=True)
class LoopSettings:
    soak_seconds: float = 30.0  # cluster seconds every pod stays Ready, unrestarted
    deadline_seconds: float = 180.0  # cluster seconds a fix gets to roll out and soak
    poll_seconds: float = 0.5  # wall seconds between looks
    max_error_ratio: float = 0.05  # golden signals bound, when metrics are configured
    report_seconds: float = 5.0  # wall seconds between reports of a wait whose count only moves


@dataclass
class Verdict:
    held: bool
    evidence: list[str] = field(default_factory=list)
    # What a look that did not hold waits for, when it can say it better than its last evidence
    progress: Progress | None = None


@dataclass(frozen=True)
class Pods:
    """What the live pods of a workload (of its latest revision) show."""

    live: int
    ready: int
    soaked: float  # cluster seconds the most recently Ready of them has been Ready
    wrong: str  # empty when every pod has soaked; else what is not there yet (`FATAL`: never)


async def cluster_now(toolbox: Toolbox) -> datetime | None:
    leases = await toolbox.call(
        "list_resources",
        kind="leases",
        namespace="kube-node-lease",
        output="fields",
        fields=["spec.renewTime"],
        limit=500,
    )
    times = [_time(i.get("spec.renewTime")) for i in leases.get("items", [])]
    known = [t for t in times if t is not None]
    return max(known) if known else None


async def validate(toolbox: Toolbox, target: Target, code: str, settings: LoopSettings) -> Verdict:
    return await until(
        toolbox, lambda: _look(toolbox, target, code, settings), settings, late="not healthy"
    )


async def until(
    toolbox: Toolbox,
    look: Callable[[], Awaitable[Verdict]],
    settings: LoopSettings,
    *,
    late: str,
    step: str = VALIDATING,
) -> Verdict:
    """`look` again every poll until it holds, says it never will (`FATAL`), or the deadline
    passes in cluster time (then `late` says what was not reached, and after how long). The
    polls space out (x1.5 each, up to four times the first): most changes hold in the first
    seconds, and one that waits out its deadline should not cost a hundred reads. Each wait is
    reported as `step` and what the look saw."""
    start = await cluster_now(toolbox)
    verdict = Verdict(False)
    pause = settings.poll_seconds
    pace = Pace(settings.report_seconds)
    while True:
        verdict = await look()
        now = await cluster_now(toolbox)
        if verdict.held:
            return verdict
        if verdict.evidence and verdict.evidence[-1].startswith(FATAL):
            return verdict
        if (
            start is None
            or now is None
            or (now - start).total_seconds() > settings.deadline_seconds
        ):
            waited = f"{(now - start).total_seconds():.0f}" if start and now else "?"
            verdict.evidence.append(f"{late} after {waited} s of cluster time")
            return verdict
        if verdict.progress is not None:
            pace(verdict.progress)
        elif verdict.evidence:
            pace(Progress(step, verdict.evidence[-1]))
        await anyio.sleep(pause)
        pause = min(pause * 1.5, settings.poll_seconds * 4)


async def _look(toolbox: Toolbox, target: Target, code: str, settings: LoopSettings) -> Verdict:
    if target["kind"] == "Service":
        return await _service(toolbox, target, code)
    if target["kind"] == "PersistentVolumeClaim":
        return await _claim(toolbox, target, code)
    name, namespace = target["name"], target["namespace"]
    selector, observed = await _workload(toolbox, target)
    evidence, wanted = [], 0
    if target["kind"] in ROLLED_OUT:
        status = await toolbox.call(
            "rollout_status", name=name, namespace=namespace, kind=target["kind"].lower()
        )
        revision = str(status.get("revision") or "")
        if target["kind"] == "Deployment":
            selector = await _newest(toolbox, target, selector, revision)
        elif revision:  # a StatefulSet's pods carry their revision as a label
            selector = ",".join(filter(None, (selector, f"controller-revision-hash={revision}")))
        wanted = int(status.get("replicas") or 0)
        if status.get("failed"):
            return Verdict(False, [f"{FATAL} the rollout: {status['message']}"])
        if not status.get("done"):
            waiting = f"rollout not complete: {status['message']}"
            if not observed:  # the revision is the previous spec's: its pods say nothing of the fix
                taking = f"waiting for the {target['kind']} controller to take up the change"
                return Verdict(False, [waiting], Progress(VALIDATING, taking))
            pods = await _soaked(toolbox, target, selector, settings)
            if pods.wrong.startswith(FATAL):
                return Verdict(False, [waiting, pods.wrong])
            return Verdict(False, [waiting], _waiting(pods, wanted, settings, "rolling out, "))
        evidence = [f"rollout complete: {status['message']} (revision {status.get('revision')})"]
    pods = await _soaked(toolbox, target, selector, settings)
    if pods.wrong:
        return Verdict(False, [*evidence, pods.wrong], _waiting(pods, wanted, settings))
    evidence.append(
        f"every pod Ready and unrestarted for {settings.soak_seconds:.0f} s of cluster time"
    )
    return await _settled(toolbox, target, code, evidence, settings)


async def _settled(
    toolbox: Toolbox, target: Target, code: str, evidence: list[str], settings: LoopSettings
) -> Verdict:
    """After the soak: the finding gone, and the golden signals within bounds when known."""
    verdict = await _diagnosed(toolbox, target, code, evidence)
    if verdict.held and toolbox.has("golden_signals"):
        signals = await _signals(toolbox, target, settings)
        if signals.startswith("out of bounds"):
            return Verdict(False, [*evidence, signals])
        evidence.append(signals)
    return verdict


async def _diagnosed(toolbox: Toolbox, target: Target, code: str, evidence: list[str]) -> Verdict:
    """Held when diagnose no longer finds `code` on the target (a new rollout, code "": nothing
    serious); `evidence` so far is kept, and extended."""
    diagnosis = await toolbox.call(
        "diagnose", namespace=target["namespace"], kind=target["kind"].lower(), name=target["name"]
    )
    findings = diagnosis.get("findings", [])
    # A fix must make its finding go; a new rollout (code "") must leave nothing serious.
    still = [f for f in findings if f.get("code") == code or (not code and _critical(f))]
    if still:
        named = code or str(still[0].get("code"))
        return Verdict(
            False, [*evidence, f"diagnose still finds {named}: {still[0].get('summary')}"]
        )
    evidence.append(
        f"diagnose no longer finds {code}" if code else "diagnose finds nothing serious"
    )
    return Verdict(True, evidence)


async def _service(toolbox: Toolbox, target: Target, code: str) -> Verdict:
    """A Service serves when its Endpoints list a ready address."""
    try:
        got = await toolbox.call(
            "get_resource", kind="endpoints", name=target["name"],
            namespace=target["namespace"], output="fields", fields=["subsets"],
        )  # fmt: skip
    except ToolFailed as exc:
        if exc.unreachable:
            raise
        return Verdict(False, [f"no Endpoints for Service {target['name']} yet"])
    subsets = got.get("subsets") or []
    ready = sum(len(s.get("addresses") or []) for s in subsets if isinstance(s, dict))
    if not ready:
        return Verdict(False, [f"Service {target['name']} has no ready endpoint yet"])
    return await _diagnosed(
        toolbox, target, code, [f"Service {target['name']} has {ready} ready endpoint(s)"]
    )


async def _claim(toolbox: Toolbox, target: Target, code: str) -> Verdict:
    """A claim holds when it is Bound and every pod using it runs."""
    name = target["name"]
    got = await toolbox.call(
        "get_resource", kind="persistentvolumeclaim", name=name, namespace=target["namespace"],
        output="fields", fields=["status.phase", "spec.storageClassName"],
    )  # fmt: skip
    pods = await toolbox.call(
        "list_resources", kind="pods", namespace=target["namespace"], output="fields",
        fields=["spec.volumes", "status.phase", "metadata.deletionTimestamp"], limit=500,
    )  # fmt: skip
    users = [
        p for p in pods.get("items", [])
        if not p.get("metadata.deletionTimestamp")
        and any((v.get("persistentVolumeClaim") or {}).get("claimName") == name
                for v in p.get("spec.volumes") or [])
    ]  # fmt: skip
    phase, kind = got.get("status.phase"), got.get("spec.storageClassName")
    if phase != "Bound" and users:
        return Verdict(False, [f"claim {name} is {phase} (class {kind})"])
    waiting = [str(p["name"]) for p in users if p.get("status.phase") != "Running"]
    if waiting:
        return Verdict(False, [f"claim {name} is Bound; pod {waiting[0]} is not Running yet"])
    evidence = (
        [f"claim {name} is Bound (class {kind})", f"pods using it Running: "
         f"{', '.join(str(p['name']) for p in users)}"]
        if users
        else [f"claim {name} is {phase} (class {kind}); no pod uses it yet: it binds when one "
              "does"]
    )  # fmt: skip
    return await _diagnosed(toolbox, target, code, evidence)


def _waiting(pods: Pods, wanted: int, settings: LoopSettings, prefix: str = "") -> Progress:
    """How many of the wanted pods are Ready and, once all are, how long they have soaked."""
    if not pods.live:
        return Progress(VALIDATING, f"{prefix}no pods of the workload running yet")
    wanted = max(wanted, pods.live)
    ready = f"{prefix}{pods.ready}/{wanted} pods ready"
    if pods.ready < wanted:
        return Progress(VALIDATING, ready)
    soaked = max(pods.soaked, 0.0)
    return Progress(VALIDATING, f"{ready}, soak", soaked, settings.soak_seconds, "s")


async def _soaked(toolbox: Toolbox, target: Target, selector: str, settings: LoopSettings) -> Pods:
    """The workload's live pods: how many are Ready, for how long, and what is not there yet
    (nothing when every one has soaked; a restart anywhere is `FATAL`)."""
    pods = await toolbox.call(
        "list_resources",
        kind="pods",
        namespace=target["namespace"],
        label_selector=selector,
        output="fields",
        fields=[
            "metadata.deletionTimestamp",
            "status.conditions",
            "status.containerStatuses[*].restartCount",
        ],
        limit=500,
    )
    now = await cluster_now(toolbox)
    live = [p for p in pods.get("items", []) if not p.get("metadata.deletionTimestamp")]
    if not live or now is None:
        return Pods(0, 0, 0.0, "no pods of the workload are running yet")
    wrong = ""
    ages: list[float] = []  # how long each Ready one has been Ready
    for pod in live:
        restarts = sum(pod.get("status.containerStatuses[*].restartCount") or [0])
        if restarts:
            fatal = f"{FATAL} pod {pod['name']} restarted {restarts} time(s): not stable"
            return Pods(len(live), len(ages), 0.0, fatal)
        ready: dict[str, Any] = next(
            (c for c in pod.get("status.conditions") or [] if c.get("type") == "Ready"), {}
        )
        since = _time(ready.get("lastTransitionTime"))
        if ready.get("status") != "True" or since is None:
            wrong = wrong or f"pod {pod['name']} is not Ready"
            continue
        age = (now - since).total_seconds()
        ages.append(age)
        if age < settings.soak_seconds:
            soak = settings.soak_seconds
            wrong = wrong or f"pod {pod['name']} Ready for {max(age, 0):.0f} s of {soak:.0f} s"
    return Pods(len(live), len(ages), min(ages, default=0.0), wrong)


async def _workload(toolbox: Toolbox, target: Target) -> tuple[str, bool]:
    """The workload's pod selector, and whether its controller has observed its latest spec:
    until it has, its status and revision are the previous spec's, so the pods they point at
    (a crash-looping old revision, just after the fix was synced) are not the fix's."""
    if target["kind"] == "Pod":
        return "", True
    got = await toolbox.call(
        "get_resource",
        kind=target["kind"].lower(),
        name=target["name"],
        namespace=target["namespace"],
        output="fields",
        fields=["spec.selector.matchLabels", "metadata.generation", "status.observedGeneration"],
    )
    labels: dict[str, Any] = got.get("spec.selector.matchLabels") or {}
    generation, observed = got.get("metadata.generation"), got.get("status.observedGeneration")
    seen = generation is None or (observed is not None and observed >= generation)
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())), seen


async def _signals(toolbox: Toolbox, target: Target, settings: LoopSettings) -> str:
    try:
        got = await toolbox.call(
            "golden_signals", service=target["name"], namespace=target["namespace"]
        )
    except ToolFailed as exc:
        return f"golden signals unavailable ({exc.reason}); judged by the cluster alone"
    ratio = got.get("error_ratio")
    if isinstance(ratio, int | float) and ratio > settings.max_error_ratio:
        return f"out of bounds: error ratio {ratio:.3f} > {settings.max_error_ratio}"
    return f"golden signals within bounds (error ratio {ratio})"


async def _newest(toolbox: Toolbox, target: Target, selector: str, revision: str) -> str:
    """The selector narrowed to the pods of the Deployment's current revision (its ReplicaSet's
    pod-template-hash), so the old revision's crashing pods do not count against the fix."""
    sets = await toolbox.call(
        "list_resources",
        kind="replicasets",
        namespace=target["namespace"],
        label_selector=selector,
        output="fields",
        fields=["metadata.annotations", "metadata.labels"],
        limit=500,
    )
    for rs in sets.get("items", []):
        annotations = rs.get("metadata.annotations") or {}
        if annotations.get("deployment.kubernetes.io/revision") == revision:
            hashed = (rs.get("metadata.labels") or {}).get("pod-template-hash")
            if hashed:
                return (
                    f"{selector},pod-template-hash={hashed}"
                    if selector
                    else f"pod-template-hash={hashed}"
                )
    return selector


def _critical(finding: dict[str, Any]) -> bool:
    return finding.get("severity") in ("critical", "high")


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
