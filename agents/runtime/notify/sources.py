"""The cluster's own signal sources, both through the kube server's tools: watch and patrol.

- `watch`: `watch_events` in a loop, resuming from the resourceVersion each call returns (the
  first call lists the Warning events already there, which is how a restarted watcher finds the
  incidents it already knows, and merges them). One loop per namespace, or one for the cluster.
- `patrol`: `diagnose` every `every` seconds: finds what raises no event (a Service selecting no
  pod, a node under pressure, a condition that stays false), and resolves the incidents of its
  scope whose workload it no longer finds anything wrong with (not one being handled or waiting
  for a person: its heal says how it ends). After each pass it calls `after_pass` (the healer
  resuming heals whose approval was answered).

A cluster that stops answering is reported once per outage and retried with a backoff, never a
crash: a watcher must outlive a restarting API server.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import anyio

from agents.runtime.errors import ToolFailed
from agents.runtime.notify.desk import Desk, Say
from agents.runtime.notify.signals import Signal, from_event, from_finding
from agents.runtime.toolbox import Toolbox

RETRY_S = (1.0, 2.0, 5.0, 10.0, 30.0)


def scopes(namespaces: Sequence[str]) -> list[str | None]:
    return list(namespaces) or [None]


async def watch(toolbox: Toolbox, desk: Desk, namespace: str | None, *, wait_s: int = 10) -> None:
    version = ""
    failures = 0
    while True:
        try:
            answer = await toolbox.call(
                "watch_events",
                namespace=namespace,
                resource_version=version,
                timeout_seconds=wait_s,
            )
        except ToolFailed as exc:
            failures = await _backoff(desk.say, f"watch of {_where(namespace)}", exc, failures)
            version = ""  # relist: the history may be gone by the time it answers again
            continue
        if failures:
            desk.say(f"watch of {_where(namespace)} is back")
            failures = 0
        version = str(answer.get("resource_version") or "")
        for item in answer.get("items") or []:
            if not (item.get("owner") or {}).get("gone"):  # a deleted pod's old complaint
                await desk.take(from_event(item))


AfterPass = Callable[[], Awaitable[None]]


async def patrol(
    toolbox: Toolbox,
    desk: Desk,
    namespace: str | None,
    *,
    every_s: float,
    after_pass: AfterPass | None = None,
) -> None:
    failures = 0
    while True:
        try:
            answer = await toolbox.call(
                "diagnose", namespace=namespace, min_severity="high", limit=100
            )
        except ToolFailed as exc:
            failures = await _backoff(desk.say, f"patrol of {_where(namespace)}", exc, failures)
            continue
        failures = 0
        # Findings come worst first; one per subject, so a crash loop's consequences (the
        # Deployment unavailable) do not open incidents of their own.
        worst: dict[tuple[str, str, str], Signal] = {}
        for finding in answer.get("findings") or []:
            signal = from_finding(finding)
            worst.setdefault((signal.kind, signal.namespace, signal.name), signal)
        for signal in worst.values():
            await desk.take(signal)
        if not answer.get("partial"):  # a blind spot proves nothing healthy
            _resolve_quiet(desk, namespace, set(worst))
        if after_pass is not None:
            await after(desk.say, after_pass)
        await anyio.sleep(every_s)


async def after(say: Say, hook: AfterPass) -> None:
    """Run the after-pass hook; its failure is logged, and the patrol goes on."""
    try:
        await hook()
    except Exception as exc:
        say(f"after the patrol pass: {exc}")


def _resolve_quiet(desk: Desk, namespace: str | None, failing: set[tuple[str, str, str]]) -> None:
    """Resolve the cluster-sourced incidents in scope whose subject has no finding now.
    Alerts are resolved by Alertmanager only: it knows its rules, the patrol does not."""
    for incident in desk.incidents.unresolved():
        if incident.source == "alertmanager" or incident.state in ("handling", "waiting"):
            continue
        if namespace is not None and incident.namespace != namespace:
            continue
        if (incident.kind, incident.namespace, incident.name) not in failing:
            desk.resolve(incident.fingerprint, why="the patrol finds nothing wrong with it now")


async def _backoff(say: Say, what: str, exc: ToolFailed, failures: int) -> int:
    if failures == 0:
        say(f"{what} failed, retrying: {exc.reason}")
    await anyio.sleep(RETRY_S[min(failures, len(RETRY_S) - 1)])
    return failures + 1


def _where(namespace: str | None) -> str:
    return f"namespace {namespace}" if namespace else "the cluster"
