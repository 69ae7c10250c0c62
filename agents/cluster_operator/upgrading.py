"""A Kubernetes minor upgrade carried out: the control plane first, then each node pool in turn,
with no workload losing what its PodDisruptionBudget promises.

`plan` reads what the upgrade needs (`upgrades.readiness`) and refuses before anything starts
when the skew policy forbids the target, something blocks it, the control plane cannot be moved
through the API (no Cluster API KubeadmControlPlane and the API server not yet at the target),
or a pool can neither surge nor lose a machine. Otherwise it is a `Record` in the agent's store,
one per cluster, and `advance` takes it as far as it may go now, every pass starting from what
the cluster says (so a crash resumes at the wave it was in and repeats no write):

1. the control plane: the KubeadmControlPlane's `spec.version` set under a proposal the owners'
   policies judge, then waited for until `/version` reports the target;
2. the pools, one wave each, the canary first (a MachineDeployment labelled
   `kubecrew.io/canary=true`, else the smallest), then the others, smallest first. A wave starts
   only inside the maintenance window (ChangePolicy, judged at the cluster's time) and once its
   surge (`maxSurge` more machines) passes the cost and capacity policies; its own proposal
   names the teams on the pool; every old Machine gets the crew's pre-drain hook
   (`pools.HOOK`), and the MachineDeployment's version is set. Cluster API then adds new
   machines and deletes old ones (a Machine held at a hook no longer counts as the pool's, so
   new ones may all come before the first old node is drained); each old Machine waits at the
   hook until the crew has moved its node off, one at a time, as any other
   (`migration.move_off`: cordon, the eviction intent the owners' policies answer, training
   Jobs kept until they checkpoint, PDB-respecting evictions within the hourly blast radius,
   validation), and only then is the hook lifted;
3. after each wave, validation: every node of the pool Ready at the target kubelet, the
   MachineDeployment fully available, and no Deployment or PodDisruptionBudget left below what
   it wants. A wave whose new machine fails to provision, or whose new node is not Ready
   `JOIN_GRACE` cluster seconds after it joined, is rolled back (its version set back under a
   rollback proposal; Cluster API replaces the new machines with old ones) and the upgrade stops
   there, the pools after it untouched. The control plane is not rolled back (Kubernetes does
   not downgrade it): kubelets one minor behind it are within the skew policy.

A security patch roll (`patching`, key PATCH) is the same record with waves that change the
pools' machine template instead of their version, and no control-plane step.

`drive` repeats `advance` while the cluster is doing the work, saying each step as it happens,
and returns when the upgrade is over or waits for something outside it (a window, a person's
decision, a training checkpoint, a budget); the patrol carries a waiting upgrade on.
After a wave settles it is validated against the cluster as the upgrade found it
(`pools.baseline`, kept in the record): nodes Ready at the target, workloads available, budgets
kept, and each Service's error ratio (the golden signals, where Prometheus answers) not risen
past the bound; what stays wrong `VALIDATE_GRACE` cluster seconds after it settled rolls the wave
back as a failed join does. Left out: several pools rolled at once, and control planes managed
by a cloud provider (they are upgraded there, then the pools here).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, NotRequired, TypedDict

import anyio
from langgraph.store.base import BaseStore

from agents.cluster_operator import pools, proposals
from agents.cluster_operator.clock import cluster_now
from agents.cluster_operator.maintenance import window
from agents.cluster_operator.migration import move_off
from agents.cluster_operator.upgrades import Minor, Readiness, blockers, readiness
from agents.runtime.progress import Pace, Progress
from agents.runtime.toolbox import Toolbox
from core.policy.documents.patch import PatchSpec

SPACE, KEY = ("cluster_operator", "upgrades"), "cluster"  # a patch roll: key PATCH
PATCH = "patch"
HOOK_OWNER = "kubecrew-cluster-operator"
JOIN_GRACE = 180.0  # cluster seconds a new node may stay not Ready before its wave rolls back
VALIDATE_GRACE = 120.0  # cluster seconds a settled wave has to validate before it rolls back
PAUSE = 1.0  # wall seconds between passes while the cluster works
Save = Callable[[], Awaitable[None]]  # keeps the record in the store as it stands

State = Literal["control-plane", "pools", "done", "rolled-back"]
WaveState = Literal["pending", "rolling", "rolling-back", "done", "rolled-back"]
Field = Literal["version", "template"]  # what a wave changes: the machines' version or template
FIELDS: dict[Field, str] = {"version": "version", "template": "machine template"}


class Wave(TypedDict):
    pool: str  # namespace/name of the MachineDeployment
    field: Field
    before: str  # the pool's version (template) before the wave, what a rollback returns to
    after: str  # what it rolls to
    state: WaveState
    proposal: str  # the roll's proposal
    rollback: str  # the rollback's proposal ("" unless it is rolled back)
    why: str  # why it was rolled back ("" otherwise)
    unhealthy_since: NotRequired[float]  # cluster time its validation first failed


class Record(TypedDict):
    purpose: Literal["upgrade", "patch"]  # a Kubernetes upgrade, or a security patch roll
    floor: dict[str, str]  # a patch roll: the PatchPolicy's minimums ("kernel", "os_image")
    target: str  # the release every part ends at ("v1.38.0"); the PatchPolicy's name
    from_version: str  # the control plane's version when it began
    control_plane: str  # namespace/name of the KubeadmControlPlane ("" when already there)
    state: State
    proposal: str  # the control plane's proposal
    waves: list[Wave]
    baseline: NotRequired[pools.Baseline]  # the cluster as the first pass found it
    waiting: NotRequired[str]  # what the last pass waited for, told when asked how it goes


class Pass(TypedDict):
    record: Record | None
    steps: list[str]  # what this pass did and saw
    waiting: str  # what it waits for, "" when it is over or the cluster is working
    working: bool  # the cluster is rolling something: look again soon


def told(record: Record | None) -> Pass:
    """Where an upgrade stands, for a person who asks: no step taken, what it last waited for."""
    waiting = record.get("waiting", "") if record is not None else ""
    return Pass(record=record, steps=[], waiting=waiting, working=False)


async def current(store: BaseStore, key: str = KEY) -> Record | None:
    kept = await store.aget(SPACE, key)
    return Record(**kept.value) if kept is not None else None  # type: ignore[typeddict-item]


async def plan(toolbox: Toolbox, release: str) -> tuple[Readiness, Record | None, list[str]]:
    """The readiness report, the upgrade to `release` ("v1.38.0") as a record to start, and why
    it cannot start (the record is None then)."""
    goal = Minor.parse(release)
    found = await readiness(toolbox, target=goal)
    refusals = [found["refused"]] if found["refused"] else []
    refusals += [f"{f['what']}: {f['why']}" for f in blockers(found)]
    if not found["current"] or goal is None:
        refusals.append("the API server's version could not be read")
    if refusals:
        return found, None, refusals
    control_plane = ""
    if Minor.parse(found["current"]) != goal:
        planes = await pools.control_planes(toolbox)
        if not planes:
            refusals.append(
                f"the control plane runs {found['current']} and no KubeadmControlPlane manages "
                f"it here: upgrade it to {release} with its provider first, then ask again "
                "for the node pools"
            )
        control_plane = planes[0] if planes else ""
    waves = []
    for pool in await pools.in_order(toolbox):
        if Minor.parse(pool["version"]) == goal:
            continue
        refusals += await pools.cannot_roll(toolbox, pool)
        waves.append(Wave(pool=pool["pool"], field="version", before=pool["version"],
                          after=release, state="pending", proposal="", rollback="",
                          why=""))  # fmt: skip
    if refusals:
        return found, None, refusals
    record = Record(purpose="upgrade", floor={}, target=release, from_version=found["current"],
                    control_plane=control_plane, state="control-plane", proposal="",
                    waves=waves)  # fmt: skip
    return found, record, []


def waits_for_yes(pending: dict[str, Any] | None) -> bool:
    """Whether the conversation's waiting change is an upgrade asked back."""
    return bool(pending and pending.get("upgrade"))


async def served(toolbox: Toolbox) -> str:
    """The API server's version ("v1.37.0"; "" when it gives none)."""
    return str((await toolbox.call("overview")).get("server_version") or "")


async def start(store: BaseStore, record: Record) -> None:
    await store.aput(SPACE, _key(record), dict(record))


def _key(record: Record) -> str:
    return PATCH if record["purpose"] == "patch" else KEY


async def drive(toolbox: Toolbox, store: BaseStore, *, key: str = KEY, passes: int = 900) -> Pass:
    """`advance` again and again while the cluster works (at most `passes` passes, a second
    apart), each step said as it happens; the last pass, with every step taken."""
    pace, steps = Pace(5.0), []
    for _ in range(passes):
        done = await advance(toolbox, store, key=key)
        steps += done["steps"]
        record = done["record"]
        if record is not None:
            pace(Progress("upgrading", where(record, done)))
        if not done["working"]:
            return {**done, "steps": steps}
        await anyio.sleep(PAUSE)
    return {**done, "steps": steps, "waiting": "the cluster is still rolling; ask again later"}


async def advance(toolbox: Toolbox, store: BaseStore, *, key: str = KEY) -> Pass:
    """One pass: the upgrade (or patch roll, `key` PATCH) in the store taken as far as it may
    go now."""
    record = await current(store, key)
    if record is None or record["state"] in ("done", "rolled-back"):
        return Pass(record=record, steps=[], waiting="", working=False)
    steps: list[str] = []
    waiting, working = "", False

    async def save() -> None:  # after each write, so a crash never repeats one
        await store.aput(SPACE, key, dict(record))

    if "baseline" not in record:
        record["baseline"] = await pools.baseline(toolbox)
        await save()

    if record["state"] == "control-plane":
        waiting, working = await _control_plane(toolbox, record, steps, save)
        if not waiting and not working:
            record["state"] = "pools"
    if record["state"] == "pools":
        for wave in record["waves"]:
            if wave["state"] == "done":
                continue
            waiting, working = await _wave(toolbox, store, record, wave, steps, save)
            now: WaveState = wave["state"]  # the wave moved on: read it again
            if now == "rolled-back":
                record["state"] = "rolled-back"
            if waiting or working or now != "done":
                break
        else:
            record["state"] = "done"
            steps.append(await _done(toolbox, record))
    record["waiting"] = waiting
    await save()
    return Pass(record=record, steps=steps, waiting=waiting, working=working)


async def _done(toolbox: Toolbox, record: Record) -> str:
    """The last step said: every node at the target, or the nodes no pool holds that are not."""
    target = record["target"]
    if record["purpose"] == "patch":
        return f"the patch roll of {target} is done: every pool it covers runs its template"
    listed = await toolbox.call("list_resources", kind="Node", output="fields", limit=500,
                                fields=["status.nodeInfo.kubeletVersion"])  # fmt: skip
    behind = sorted(
        str(row["name"])
        for row in listed.get("items", [])
        if Minor.parse(str(row.get("status.nodeInfo.kubeletVersion") or "")) != Minor.parse(target)
    )
    if not behind:
        return f"the upgrade to {target} is done: every node runs it"
    return (
        f"the upgrade to {target} is done for the control plane and every pool; "
        f"{len(behind)} node(s) no pool manages still run an older kubelet "
        f"({', '.join(behind[:5])}{', ...' if len(behind) > 5 else ''}): upgrade them where "
        "they are managed (an older kubelet within three minors is allowed)"
    )


def rolling(done: Pass | None) -> frozenset[str]:
    """The pools the upgrade (or patch roll) is rolling, or rolling back, now."""
    record = done["record"] if done is not None else None
    waves = record["waves"] if record is not None and record["state"] == "pools" else []
    return frozenset(w["pool"] for w in waves if w["state"] in ("rolling", "rolling-back"))


# -- the control plane ---------------------------------------------------------------------------


async def _control_plane(
    toolbox: Toolbox, record: Record, steps: list[str], save: Save
) -> tuple[str, bool]:
    target = record["target"]
    now = await served(toolbox)
    if Minor.parse(now) == Minor.parse(target):
        steps.append(f"the control plane runs {now}")
        return "", False
    namespace, name = record["control_plane"].split("/", 1)
    got = await toolbox.call(
        "get_resource", kind="kubeadmcontrolplanes", name=name, namespace=namespace,
        output="fields", fields=["spec.version"],
    )  # fmt: skip
    if got.get("spec.version") == target:
        return "", True  # it rolls; /version moves when it is done
    if not record["proposal"]:
        record["proposal"] = await _propose(
            toolbox, "patch", f"kubeadmcontrolplane/{name}", namespace,
            f"Upgrade the control plane from {now} to {target}, before any node pool "
            "(kubelets may trail the API server, never lead it). The API server stays "
            "available while its instances roll.",
        )  # fmt: skip
        await save()
    decided = await proposals.current(toolbox, record["proposal"], waiter="upgrade control-plane")
    if not decided.approved:
        return _undecided(decided, "the control plane's upgrade", steps), False
    await toolbox.call(
        "patch", kind="kubeadmcontrolplanes", name=name, namespace=namespace,
        patch={"spec": {"version": target}}, patch_type="merge", proposal=record["proposal"],
    )  # fmt: skip
    steps.append(f"control plane {record['control_plane']}: version {now} -> {target} "
                 f"under proposal {record['proposal']}")  # fmt: skip
    return "", True


# -- a pool's wave -------------------------------------------------------------------------------


async def _wave(
    toolbox: Toolbox, store: BaseStore, record: Record, wave: Wave, steps: list[str], save: Save
) -> tuple[str, bool]:
    if wave["state"] == "pending":
        return await _begin(toolbox, record, wave, steps, save)
    pool = await pools.read(toolbox, wave["pool"])
    machines = await pools.machines(toolbox, wave["pool"])
    if wave["state"] == "rolling":
        failed = await _failed_join(toolbox, machines, wave)
        if failed:
            return await _roll_back(toolbox, wave, failed, steps, save)
        for machine in machines:
            if machine["deleting"] and machine["hooked"]:
                held = await _move_off(toolbox, store, record, wave, machine, steps)
                if held:
                    return held, False
        if not _settled(pool, machines, wave["field"], wave["after"]):
            return "", True
        wrong = await pools.regressions(toolbox, wave["pool"], _lacks(record),
                                        record.get("baseline"))  # fmt: skip
        if wrong or wave["rollback"]:
            now = (await cluster_now(toolbox)).timestamp()
            since = wave.setdefault("unhealthy_since", now)
            if wave["rollback"] or now - since >= VALIDATE_GRACE:
                failed = f"after the wave, {'; '.join(wrong) or 'validation failed'}"
                return await _roll_back(toolbox, wave, failed, steps, save)
            return "", True
        await _unhook(toolbox, machines, steps)
        wave["state"] = "done"
        steps.append(f"pool {wave['pool']} runs {wave['after']}; validated: healthy")
        return "", False
    if not _settled(pool, machines, wave["field"], wave["before"]):  # rolling back
        return "", True
    await _unhook(toolbox, machines, steps)
    wave["state"] = "rolled-back"
    steps.append(f"pool {wave['pool']} is back on {wave['before']}; the {record['purpose']} "
                 f"stopped there ({wave['why']}); the pools after it were not touched")  # fmt: skip
    return "", False


async def _begin(
    toolbox: Toolbox, record: Record, wave: Wave, steps: list[str], save: Save
) -> tuple[str, bool]:
    """The wave started, once its window is open and its proposal decided."""
    namespace, name = wave["pool"].split("/", 1)
    nodes = await pools.nodes_of(toolbox, name)
    if nodes:
        plan = await toolbox.call("drain_plan", node=nodes[0])
        pods = sum(1 for p in plan["pods"] if p["action"] == "evict")
        at = await cluster_now(toolbox)
        opens = await window(toolbox, nodes[0], pods, at=at)
        if opens:
            said = f"pool {wave['pool']} waits for its maintenance window: it opens at {opens}"
            steps.append(said + f" (cluster time now {at.isoformat()})")
            return said, False
    if not wave["proposal"]:
        teams = await pools.teams_on(toolbox, nodes)
        wave["proposal"] = await _propose(
            toolbox, "patch", f"machinedeployment/{name}", namespace,
            f"{_why(record)}: roll node pool {wave['pool']} from {FIELDS[wave['field']]} "
            f"{wave['before']} to {wave['after']}: Cluster API adds a new machine, then each "
            "old node is cordoned and drained through the Eviction API (never breaking a "
            "PodDisruptionBudget, training Jobs kept until they checkpoint) before it goes. "
            f"Workloads of {', '.join(teams) or 'no team'} move.",
        )  # fmt: skip
        await save()
    waiter = f"{_key(record)} {wave['pool']}"
    decided = await proposals.current(toolbox, wave["proposal"], waiter=waiter)
    if not decided.approved:
        return _undecided(decided, f"the roll of pool {wave['pool']}", steps), False
    machines = await pools.machines(toolbox, wave["pool"])
    for machine in machines:
        if not machine["hooked"]:
            await _hook(toolbox, machine, HOOK_OWNER)
    steps.append(f"pool {wave['pool']}: {len(machines)} machine(s) wait for the crew before "
                 "their drain (pre-drain hook)")  # fmt: skip
    await _set(toolbox, wave, wave["after"])
    wave["state"] = "rolling"
    await save()
    steps.append(f"pool {wave['pool']}: {FIELDS[wave['field']]} {wave['before']} -> "
                 f"{wave['after']} under proposal {wave['proposal']}")  # fmt: skip
    return "", True


async def _move_off(
    toolbox: Toolbox, store: BaseStore, record: Record, wave: Wave, machine: dict[str, Any],
    steps: list[str],
) -> str:  # fmt: skip
    """The node of a Machine Cluster API is deleting, moved off by the crew; the hook lifted once
    it is empty. What holds it, "" when the hook was lifted."""
    node = machine["node"]
    if node:
        moved = await move_off(
            toolbox, store, node, cordoned=await pools.cordoned(toolbox, node),
            because=f"the {record['purpose']} of pool {wave['pool']} to {wave['after']} "
            "replaces it",
            first=f"node {node} is replaced by the {record['purpose']} of pool {wave['pool']}",
        )  # fmt: skip
        steps += moved["steps"]
        if moved["status"] != "drained":
            return f"node {node}: {moved['status']}"
    await _hook(toolbox, machine, None)
    steps.append(f"machine {machine['name']} may go: its node is empty")
    return ""


async def _roll_back(
    toolbox: Toolbox, wave: Wave, failed: str, steps: list[str], save: Save
) -> tuple[str, bool]:
    """The wave paused and its rollback proposed (once: a later pass takes its decision up),
    then carried out as decided."""
    namespace, name = wave["pool"].split("/", 1)
    if not wave["rollback"]:
        wave["why"] = failed
        steps.append(f"pool {wave['pool']} paused: {failed}")
        wave["rollback"] = await _propose(
            toolbox, "patch", f"machinedeployment/{name}", namespace,
            f"Roll node pool {wave['pool']} back to {FIELDS[wave['field']]} {wave['before']}: "
            f"{failed}. Cluster API replaces the new machines with machines as they were; the "
            "drains stay PDB-respecting.",
        )  # fmt: skip
        await save()
    waiter = f"rollback {wave['pool']}"
    decided = await proposals.current(toolbox, wave["rollback"], waiter=waiter)
    if not decided.approved:
        return _undecided(decided, f"the rollback of pool {wave['pool']}", steps), False
    await _set(toolbox, wave, wave["before"], proposal=wave["rollback"])
    wave["state"] = "rolling-back"
    await save()
    steps.append(f"pool {wave['pool']}: rolling back to {wave['before']} under proposal "
                 f"{wave['rollback']}")  # fmt: skip
    return "", True


def _why(record: Record) -> str:
    if record["purpose"] == "patch":
        return f"Security patch (PatchPolicy {record['target']})"
    return f"Kubernetes upgrade to {record['target']}"


def _lacks(record: Record) -> Callable[[dict[str, Any]], str]:
    """What a node's row (`pools.NODE_FIELDS`) lacks after a wave of `record`, "" if nothing."""
    if record["purpose"] == "patch":
        floor = PatchSpec.model_construct(
            minimumKernel=record["floor"].get("kernel", ""),
            minimumOSImage=record["floor"].get("os_image", ""),
        )

        def unpatched(row: dict[str, Any]) -> str:
            lacks = floor.below(str(row.get("status.nodeInfo.kernelVersion") or ""),
                                str(row.get("status.nodeInfo.osImage") or ""))  # fmt: skip
            return "; ".join(lacks)

        return unpatched
    goal = Minor.parse(record["target"])

    def behind(row: dict[str, Any]) -> str:
        kubelet = str(row.get("status.nodeInfo.kubeletVersion") or "")
        return "" if Minor.parse(kubelet) == goal else f"kubelet {kubelet or '?'}"

    return behind


async def _set(toolbox: Toolbox, wave: Wave, value: str, *, proposal: str = "") -> None:
    """The pool's machines asked for at version (or on machine template) `value`, under the
    wave's proposal."""
    namespace, name = wave["pool"].split("/", 1)
    field = (
        {"version": value} if wave["field"] == "version" else {"infrastructureRef": {"name": value}}
    )
    await toolbox.call(
        "patch", kind="machinedeployments", name=name, namespace=namespace,
        patch={"spec": {"template": {"spec": field}}}, patch_type="merge",
        proposal=proposal or wave["proposal"],
    )  # fmt: skip


async def _hook(toolbox: Toolbox, machine: dict[str, Any], owner: str | None) -> None:
    """The crew's pre-drain hook put on the Machine (`owner`), or lifted (None)."""
    await toolbox.call(
        "patch", kind="machines", name=machine["name"], namespace=machine["namespace"],
        patch={"metadata": {"annotations": {pools.HOOK: owner}}}, patch_type="merge",
    )  # fmt: skip


async def _failed_join(toolbox: Toolbox, machines: list[dict[str, Any]], wave: Wave) -> str:
    """Why a new machine of the wave failed, "" while none has."""
    now, target = await cluster_now(toolbox), wave["after"]
    for machine in machines:
        if machine[wave["field"]] != target or machine["deleting"]:
            continue
        if machine["phase"] == "Failed":
            return f"new machine {machine['name']} failed: {machine['failure'] or 'no reason'}"
        if not machine["node"]:
            continue
        ready, since = await pools.ready(toolbox, machine["node"])
        if not ready and since is not None and (now - since).total_seconds() > JOIN_GRACE:
            return (f"new node {machine['node']} joined at {target} and is not Ready after "
                    f"{JOIN_GRACE:.0f} s")  # fmt: skip
    return ""


def _settled(
    pool: dict[str, Any], machines: list[dict[str, Any]], field: Field, value: str
) -> bool:
    """Every machine of the pool at `value` (of `field`), none going, all of them available."""
    wanted = int(pool.get("spec.replicas") or 0)
    return (
        pool.get(pools.TEMPLATE_FIELDS[field]) == value
        and len(machines) == wanted
        and all(m[field] == value and not m["deleting"] for m in machines)
        and int(pool.get("status.availableReplicas") or 0) == wanted
        and int(pool.get("status.updatedReplicas") or 0) == wanted
    )


async def _unhook(toolbox: Toolbox, machines: list[dict[str, Any]], steps: list[str]) -> None:
    for machine in machines:
        if machine["hooked"] and not machine["deleting"]:
            await _hook(toolbox, machine, None)
            steps.append(f"machine {machine['name']}: the crew's pre-drain hook removed")


# -- proposals -------------------------------------------------------------------------------------


async def _propose(toolbox: Toolbox, action: str, target: str, namespace: str, why: str) -> str:
    record = await toolbox.call("propose", action=action, target=target, namespace=namespace,
                                rationale=why, risk="medium")  # fmt: skip
    return str(record["proposal"])


def _undecided(decided: proposals.Decided, what: str, steps: list[str]) -> str:
    if decided.outcome == "rejected":
        said = f"{what} was rejected: {'; '.join(decided.reasons) or decided.text}"
    else:
        said = f"{what} waits for a person's decision (approval {decided.approval})"
    steps.append(said)
    return said


def where(record: Record, done: Pass) -> str:
    """Where an upgrade stands, in a few words (the progress line, the report's head)."""
    if record["state"] == "control-plane":
        return f"control plane to {record['target']}"
    rolling = [w["pool"] for w in record["waves"] if w["state"] in ("rolling", "rolling-back")]
    finished = sum(1 for w in record["waves"] if w["state"] == "done")
    head = f"pool {rolling[0]}" if rolling else record["state"]
    return f"{head}; {finished} of {len(record['waves'])} pool(s) done" + (
        f"; waiting: {done['waiting']}" if done["waiting"] else ""
    )
