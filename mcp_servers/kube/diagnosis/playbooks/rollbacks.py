"""Rolling a Deployment back to the last revision that was good, when the evidence says the
trouble came with the current one (`history.rollback_target`).

`rollback` is the Fix itself, shared by every playbook that may end in a rollback (image pull
failures, OOM kills, crash loops, error logs); each passes how much its own evidence supports it.
The playbooks for a crash loop and for error logs after a rollout live here too: for them a
rollback is the only fix the cluster can vouch for (the cause is in the application).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from mcp_servers.kube.diagnosis import history
from mcp_servers.kube.diagnosis.findings import Finding, Fix, Step, in_namespace
from mcp_servers.kube.diagnosis.snapshot import Snapshot

SERVING_BONUS = 0.1  # the target revision has ready pods now: it demonstrably works


def rollback(
    finding: Finding,
    snapshot: Snapshot,
    *,
    confidence: float,
    why: Iterable[str],
    bad_images: Iterable[str] = (),
) -> Iterator[Fix]:
    """A `rollout_undo` to the revision before the trouble, if the history shows one."""
    target = history.rollback_target(
        snapshot, finding.ref, failing=finding.related, bad_images=bad_images
    )
    if target is None:
        return
    ref, to, current = finding.ref, target.to.number, target.current.number
    yield Fix(
        finding.code,
        ref,
        f"roll Deployment {ref.name} back to revision {to}",
        "steps",
        {},
        f"pods of revision {to}'s template replace the failing pods of revision {current} "
        f"and become Ready: {'; '.join(target.changes[:3])}",
        "low" if target.serving else "medium",
        f"undoes everything revision {current} changed, not only the fault; a later deploy "
        "from git or CI rolls it forward again, so fix the source too",
        round(min(confidence + (SERVING_BONUS if target.serving else 0.0), 0.95), 2),
        (*why, *target.evidence),
        (
            Step(
                "rollout_undo",
                in_namespace(ref.namespace, name=ref.name, to_revision=to),
            ),
        ),
    )


def crash_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    """A crash loop that came with a rollout: back to the revision that ran."""
    logs = [str(line) for line in finding.details.get("last_logs") or []]
    why = [f"the container exits with code {finding.details.get('exit_code')}"]
    why.extend(f"its last words: {line}" for line in logs[-3:])
    yield from rollback(finding, snapshot, confidence=0.75, why=why)


def log_errors_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    """A Ready workload logging errors since its latest rollout: back to the one before."""
    why = [
        f"{finding.details.get('errors')} of the last {finding.details.get('lines')} log lines "
        f"of container {finding.details.get('container')} are errors",
        *(e.text for e in finding.evidence[-2:]),
    ]
    yield from rollback(finding, snapshot, confidence=0.6, why=why)


def slow_probe_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    """Probes that time out since the latest rollout: the app got slower, back to the one before."""
    if not finding.details.get("timed_out"):
        return
    why = [
        f"the {finding.details.get('probe')} of container {finding.details.get('container')} "
        "times out: the app answers slower than the probe allows",
        *(e.text for e in finding.evidence[-2:]),
    ]
    yield from rollback(finding, snapshot, confidence=0.6, why=why)
