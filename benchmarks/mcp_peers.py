"""`make bench` suite `peers`: our kube MCP server beside two MCP servers for Kubernetes from PyPI.

All three talk to the same 5,000-pod sandbox over stdio through the official MCP client
(`mcp.client.stdio`), one session per server (start-up timed apart), all open at once: each
read is called `ROUNDS` times per server after `WARM_UP` uncounted rounds, the servers taking
turns within a round so the sandbox's and the machine's busy moments fall on all alike,
each call after the same `CALL_SPACING_S` of idle (so the client's own wake-up after a pause falls
on every server alike, not on whichever is called first) and each server called at most every
`len(servers) * CALL_SPACING_S` (so no client-side rate limiter is what gets measured): list the
pods of namespace `bench`, get one pod as YAML, list the events of `bench`.
Reported per call: median and p95 latency and the answer's size (UTF-8 bytes of its text
content, what a model would read), with ratios against ours.

The peers are never project dependencies: they are pip-installed into a throwaway venv under a
temp dir. `kubernetes-mcp-server` on PyPI is a wrapper that downloads its Go binary from GitHub
on first start; where that download is impossible (no network beyond the package registries),
the same project's binary is taken from its npm platform package (`npm pack`), and the version
actually run is printed. `kubectl-mcp-server` shells out to kubectl: the project's own kubectl
comes first on its PATH. A peer that cannot be installed or started is skipped with the reason.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tarfile
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import TextContent

from mcp_servers.common.prelude import CACHE_ENV

ROUNDS = 30
WARM_UP = 3
# Every call follows this much idle. With three servers taking turns each is called every 0.3 s:
# client-go's default client-side limiter (5 requests/s, burst 10) would otherwise delay the Go
# peer's calls (131 ms a get when called back to back), which measures the limiter, not the server.
CALL_SPACING_S = 0.1
START_RUNS = 8  # the first of ours records its manifest; the median is of the other 7
SETTLE_S = 3.0  # after the warm-up rounds: our caches list 5,000 pods once, then follow a watch
POD = "pod-02500"
OPERATIONS = ("list pods in bench", "get one pod (YAML)", "list events in bench")
KMS_VERSION = "0.0.69"
KUBECTL_MCP_VERSION = "2.0.0"


@dataclass
class Peer:
    label: str
    command: list[str]
    env: dict[str, str]
    calls: dict[str, tuple[str, dict[str, Any]]]  # operation -> (tool, arguments)
    note: str = ""
    measured: dict[str, dict[str, Any]] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _install(venv: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
         f"kubernetes-mcp-server=={KMS_VERSION}", f"kubectl-mcp-server=={KUBECTL_MCP_VERSION}"],
        check=True, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def _go_binary(venv: Path, tmp: Path) -> tuple[list[str], dict[str, str], str]:
    """How to start kubernetes-mcp-server: the PyPI wrapper if it can fetch its binary, else the
    binary from the project's npm platform package. Raises RuntimeError with the reason."""
    home = tmp / "kms-home"  # the wrapper caches its download under $HOME: keep it throwaway
    home.mkdir(exist_ok=True)
    wrapper = str(venv / "bin" / "kubernetes-mcp-server")
    env = {**os.environ, "HOME": str(home)}
    probe = subprocess.run(
        [wrapper, "--version"], env=env, capture_output=True, text=True, timeout=300
    )
    if probe.returncode == 0:
        return [wrapper], env, f"PyPI {KMS_VERSION} wrapper"
    reason = (probe.stderr.strip().splitlines() or ["no output"])[-1]
    _log(f"  kubernetes-mcp-server's PyPI wrapper cannot start: {reason}")
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower()
    )
    if platform.system() != "Linux" or arch is None:
        raise RuntimeError(f"the wrapper failed ({reason}) and no npm fallback for this platform")
    package = f"kubernetes-mcp-server-linux-{arch}"
    _log(f"  falling back to the npm package {package} ...")
    packed = subprocess.run(
        ["npm", "pack", "--silent", package], cwd=tmp, capture_output=True, text=True, timeout=300
    )
    if packed.returncode != 0:
        raise RuntimeError(
            f"the wrapper failed ({reason}); npm pack failed: {packed.stderr[-200:]}"
        )
    with tarfile.open(tmp / packed.stdout.strip().splitlines()[-1]) as archive:
        archive.extractall(tmp / "kms-npm", filter="data")
    binary = tmp / "kms-npm" / "package" / "bin" / package
    binary.chmod(0o755)
    version = json.loads((tmp / "kms-npm" / "package" / "package.json").read_text())["version"]
    note = f"Go binary {version} from npm; the PyPI {KMS_VERSION} wrapper failed: {reason}"
    return [str(binary)], env, note


def _peers(kubeconfig: Path, tmp: Path) -> tuple[list[Peer], list[str]]:
    bin_dir = Path(sys.executable).parent  # the project venv: its python and its real kubectl
    base = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    ours = Peer(
        "kubecrew kube",
        [sys.executable, "-m", "mcp_servers.kube", "--kubeconfig", str(kubeconfig), "--read-only"],
        {**base, CACHE_ENV: str(tmp / "mcp-manifests")},  # none yet: the first start records it
        {
            OPERATIONS[0]: ("list_resources", {"kind": "pods", "namespace": "bench"}),
            OPERATIONS[1]: ("get_resource",
                            {"kind": "pod", "name": POD, "namespace": "bench", "output": "yaml"}),
            OPERATIONS[2]: ("events", {"namespace": "bench"}),
        },
    )  # fmt: skip
    peers, skipped = [ours], []
    venv = tmp / "peers-venv"
    _log(f"installing kubernetes-mcp-server {KMS_VERSION} and kubectl-mcp-server "
         f"{KUBECTL_MCP_VERSION} into a throwaway venv ...")  # fmt: skip
    try:
        _install(venv)
    except (subprocess.SubprocessError, OSError) as error:
        detail = getattr(error, "stderr", "") or str(error)
        return peers, [f"both peers: pip install failed: {str(detail)[-300:]}"]
    try:
        command, env, note = _go_binary(venv, tmp)
        peers.append(
            Peer(
                "kubernetes-mcp-server",
                [*command, "--kubeconfig", str(kubeconfig), "--read-only"],
                {**env, **base, "HOME": env["HOME"]},
                {
                    OPERATIONS[0]: ("pods_list_in_namespace", {"namespace": "bench"}),
                    OPERATIONS[1]: ("pods_get", {"name": POD, "namespace": "bench"}),
                    OPERATIONS[2]: ("events_list", {"namespace": "bench"}),
                },
                note,
            )
        )
    except (RuntimeError, subprocess.SubprocessError, OSError) as error:
        skipped.append(f"kubernetes-mcp-server: {error}")
    path = os.pathsep.join([str(bin_dir), str(venv / "bin"), os.environ.get("PATH", "")])
    peers.append(
        Peer(
            "kubectl-mcp-server",
            [str(venv / "bin" / "kubectl-mcp"), "--read-only"],
            {**base, "PATH": path},
            {
                OPERATIONS[0]: ("kubectl_get", {"resource_type": "pods", "namespace": "bench"}),
                OPERATIONS[1]: ("kubectl_get", {"resource_type": "pods", "name": POD,
                                                "namespace": "bench", "output": "yaml"}),
                OPERATIONS[2]: ("kubectl_get", {"resource_type": "events", "namespace": "bench"}),
            },
            f"PyPI {KUBECTL_MCP_VERSION}, kubectl {bin_dir / 'kubectl'}",
        )
    )  # fmt: skip
    return peers, skipped


def _size(result: Any) -> int:
    return sum(len(c.text.encode()) for c in result.content if isinstance(c, TextContent))


async def _start(peer: Peer, stack: AsyncExitStack) -> tuple[ClientSession, set[str], float]:
    """A session of `peer`: its tools and how long start, initialize and list tools took (ms)."""
    params = StdioServerParameters(command=peer.command[0], args=peer.command[1:], env=peer.env)
    began = time.perf_counter()
    read, write = await stack.enter_async_context(stdio_client(params))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    tools = {tool.name for tool in (await session.list_tools()).tools}
    return session, tools, (time.perf_counter() - began) * 1000


async def _starts(peers: list[Peer]) -> None:
    """`START_RUNS` starts of each server, in turn: start + initialize + list tools, then the
    first call (a get) right after. Ours records its manifest on its first start ever (a fresh
    cache directory here), so that one is reported apart and the rest are every later start."""
    starts: dict[str, list[float]] = {p.label: [] for p in peers}
    calls: dict[str, list[float]] = {p.label: [] for p in peers}
    for _ in range(START_RUNS):
        for peer in peers:
            async with AsyncExitStack() as stack:
                try:
                    session, tools, took = await _start(peer, stack)
                except Exception as error:  # a peer failing to start must not sink the others
                    if peer is peers[0]:
                        raise
                    peer.measured["start"] = {"error": repr(error)[:160]}
                    continue
                tool, arguments = peer.calls[OPERATIONS[1]]
                call, _ = await _call(session, tool, arguments)
                starts[peer.label].append(took)
                calls[peer.label].append(call * 1000)
            peer.measured["start"] = {
                "tools": len(tools),
                "first_ms": round(starts[peer.label][0]),
                "median_ms": round(statistics.median(starts[peer.label][1:] or [took])),
                "first_call_median_ms": round(statistics.median(calls[peer.label])),
            }


async def _call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> tuple[float, Any]:
    began = time.perf_counter()
    result = await session.call_tool(tool, arguments, read_timeout_seconds=timedelta(seconds=120))
    return time.perf_counter() - began, result


async def _measure(peers: list[Peer], rounds: int) -> None:
    """All servers open at once; each round calls every server in turn, so slow moments of the
    shared sandbox and machine fall on all of them alike. Warm-up calls are not counted."""
    async with AsyncExitStack() as stack:
        sessions: dict[str, tuple[ClientSession, set[str]]] = {}
        for peer in peers:
            try:
                session, tools, _ = await _start(peer, stack)
            except Exception as error:  # a peer failing to start must not sink the others
                if peer is peers[0]:
                    raise
                print(f"skipped {peer.label}: could not start it: {error!r}", flush=True)
                continue
            sessions[peer.label] = session, tools
        running = [p for p in peers if p.label in sessions]
        for operation in OPERATIONS:
            times: dict[str, list[float]] = {p.label: [] for p in running}
            for round_ in range(WARM_UP + rounds):
                if round_ == WARM_UP:
                    await asyncio.sleep(SETTLE_S)  # ours: the caches the warm-up started, in step
                for peer in running:
                    await asyncio.sleep(CALL_SPACING_S)
                    took = await _once(peer, sessions[peer.label], operation)
                    if took is not None and round_ >= WARM_UP:
                        times[peer.label].append(took)
            for peer in running:
                _summarize(peer, operation, times[peer.label])


async def _once(
    peer: Peer, session: tuple[ClientSession, set[str]], operation: str
) -> float | None:
    """One timed call of `operation`; None once the peer cannot answer it (recorded why)."""
    if operation in peer.measured:  # failed before
        return None
    tool, arguments = peer.calls[operation]
    if tool not in session[1]:
        peer.measured[operation] = {"error": f"no tool {tool}"}
        return None
    took, result = await _call(session[0], tool, arguments)
    if result.isError:
        text = "".join(c.text for c in result.content if isinstance(c, TextContent))
        peer.measured[operation] = {"tool": tool, "error": text[:160]}
        return None
    peer.sizes[operation] = _size(result)
    return took


def _summarize(peer: Peer, operation: str, times: list[float]) -> None:
    if operation in peer.measured or not times:
        return
    taken = sorted(times)
    peer.measured[operation] = {
        "tool": peer.calls[operation][0],
        "median_ms": round(statistics.median(taken) * 1000, 1),
        "p95_ms": round(taken[min(len(taken) - 1, int(len(taken) * 0.95))] * 1000, 1),
        "answer_bytes": peer.sizes[operation],
    }


def _ratio(value: float, ours: float) -> str:
    return f"{value / ours:.1f}x" if ours else "n/a"


def render(peers: list[Peer]) -> str:
    ours = peers[0].measured
    rows = [
        "| operation | server (tool) | median ms | p95 ms | answer bytes | median vs ours"
        " | bytes vs ours |",
        "|---|---|---|---|---|---|---|",
    ]
    for operation in OPERATIONS:
        base = ours.get(operation, {})
        for peer in peers:
            m = peer.measured.get(operation)
            if m is None or "median_ms" not in m:
                reason = m.get("error", "not run") if m else "not run"
                rows.append(f"| {operation} | {peer.label} | error: {reason} | | | | |")
                continue
            failed = f" (error: {m['error']})" if "error" in m else ""
            rows.append(
                f"| {operation} | {peer.label} ({m['tool']}){failed} | {m['median_ms']} "
                f"| {m['p95_ms']} | {m['answer_bytes']:,} "
                f"| {_ratio(m['median_ms'], base.get('median_ms', 0))} "
                f"| {_ratio(m['answer_bytes'], base.get('answer_bytes', 0))} |"
            )
    base = ours.get("start", {})
    for label, key in (
        ("start + initialize + list tools", "median_ms"),
        ("first get right after that", "first_call_median_ms"),
        ("first start ever (ours: records its manifest)", "first_ms"),
    ):
        for peer in peers:
            start = peer.measured.get("start") or {}
            if key in start:
                rows.append(
                    f"| {label} | {peer.label} | {start[key]} | | {start['tools']} tools "
                    f"| {_ratio(start[key], base.get(key, 0))} | |"
                )
    return "\n".join(rows)


async def run(
    kubeconfig: Path, tmp: Path, results: dict[str, Any], *, rounds: int = ROUNDS
) -> None:
    peers, skipped = _peers(kubeconfig, tmp)
    for reason in skipped:
        print(f"skipped {reason}", flush=True)
    for peer in peers:
        print(f"{peer.label}: {' '.join(peer.command)}" + (f"  [{peer.note}]" if peer.note else ""))
        for operation, (tool, arguments) in peer.calls.items():
            print(f"  {operation}: {tool} {json.dumps(arguments)}")
    _log(f"  {START_RUNS} starts of each server, in turn ...")
    await _starts(peers)
    _log(f"  {rounds} rounds of each call, servers in turn, after {WARM_UP} warm-up rounds ...")
    await _measure(peers, rounds)
    for peer in peers:
        results[f"peers: {peer.label}"] = peer.measured
    print()
    print(render(peers), flush=True)
    print()
