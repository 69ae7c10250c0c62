"""The kubelet's prober: what a running container's startup, liveness and readiness probes do
to it between two looks of the pod worker.

`probes.py` solves each probe in time (when it first passes, when failures pile up); this module
applies the verdicts to one `Run`: whether it has started and is ready, the `Unhealthy` events
of the probes that failed since the last look, the `Killing` event and the kill a failed
startup or liveness probe brings, and `next_probe`, the next moment a probe changes anything.
A changed answer (a fault altered the profile) restarts the reckoning at a new epoch. Events
go through the pod kubelet; nothing else is written.
"""

from __future__ import annotations

from typing import Any

from sandbox.kubelet.commands import Plan
from sandbox.kubelet.containers import NEVER, Run
from sandbox.kubelet.probes import TITLES, Outcome, ProbeKind, outcome, probe_of, schedule
from sandbox.kubelet.profiles import Profile
from sandbox.kubelet.worker import PodWorker
from sandbox.store import Obj

# How a container ends: (when, exit code, reason, last log lines).
Ending = tuple[float, int, str, tuple[str, ...]]


class Prober:
    def __init__(self, kubelet: PodWorker) -> None:
        self.kubelet = kubelet

    def verdict(
        self, pod: Obj, run: Run, container: Obj, profile: Profile, plan: Plan, now: float
    ) -> Ending:
        """Update `started`/`ready` and write Unhealthy events; returns a kill, if one is due."""
        ip = self.kubelet.pods[(pod["metadata"]["namespace"], pod["metadata"]["name"])].pod_ip
        outcomes: dict[ProbeKind, tuple[dict[str, Any], Outcome]] = {}
        for kind in ("startup", "liveness", "readiness"):
            probe = probe_of(container, kind)
            if probe is not None:
                outcomes[kind] = (probe, outcome(probe, container, profile, plan, ip))
        signature = tuple((k, o) for k, (_, o) in outcomes.items())
        if signature != run.probe_sig:
            if run.probe_sig:
                run.epoch, run.ready_at_epoch = now, run.ready
            run.probe_sig = signature
        start = run.started_at
        run.next_probe = NEVER
        started_at, kill = self._startup(pod, run, outcomes.get("startup"), now)
        if kill[0] <= now + 1e-9:
            return kill
        run.started = started_at is not None and started_at <= now + 1e-9
        if started_at is None or not run.started:
            run.ready = False
            _later(run, started_at, now)
            run.probes_seen = now
            return kill
        epoch = max(run.epoch, started_at)
        if "liveness" in outcomes:
            probe, result = outcomes["liveness"]
            plan_l = schedule(probe, start=start, base=started_at)
            failed = plan_l.failed_at(result, epoch)
            self._unhealthy(pod, run, "liveness", plan_l, result, epoch, min(now, failed or now))
            if failed is not None:
                if failed <= now + 1e-9:
                    self._killing(pod, run, "liveness")
                kill = min(kill, (failed, 137, "Error", ()), key=lambda k: k[0])
        if "readiness" in outcomes:
            probe, result = outcomes["readiness"]
            plan_r = schedule(probe, start=start, base=started_at)
            self._unhealthy(pod, run, "readiness", plan_r, result, epoch, now)
            if run.ready_at_epoch and run.epoch > started_at:
                lost = plan_r.failed_at(result, epoch)
                run.ready = lost is None or lost > now + 1e-9
                _later(run, lost, now)
            else:
                became = plan_r.passed_at(result, epoch)
                run.ready = became is not None and became <= now + 1e-9
                _later(run, became, now)
        else:
            run.ready = True
        run.probes_seen = now
        return kill

    def _startup(
        self, pod: Obj, run: Run, found: tuple[dict[str, Any], Outcome] | None, now: float
    ) -> tuple[float | None, Ending]:
        """(when the startup probe passed or will, a kill if it never will in time)."""
        start = run.started_at
        if found is None:
            return start, (NEVER, 0, "", ())
        probe, result = found
        plan = schedule(probe, start=start, base=start)
        passed, failed = plan.passed_at(result, start), plan.failed_at(result, start)
        if failed is not None and (passed is None or failed < passed):
            self._unhealthy(pod, run, "startup", plan, result, start, min(now, failed))
            if failed <= now + 1e-9:
                self._killing(pod, run, "startup")
            return None, (failed, 137, "Error", ())
        self._unhealthy(pod, run, "startup", plan, result, start, now)
        return passed, (NEVER, 0, "", ())

    def _unhealthy(
        self,
        pod: Obj,
        run: Run,
        kind: ProbeKind,
        plan: Any,
        result: Outcome,
        epoch: float,
        until: float,
    ) -> None:
        for moment in plan.failures(result, run.probes_seen, until, epoch):
            why = result.why(moment - run.started_at)
            message = f"{TITLES[kind]} probe failed: {why}"
            self.kubelet.pod_event(pod, run, "Unhealthy", message, warning=True)
        upcoming = plan.next_failure(result, max(until, run.probes_seen), epoch)
        _later(run, upcoming, until)

    def _killing(self, pod: Obj, run: Run, kind: ProbeKind) -> None:
        message = f"Container {run.name} failed {kind} probe, will be restarted"
        self.kubelet.pod_event(pod, run, "Killing", message)


def _later(run: Run, moment: float | None, now: float) -> None:
    """Remember `moment` as the next time probes change something, if it is still to come."""
    if moment is not None and moment > now + 1e-9:
        run.next_probe = min(run.next_probe, moment)
