"""The kubelet's streaming server: exec into and attach to a container that is running.

The API server (`sandbox.connect`) has already found the pod, checked the container name and
that the pod has a node; what is left is the kubelet's part, answered from its own records
(`PodKubelet.pods`) as a kubelet and containerd would:
- the node's kubelet is dead: the API server cannot dial it (`error dialing backend`);
- the container never started (still pulling, in config error): `container not found ("web")`;
- it started but is not running now (exited, CrashLoopBackOff): containerd's
  `container is in CONTAINER_EXITED state`;
- the exec's program is not in the image: containerd's `failed to start exec "<id>": OCI
  runtime exec failed: exec failed: unable to start container process: exec: "x": executable
  file not found in $PATH: unknown`, an error (not an exit code) that kubectl prints after
  `error: Internal error occurred:` and exits 1 for, as it does against containerd.
Each is an `Unreachable` carrying the message the API server puts in its InternalError.

An exec runs the command through `shell.Shell` against the container's `Box` (files, env,
network, identity, and the writable layer of this start of the container, `layer`, where
`kubectl cp` and redirections write), never on the host; sleeps take sandbox time (at once
on a stopped clock). An attach streams what the container prints from now on (its log,
`sandbox.logs`) until the client goes, the container stops or the pod is deleted; its stdin is
read and dropped, as by a process that does not read it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools

from sandbox.control.runtime import Manager
from sandbox.kubelet.containers import Run
from sandbox.kubelet.coreutils import Box, Stdio
from sandbox.kubelet.dialing import SERVICES, ClusterNetwork
from sandbox.kubelet.environment import container_env
from sandbox.kubelet.filesystem import ContainerFiles
from sandbox.kubelet.pods import PodKubelet
from sandbox.kubelet.shell import ExecNotFound, Shell
from sandbox.store import Obj

POLL = 0.2  # real seconds between looks at an attached pod (deleted? container stopped?)
_EXEC_IDS = itertools.count(1)


class Unreachable(Exception):
    """The kubelet cannot run the exec or attach; the message is for an InternalError."""


def kubelet_of(manager: Manager) -> PodKubelet:
    return next(c for c in manager.controllers if isinstance(c, PodKubelet))


def running(kubelet: PodKubelet, pod: Obj, container: str) -> Run:
    """The container's run, if it is running now; else why the kubelet cannot reach it."""
    meta, status = pod["metadata"], pod.get("status") or {}
    node = str((pod.get("spec") or {}).get("nodeName") or "")
    if not kubelet.ctx.world.node(node).heartbeat:
        host = status.get("hostIP") or node
        raise Unreachable(f"error dialing backend: dial tcp {host}:10250: i/o timeout")
    runtime = kubelet.pods.get((meta["namespace"], meta["name"]))
    run = runtime.runs.get(container) if runtime is not None else None
    if run is None or not run.container_id:
        raise Unreachable(f'unable to upgrade connection: container not found ("{container}")')
    if run.phase != "running":
        raise Unreachable(
            "error executing command in container: failed to exec in container: container is "
            "in CONTAINER_EXITED state"
        )
    return run


def box_for(kubelet: PodKubelet, pod: Obj, container: str, run: Run) -> Box:
    """The container as an exec's processes see it, read from the cluster now, with the
    writable layer of this start of the container (`run`)."""
    spec = pod.get("spec") or {}
    declared = next(c for c in spec.get("containers") or () if c.get("name") == container)
    lookup = kubelet.lookup(pod["metadata"]["namespace"])
    clock = kubelet.ctx.clock
    security = {**(spec.get("securityContext") or {}), **(declared.get("securityContext") or {})}

    async def sleep(seconds: float) -> None:
        real = clock.real_seconds(seconds) if clock.rate or seconds == float("inf") else 0.0
        if real == float("inf"):
            await asyncio.Event().wait()  # until the client goes and the exec is cancelled
        await asyncio.sleep(real)

    return Box(
        files=ContainerFiles.of(pod, declared, lookup),
        env=container_env(pod, declared, lookup, kubelet.list(SERVICES)),
        network=ClusterNetwork(kubelet, pod),
        hostname=str(spec.get("hostname") or pod["metadata"]["name"]),
        now=clock.now(),
        sleep=sleep,
        cwd=str(declared.get("workingDir") or "/"),
        uid=int(security.get("runAsUser") or 0),
        gid=int(security.get("runAsGroup") or 0),
        layer=kubelet.layers.of(str(pod["metadata"].get("uid") or ""), container, run.restarts),
    )


async def execute(
    kubelet: PodKubelet, pod: Obj, container: str, command: list[str], io: Stdio
) -> int:
    """Run `command` in the container; its exit code, or Unreachable."""
    run = running(kubelet, pod, container)
    try:
        return await Shell(box_for(kubelet, pod, container, run)).exec_argv(command, io)
    except ExecNotFound as missing:
        exec_id = hashlib.sha256(f"{run.container_id}:{next(_EXEC_IDS)}".encode()).hexdigest()
        raise Unreachable(
            f"error executing command in container: failed to exec in container: failed to "
            f'start exec "{exec_id}": OCI runtime exec failed: exec failed: unable to start '
            f'container process: exec: "{missing.binary}": executable file not found in '
            f"$PATH: unknown"
        ) from None


async def attach(kubelet: PodKubelet, pod: Obj, container: str, io: Stdio) -> None:
    """Stream the container's output from now until it stops or the pod goes."""
    running(kubelet, pod, container)
    meta = pod["metadata"]
    key = (meta["namespace"], meta["name"], container)
    logs = kubelet.ctx.logs
    queue = logs.follow(key)
    drain = asyncio.create_task(_drop(io))
    try:
        while _still_running(kubelet, pod, container):
            with contextlib.suppress(TimeoutError):
                line = await asyncio.wait_for(queue.get(), POLL)
                await io.out(line + "\n")
    finally:
        drain.cancel()
        logs.unfollow(key, queue)


def _still_running(kubelet: PodKubelet, pod: Obj, container: str) -> bool:
    meta = pod["metadata"]
    current = kubelet.get(("", "pods"), meta["namespace"], meta["name"])
    if current is None or current["metadata"].get("uid") != meta.get("uid"):
        return False
    runtime = kubelet.pods.get((meta["namespace"], meta["name"]))
    run = runtime.runs.get(container) if runtime is not None else None
    return run is not None and run.phase == "running"


async def _drop(io: Stdio) -> None:
    while await io.stdin.read() is not None:
        pass
