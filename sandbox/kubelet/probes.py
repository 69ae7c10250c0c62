"""Startup, liveness and readiness probes, answered by the application's profile and solved in time.

A real kubelet runs each probe every `periodSeconds`. Simulated, a probe's answer is a step
function of the container's age: it fails until the application listens (`startup_seconds` of
its profile) and passes from then on, or it never passes (a port the app does not listen on, a
path it does not serve, `exit 1`, an app whose `latency_ms` reaches the probe's
`timeoutSeconds`). A slow app fails HTTP and gRPC probes, which wait for its answer, with the
kubelet's timeout message; it passes TCP probes, which only need the kernel's handshake.
`Outcome` captures that step, and `Schedule` turns it into the moments that matter: when
readiness is first reached, when `failureThreshold` consecutive failures have piled up, which
probes failed in a window (the `Unhealthy` events). The kubelet sets a timer for the next such
moment instead of probing every period.

An `epoch` restarts the reckoning when the answer changes (a fault altered the profile): only
probes at or after it count. This module knows profiles and container specs; it writes nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from sandbox.kubelet.commands import Plan, run_argv
from sandbox.kubelet.profiles import Profile

ProbeKind = Literal["startup", "liveness", "readiness"]
FIELDS: dict[ProbeKind, str] = {
    "startup": "startupProbe",
    "liveness": "livenessProbe",
    "readiness": "readinessProbe",
}
TITLES: dict[ProbeKind, str] = {
    "startup": "Startup",
    "liveness": "Liveness",
    "readiness": "Readiness",
}
_EPS = 1e-6


@dataclass(frozen=True)
class Outcome:
    ok_after: float | None  # container age from which the probe passes; None: never
    message: str  # why it fails once the app is up (when ok_after is None)
    early_message: str  # why it fails before the app listens

    def failing(self, age: float) -> bool:
        return self.ok_after is None or age < self.ok_after - _EPS

    def why(self, age: float) -> str:
        if self.ok_after is None and age >= 0 and self.message:
            return self.message
        return self.early_message


@dataclass(frozen=True)
class Schedule:
    start: float  # when the container started (ages are measured from it)
    first: float  # when the first probe runs
    period: float
    success: int
    failure: int

    def at(self, index: int) -> float:
        return self.first + index * self.period

    def index(self, moment: float) -> int:
        """The first probe at or after `moment`."""
        return max(0, math.ceil((moment - self.first) / self.period - _EPS))

    def index_after(self, moment: float) -> int:
        """The first probe strictly after `moment`."""
        index = self.index(moment)
        while self.at(index) <= moment + _EPS:
            index += 1
        return index

    def passed_at(self, outcome: Outcome, epoch: float) -> float | None:
        """When `successThreshold` passing probes in a row have run, counting from `epoch`."""
        if outcome.ok_after is None:
            return None
        first_pass = self.index(max(epoch, self.start + outcome.ok_after))
        return self.at(first_pass + self.success - 1)

    def failed_at(self, outcome: Outcome, epoch: float) -> float | None:
        """When `failureThreshold` failing probes in a row have run from `epoch`, if they do."""
        last = self.index(epoch) + self.failure - 1
        # answers only ever go from failing to passing, so a failing last one means all failed
        return self.at(last) if outcome.failing(self.at(last) - self.start) else None

    def failures(self, outcome: Outcome, after: float, until: float, epoch: float) -> list[float]:
        """Moments of failing probes in (after, until], from `epoch` on (at most a few)."""
        found: list[float] = []
        index = max(self.index_after(after), self.index(epoch))
        while len(found) < 3 and (moment := self.at(index)) <= until + _EPS:
            if not outcome.failing(moment - self.start):
                break
            found.append(moment)
            index += 1
        return found

    def next_failure(self, outcome: Outcome, after: float, epoch: float) -> float | None:
        moment = self.at(max(self.index_after(after), self.index(epoch)))
        return moment if outcome.failing(moment - self.start) else None


def probe_of(container: dict[str, Any], kind: ProbeKind) -> dict[str, Any] | None:
    probe = container.get(FIELDS[kind])
    return probe if isinstance(probe, dict) else None


def schedule(probe: dict[str, Any], *, start: float, base: float) -> Schedule:
    """`base`: when probing may begin (container start, or startup probe success)."""
    return Schedule(
        start=start,
        first=base + float(probe.get("initialDelaySeconds") or 0),
        period=max(float(probe.get("periodSeconds") or 10), 1.0),
        success=max(int(probe.get("successThreshold") or 1), 1),
        failure=max(int(probe.get("failureThreshold") or 3), 1),
    )


def outcome(
    probe: dict[str, Any], container: dict[str, Any], profile: Profile, plan: Plan, pod_ip: str
) -> Outcome:
    listening = _listening(profile, plan)
    startup = profile.startup_seconds if plan.own_process else 0.0
    if isinstance(probe.get("exec"), dict):
        result = run_argv([str(a) for a in probe["exec"].get("command") or ()])
        if result.start_error or result.seconds is None or result.exit_code != 0:
            output = "\n".join(line for _, line in result.lines)
            if result.seconds is None:
                output = f"command timed out after {probe.get('timeoutSeconds') or 1}s"
            return Outcome(None, output or "", output or "")
        return Outcome(0.0, "", "")
    for kind in ("httpGet", "tcpSocket", "grpc"):
        action = probe.get(kind)
        if not isinstance(action, dict):
            continue
        port = _port(action.get("port"), container)
        address = f"{pod_ip}:{port}"
        refused = f"dial tcp {address}: connect: connection refused"
        timeout = probe.get("timeoutSeconds") or 1
        slow = plan.own_process and profile.serves(port) and profile.latency_ms >= timeout * 1000
        if kind == "grpc":
            refused = (
                f'timeout: failed to connect service "{address}" within '
                f"{timeout}s: context deadline exceeded"
            )
            if slow and port in listening:
                late = f"timeout: health rpc did not complete within {timeout}s"
                return Outcome(None, late, refused)
        if kind == "httpGet":
            scheme = str(action.get("scheme") or "HTTP").lower()
            path = str(action.get("path") or "/")
            url = f"{scheme}://{address}{path}"
            refused = f'Get "{url}": {refused}'
            if port not in listening:
                return Outcome(None, refused, refused)
            if path.split("?", 1)[0] not in _paths(profile, plan):
                return Outcome(None, "HTTP probe failed with statuscode: 404", refused)
            if slow:
                late = (
                    f'Get "{url}": context deadline exceeded '
                    "(Client.Timeout exceeded while awaiting headers)"
                )
                return Outcome(None, late, refused)
            return Outcome(startup, "", refused)
        return Outcome(startup if port in listening else None, refused, refused)
    return Outcome(0.0, "", "")


def _listening(profile: Profile, plan: Plan) -> set[int]:
    return set(profile.ports if plan.own_process else ()) | set(plan.ports)


def _paths(profile: Profile, plan: Plan) -> set[str]:
    return set(profile.http_paths if plan.own_process else ()) | ({"/"} if plan.ports else set())


def _port(value: Any, container: dict[str, Any]) -> int:
    if isinstance(value, int):
        return value
    text = str(value or "")
    if text.isdigit():
        return int(text)
    for port in container.get("ports") or ():
        if port.get("name") == text:
            return int(port.get("containerPort") or 0)
    return -1
