"""Security patching in the patrol: nodes below a PatchPolicy found, and their pools rolled onto
the patched machine template with an upgrade's safety (`upgrading`).

Each patrol first carries a patch roll under way on (`upgrading.advance`, key PATCH). Otherwise
it reads the PatchPolicy documents and, for each Cluster API pool a policy covers, the kernel and
OS image its nodes report (`status.nodeInfo`): a node below the policy's minimum is out of
policy from the moment a patrol first saw it (remembered in the store), and due by that moment
plus the policy's `within`; a node past it is said to be overdue. The pools with such nodes are
rolled in one record, one wave per pool, onto the policy's `template`: the MachineDeployment's
infrastructureRef set to it under a proposal the owners' policies judge, inside the maintenance
window, every old machine held at the crew's pre-drain hook until its node is moved off as any
other (eviction intent, training Jobs kept until they checkpoint, PDB-respecting drains),
validation of the pool's nodes against the policy after each wave, and rollback of a wave
whose new node does not come up Ready. The policy is the org's standing decision, so nobody is
asked in a conversation; the proposals still go to the owners' policies.

Nothing rolls (and the reason is said) when the template is missing, when a pool already runs
the policy's template and its nodes are still below (the template does not carry the patch),
or when a pool cannot roll at all (no surge nor unavailability allowed, its surge refused).
Left out: several policies rolled at once (the first policy with findings goes first; the others
wait for the next patrol), and patching nodes no pool manages (they are named, not touched).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, TypedDict

from langgraph.store.base import BaseStore

from agents.cluster_operator import pools, readiness, upgrade_said, upgrading
from agents.cluster_operator.clock import cluster_now
from agents.cluster_operator.placement import POOL_LABEL
from agents.runtime.errors import ToolFailed
from agents.runtime.toolbox import Toolbox
from core.policy.documents.patch import PatchPolicy

SPACE = ("cluster_operator", "patch-findings")  # node -> when a patrol first saw it below
CLUSTER_NAMESPACE = "cluster.x-k8s.io/cluster-namespace"  # on a Node: its Machine's namespace


class Below(TypedDict):
    node: str
    pool: str  # namespace/name, "" for a node no pool manages
    policy: str
    lacks: list[str]  # "kernel 6.1.0-sandbox < 6.8.0"
    due: str  # ISO: first seen + the policy's `within`
    overdue: bool


class Patching(TypedDict):
    below: list[Below]
    refused: list[str]  # why nothing rolls
    roll: upgrading.Pass | None  # the patch roll's pass this patrol (None: none under way)


async def patrol(toolbox: Toolbox, store: BaseStore) -> Patching:
    """The patrol's patching: a roll under way carried on, else nodes below found (remembered)
    and their pools rolled onto the first policy's template."""
    found = Patching(below=[], refused=[], roll=None)
    kept = await upgrading.current(store, upgrading.PATCH)
    if kept is not None and kept["state"] not in ("done", "rolled-back"):
        found["roll"] = await upgrading.advance(toolbox, store, key=upgrading.PATCH)
        return found
    policies = await readiness.documents(toolbox, PatchPolicy)
    found["below"] = await _below(toolbox, store, policies, remember=True)
    first = next((p for p in policies if any(b["policy"] == p.metadata.name and b["pool"]
                                             for b in found["below"])), None)  # fmt: skip
    if first is None:
        return found
    record, found["refused"] = await _plan(toolbox, first, found["below"])
    if record is not None:
        await upgrading.start(store, record)
        found["roll"] = await upgrading.advance(toolbox, store, key=upgrading.PATCH)
    return found


async def findings(toolbox: Toolbox, store: BaseStore) -> Patching:
    """What a question about patching is told ("which nodes need patching?"): the nodes below
    their PatchPolicy, and the roll under way if there is one; it writes nothing (a node a patrol
    has not yet seen is due from now)."""
    kept = await upgrading.current(store, upgrading.PATCH)
    roll = None
    if kept is not None and kept["state"] not in ("done", "rolled-back"):
        roll = upgrading.told(kept)
    policies = await readiness.documents(toolbox, PatchPolicy)
    below = await _below(toolbox, store, policies, remember=False)
    return Patching(below=below, refused=[], roll=roll)


async def _below(
    toolbox: Toolbox, store: BaseStore, policies: list[PatchPolicy], *, remember: bool
) -> list[Below]:
    """Every node below a policy covering it, with when it was first seen below (kept in the
    store when `remember`, and forgotten once it is patched or gone)."""
    if not policies:
        return []
    at = await cluster_now(toolbox)
    nodes = await _nodes(toolbox)
    seen = {item.key: str(item.value["since"]) for item in await store.asearch(SPACE, limit=1000)}
    below: list[Below] = []
    for policy in policies:
        spec = policy.spec
        for node in nodes:
            lacks = spec.below(node["kernel"], node["os_image"])
            if not lacks or (node["pool"] and not spec.covers(node["pool"].split("/", 1)[1])):
                continue
            since = seen.get(node["name"]) or at.isoformat()
            if remember and node["name"] not in seen:
                await store.aput(SPACE, node["name"], {"since": since})
                seen[node["name"]] = since
            due = datetime.fromisoformat(since) + timedelta(seconds=spec.within.total_seconds())
            below.append(Below(
                node=node["name"], pool=node["pool"], policy=policy.metadata.name, lacks=lacks,
                due=due.isoformat(), overdue=at > due,
            ))  # fmt: skip
    for gone in set(seen) - {b["node"] for b in below} if remember else set():
        await store.adelete(SPACE, gone)  # patched, or gone: its clock starts again if it slips
    return below


async def _plan(
    toolbox: Toolbox, policy: PatchPolicy, below: list[Below]
) -> tuple[upgrading.Record | None, list[str]]:
    """The patch roll of the pools `policy` finds nodes below in, or why none can start."""
    spec, refusals, waves = policy.spec, [], []
    lacking = {b["pool"] for b in below if b["policy"] == policy.metadata.name and b["pool"]}
    for pool in await pools.in_order(toolbox):
        if pool["pool"] not in lacking:
            continue
        got = await pools.read(toolbox, pool["pool"])
        now = str(got.get(pools.TEMPLATE_FIELDS["template"]) or "")
        if now == spec.template:
            refusals.append(
                f"pool {pool['pool']} already runs machine template {spec.template} and its "
                f"nodes are still below PatchPolicy {policy.metadata.name}: the template does "
                "not carry the patch; point the policy at one that does"
            )
            continue
        if not await _template_exists(toolbox, pool["pool"], spec.template):
            refusals.append(
                f"PatchPolicy {policy.metadata.name} names machine template {spec.template}, "
                f"which namespace {pool['pool'].split('/', 1)[0]} does not hold"
            )
            continue
        refusals += await pools.cannot_roll(toolbox, pool)
        waves.append(upgrading.Wave(
            pool=pool["pool"], field="template", before=now, after=spec.template,
            state="pending", proposal="", rollback="", why="",
        ))  # fmt: skip
    if refusals or not waves:
        return None, refusals
    floor = {"kernel": spec.minimumKernel, "os_image": spec.minimumOSImage}
    return upgrading.Record(
        purpose="patch", floor=floor, target=policy.metadata.name, from_version="",
        control_plane="", state="pools", proposal="", waves=waves,
    ), []  # fmt: skip


async def _template_exists(toolbox: Toolbox, pool: str, template: str) -> bool:
    namespace, name = pool.split("/", 1)
    got = await toolbox.call(
        "get_resource", kind="machinedeployments", name=name, namespace=namespace,
        output="fields", fields=["spec.template.spec.infrastructureRef.kind"],
    )  # fmt: skip
    kind = str(got.get("spec.template.spec.infrastructureRef.kind") or "")
    try:
        await toolbox.call("get_resource", kind=kind, name=template, namespace=namespace,
                           output="fields", fields=["metadata.name"])  # fmt: skip
    except ToolFailed:
        return False
    return True


async def _nodes(toolbox: Toolbox) -> list[dict[str, Any]]:
    listed = await toolbox.call(
        "list_resources", kind="Node", output="fields", limit=500,
        fields=["status.nodeInfo.kernelVersion", "status.nodeInfo.osImage", "metadata.labels",
                "metadata.annotations"],
    )  # fmt: skip
    return [
        {
            "name": str(row["name"]),
            "kernel": str(row.get("status.nodeInfo.kernelVersion") or ""),
            "os_image": str(row.get("status.nodeInfo.osImage") or ""),
            "pool": _pool_of(row),
        }
        for row in listed.get("items", [])
    ]


def _pool_of(row: dict[str, Any]) -> str:
    """The node's pool as namespace/name ("" for none): the pool label, in the namespace Cluster
    API's annotation names (its Machine's)."""
    name = (row.get("metadata.labels") or {}).get(POOL_LABEL)
    namespace = (row.get("metadata.annotations") or {}).get(CLUSTER_NAMESPACE) or "default"
    return f"{namespace}/{name}" if name else ""


def said(found: Patching, *, asked: bool = False) -> str:
    """The patrol's lines about patching ("" when every node is within its policies; said so
    when `asked`)."""
    lines: list[str] = []
    if asked and not found["below"] and found["roll"] is None:
        return "Patching: every node a PatchPolicy covers is at or above its minimums."
    if found["below"]:
        overdue = sum(1 for b in found["below"] if b["overdue"])
        lines.append(
            f"Patching: {len(found['below'])} node(s) below their PatchPolicy"
            + (f", {overdue} past the deadline" if overdue else "")
            + ":"
        )
        lines += [
            f"- {b['node']} ({'pool ' + b['pool'] if b['pool'] else 'no pool: not rolled'}): "
            f"{'; '.join(b['lacks'])}; due by {b['due']}" + (" (OVERDUE)" if b["overdue"] else "")
            for b in found["below"]
        ]
    lines += [f"Not rolled: {why}." for why in found["refused"]]
    roll = found["roll"]
    if roll is not None and (roll["steps"] or roll["waiting"]):
        lines.append(upgrade_said.said_pass(roll))
    return "\n".join(lines)
