"""The write tools of the kube server: thin FastMCP wrappers over `writes.Writes`.

Registered only when the server is not read-only (`server.build` decides), so a `--read-only`
server does not even list them. Each tool hands its arguments to the engine off the event loop;
the engine validates them, applies the namespace allow-list, and dry-runs every write on the
server before doing it. The annotations are per tool, with the reason next to each: none of
these tools is read-only, and none reaches outside the cluster (openWorldHint False).

With a policy gate (`gate`), `gated` registers each tool wrapped once by `guard`: the gate
admits or refuses the call before the tool runs and records the outcome after, and the tool
gains a `proposal` argument (an approved proposal's id). The tools themselves know nothing of it.
A write the gate refuses is counted as a `policy_gate` safeguard refusal.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

from core.connection import Json
from core.errors import PermissionDenied
from core.telemetry import safeguard_refused
from mcp_servers.common.tools import off_loop
from mcp_servers.kube import node_writes, resizing, rollouts
from mcp_servers.kube.node_writes import Effect
from mcp_servers.kube.writes import PatchType, Propagation, Writes

if TYPE_CHECKING:
    from mcp_servers.kube.gate import Gate

Tool = Callable[..., Awaitable[Json]]


def _hints(*, destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(
        readOnlyHint=False,
        destructiveHint=destructive,
        idempotentHint=idempotent,
        openWorldHint=False,
    )


# apply: may overwrite or (with force) take over fields; the same manifest twice is a no-op.
APPLY = _hints(destructive=True, idempotent=True)
# patch: replaces or removes fields; a json patch `add` to a list repeats, so not idempotent.
PATCH = _hints(destructive=True, idempotent=False)
# scale: scaling down removes pods; the same count twice changes nothing more.
SCALE = _hints(destructive=True, idempotent=True)
# set_image: replaces the old image and so every pod; the same image twice changes nothing more.
SET_IMAGE = _hints(destructive=True, idempotent=True)
# set_resources: replaces every pod (a rollout) and may leave too little CPU or memory; the same
# values twice change nothing more.
SET_RESOURCES = _hints(destructive=True, idempotent=True)
# rollout_restart: only adds an annotation (pods are replaced under the rollout strategy, the
# spec is kept), so not destructive; each call starts another restart, so not idempotent.
RESTART = _hints(destructive=False, idempotent=False)
# rollout_undo: replaces the pod template; "previous" twice flips between two revisions.
UNDO = _hints(destructive=True, idempotent=False)
# cordon/uncordon: a reversible flag that evicts nothing; repeating it changes nothing more.
CORDON = _hints(destructive=False, idempotent=True)
# taint: NoExecute evicts pods and removal drops a taint; repeating it changes nothing more.
TAINT = _hints(destructive=True, idempotent=True)
# delete: removes the object; a second call could delete a new object of the same name.
DELETE = _hints(destructive=True, idempotent=False)

DRY_RUN_DOC = """Every call first runs a server-side dry run and returns `changes` (field paths with
old and new values; Secret values redacted); dry_run=True stops there and changes nothing."""


def _documented(doc: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__doc__ = f"{doc}\n{DRY_RUN_DOC}"
        return fn

    return decorate


PROPOSAL_DOC = """Policies judge this call first: one they refuse fails, citing the rules, and says
what to do (a counter-offer, or `propose` it on the policy server). proposal: the id of an
approved proposal whose action is this very call; it is then let through once."""


def gated(mcp: FastMCP, gate: Gate | None) -> Callable[[ToolAnnotations], Callable[[Tool], Tool]]:
    """`mcp.tool(annotations=...)`, registering each tool behind `gate` when there is one."""

    def tool(annotations: ToolAnnotations) -> Callable[[Tool], Tool]:
        def register(fn: Tool) -> Tool:
            mcp.tool(annotations=annotations)(fn if gate is None else guard(gate, fn))
            return fn

        return register

    return tool


def guard(gate: Gate, fn: Tool) -> Tool:
    """`fn` behind the gate, with a `proposal` argument: admitted calls run and are recorded
    (applied or failed), refused ones are recorded and raise PermissionDenied; a dry run runs
    with the gate's verdict in its answer, never refused, never recorded."""
    signature = inspect.signature(fn, eval_str=True)
    hints = typing.get_type_hints(fn)
    name = fn.__name__

    @functools.wraps(fn)
    async def guarded(*, proposal: str = "", **arguments: Any) -> Json:
        call = signature.bind(**arguments)
        call.apply_defaults()
        admission = await off_loop(gate.admit, name, call.arguments, proposal=proposal)
        if call.arguments.get("dry_run"):
            return {**await fn(**arguments), "policy": admission.as_dict()}
        if admission.refusal:
            safeguard_refused("policy_gate", admission.verdict)
            await off_loop(gate.record, admission, f"refused: {admission.verdict}")
            raise PermissionDenied(admission.refusal)
        try:
            answer = await fn(**arguments)
        except Exception as exc:
            await off_loop(gate.record, admission, admission.failure(exc))
            raise
        await off_loop(gate.record, admission, "applied")
        return {**answer, "policy": admission.as_dict()}

    keyword = inspect.Parameter(
        "proposal", inspect.Parameter.KEYWORD_ONLY, default="", annotation=str
    )
    guarded.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*signature.parameters.values(), keyword]
    )
    guarded.__annotations__ = {**hints, "proposal": str}
    guarded.__doc__ = f"{fn.__doc__ or ''}\n{PROPOSAL_DOC}"
    return guarded


def register(mcp: FastMCP, writes: Writes, *, gate: Gate | None = None) -> None:
    tool = gated(mcp, gate)

    @tool(APPLY)
    @_documented("""Server-side apply of a YAML or JSON manifest (one or more objects, field
    manager `kubecrew`). namespace fills in objects that name none. force=True takes over
    fields another manager owns (only after reading the conflict).""")
    async def apply(
        manifest: str,
        namespace: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        context: str | None = None,
    ) -> Json:
        return await off_loop(
            writes.apply,
            manifest,
            namespace=namespace,
            force=force,
            dry_run=dry_run,
            context=context,
        )

    @tool(PATCH)
    @_documented("""Patch one object. patch_type `strategic` (default, lists merge by name),
    `merge` (RFC 7386) or `json` (RFC 6902 list of operations). patch: an object, a list
    (json) or the same as a JSON/YAML string.""")
    async def patch(
        kind: str,
        name: str,
        patch: dict[str, Any] | list[Any] | str,
        patch_type: PatchType = "strategic",
        namespace: str | None = None,
        dry_run: bool = False,
        context: str | None = None,
    ) -> Json:
        return await off_loop(
            writes.patch,
            kind,
            name,
            patch,
            patch_type=patch_type,
            namespace=namespace,
            dry_run=dry_run,
            context=context,
        )

    @tool(SCALE)
    @_documented("Set the replicas of a Deployment, StatefulSet or ReplicaSet.")
    async def scale(
        name: str,
        replicas: int,
        kind: str = "deployment",
        namespace: str | None = None,
        dry_run: bool = False,
        context: str | None = None,
    ) -> Json:
        return await off_loop(
            writes.scale,
            kind,
            name,
            replicas,
            namespace=namespace,
            dry_run=dry_run,
            context=context,
        )

    @tool(SET_IMAGE)
    @_documented("""Set one container's image (kubectl set image) in a Deployment, StatefulSet,
    DaemonSet, ReplicaSet, Job, CronJob or Pod; init containers too.""")
    async def set_image(
        name: str,
        container: str,
        image: str,
        kind: str = "deployment",
        namespace: str | None = None,
        dry_run: bool = False,
        context: str | None = None,
    ) -> Json:
        return await off_loop(
            writes.set_image,
            kind,
            name,
            container,
            image,
            namespace=namespace,
            dry_run=dry_run,
            context=context,
        )

    @tool(SET_RESOURCES)
    @_documented("""Set one container's requests (cpu, memory) and optionally limits (limit_cpu,
    limit_memory) in a Deployment, StatefulSet or DaemonSet (kubectl set resources): quantities
    such as 100m, 0.5, 128Mi; resources not given stay as they are; the pods roll.""")
    async def set_resources(
        name: str,
        container: str,
        cpu: str = "",
        memory: str = "",
        limit_cpu: str = "",
        limit_memory: str = "",
        kind: str = "deployment",
        namespace: str | None = None,
        dry_run: bool = False,
        context: str | None = None,
    ) -> Json:
        return await off_loop(
            resizing.set_resources,
            writes,
            kind,
            name,
            container,
            cpu=cpu,
            memory=memory,
            limit_cpu=limit_cpu,
            limit_memory=limit_memory,
            namespace=namespace,
            dry_run=dry_run,
            context=context,
        )

    @tool(RESTART)
    @_documented("""Restart the pods of a Deployment, StatefulSet or DaemonSet by their rollout
    strategy (kubectl rollout restart: a restartedAt annotation on the pod template).""")
    async def rollout_restart(
        name: str,
        kind: str = "deployment",
        namespace: str | None = None,
        dry_run: bool = False,
        context: str | None = None,
    ) -> Json:
        return await off_loop(
            rollouts.restart,
            writes,
            kind,
            name,
            namespace=namespace,
            dry_run=dry_run,
            context=context,
        )

    @tool(UNDO)
    @_documented("""Roll a Deployment back to the previous revision (to_revision=0) or to a
    given one (see rollout_history), as kubectl rollout undo does.""")
    async def rollout_undo(
        name: str,
        to_revision: int = 0,
        namespace: str | None = None,
        dry_run: bool = False,
        context: str | None = None,
    ) -> Json:
        return await off_loop(
            rollouts.undo,
            writes,
            name,
            to_revision=to_revision,
            namespace=namespace,
            dry_run=dry_run,
            context=context,
        )

    @tool(CORDON)
    @_documented("Mark a node unschedulable: running pods stay, new pods go elsewhere.")
    async def cordon(node: str, dry_run: bool = False, context: str | None = None) -> Json:
        return await off_loop(
            node_writes.cordon, writes, node, unschedulable=True, dry_run=dry_run, context=context
        )

    @tool(CORDON)
    @_documented("Mark a node schedulable again.")
    async def uncordon(node: str, dry_run: bool = False, context: str | None = None) -> Json:
        return await off_loop(
            node_writes.cordon, writes, node, unschedulable=False, dry_run=dry_run, context=context
        )

    @tool(TAINT)
    @_documented("""Add a taint key[=value]:effect to a node, or remove=True to remove the taints
    with that key (and that effect, if given). A different value needs overwrite=True.""")
    async def taint(
        node: str,
        key: str,
        effect: Effect | None = None,
        value: str = "",
        remove: bool = False,
        overwrite: bool = False,
        dry_run: bool = False,
        context: str | None = None,
    ) -> Json:
        return await off_loop(
            node_writes.taint,
            writes,
            node,
            key,
            value=value,
            effect=effect,
            remove=remove,
            overwrite=overwrite,
            dry_run=dry_run,
            context=context,
        )

    @tool(DELETE)
    @_documented("""Delete exactly one object by name (no selectors). Namespaces and other
    cluster-scoped objects need confirm="<kind>/<name>" (e.g. "namespace/shop"), spelled exactly.
    propagation: Background (default), Foreground or Orphan for dependents.""")
    async def delete(
        kind: str,
        name: str,
        namespace: str | None = None,
        confirm: str = "",
        propagation: Propagation = "Background",
        dry_run: bool = False,
        context: str | None = None,
    ) -> Json:
        return await off_loop(
            writes.delete,
            kind,
            name,
            namespace=namespace,
            confirm=confirm,
            propagation=propagation,
            dry_run=dry_run,
            context=context,
        )
