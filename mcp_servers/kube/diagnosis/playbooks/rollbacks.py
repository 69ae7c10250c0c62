"""Rolling a Deployment back to the last revision that was good, when the evidence says the
trouble came with the current one (`history.rollback_target`).

`rollback` gives the fixes themselves, shared by every playbook that may end in a rollback (image
pull failures, OOM kills, crash loops, error logs); each passes how much its own evidence
supports it. Two fixes with one effect: `rollout_undo` to that revision, and the same containers
written back as a strategic patch of the Deployment (`restored_containers`). The undo is the
cluster's own rollback; the patch is what a Deployment kept in git needs, since an undo behind
git's back is reverted by the next sync, while the patch can be made to the manifest by pull
request. When only the image differs, the image playbook's own fix already is that patch.
The playbooks for a crash loop and for error logs after a rollout live here too: for them a
rollback is the only fix the cluster can vouch for (the cause is in the application).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from mcp_servers.kube.diagnosis import history
from mcp_servers.kube.diagnosis.findings import Finding, Fix, Step, in_namespace
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot

SERVING_BONUS = 0.1  # the target revision has ready pods now: it demonstrably works
RESTORE_PENALTY = 0.05  # the undo first, where it may be used: it is exactly the old template
# Container fields a restore writes back. Lists of named items other than env (ports, mounts)
# would merge by name in a manifest edit and could not drop an item: such a change is left to
# the undo.
RESTORED = ("image", "command", "args", "workingDir", "env", "envFrom", "resources",
            "livenessProbe", "readinessProbe", "startupProbe")  # fmt: skip


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
    confidence = round(min(confidence + (SERVING_BONUS if target.serving else 0.0), 0.95), 2)
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
        confidence,
        (*why, *target.evidence),
        (
            Step(
                "rollout_undo",
                in_namespace(ref.namespace, name=ref.name, to_revision=to),
            ),
        ),
    )
    deployment = snapshot.by_name("deployments", ref.namespace, ref.name) or {}
    restored = restored_containers(deployment, target.to, target.current)
    image_only = all(set(c) <= {"name", "image"} for items in restored.values() for c in items)
    if restored and not image_only:  # an image alone is the image playbook's own fix
        patch: dict[str, object] = {"spec": {"template": {"spec": restored}}}
        yield Fix(
            finding.code,
            ref,
            f"restore the containers of revision {to} in Deployment {ref.name}",
            "strategic",
            patch,
            f"the template's containers are revision {to}'s again, so its pods replace the "
            f"failing pods of revision {current}: {'; '.join(target.changes[:3])}",
            "low" if target.serving else "medium",
            f"puts back every container field revision {current} changed, not only the fault; "
            "made in git, it stays",
            round(confidence - RESTORE_PENALTY, 2),
            (*why, *target.evidence),
        )


def restored_containers(
    deployment: Json, older: history.Revision, current: history.Revision
) -> dict[str, list[dict[str, object]]]:
    """`older`'s container fields that differ from `current`'s, by pod template list
    (`containers`, `initContainers`) as a strategic patch names them; {} when the change is more
    than fields a patch can restore (a container added or removed, an env variable added or
    dropped, a field outside RESTORED)."""
    spec = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
    init = {str(c.get("name")) for c in spec.get("initContainers") or []}
    was = {str(c.get("name")): c for c in older.containers}
    now = {str(c.get("name")): c for c in current.containers}
    if set(was) != set(now):
        return {}
    lists: dict[str, list[dict[str, object]]] = {}
    for name in sorted(now):
        changed = {
            k for k in set(was[name]) | set(now[name]) if was[name].get(k) != now[name].get(k)
        }
        if not changed:
            continue
        if changed - set(RESTORED) or not _same_env_names(was[name], now[name]):
            return {}
        item: dict[str, object] = {"name": name}
        item.update({k: was[name].get(k) for k in sorted(changed)})  # None: drop the field
        lists.setdefault("initContainers" if name in init else "containers", []).append(item)
    return lists


def _same_env_names(a: Json, b: Json) -> bool:
    return {e.get("name") for e in a.get("env") or []} == {
        e.get("name") for e in b.get("env") or []
    }


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
