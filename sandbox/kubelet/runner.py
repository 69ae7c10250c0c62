"""The container lifecycle: pull, create, start, run, exit, restart, as containerd and a kubelet
would do it, one `Run` at a time.

`advance(pod, runtime, now)` moves every container as far as `now` allows and returns the
earliest moment anything will change again (a pull finishing, a backoff ending, a process
exiting, memory crossing the limit, a probe verdict); the pod worker sets one timer for it.
Init containers run one after another to completion first (sidecars, init containers with
`restartPolicy: Always`, only need to have started), then the regular containers together.
Events and log lines are written as transitions happen; what probes do to a running container
is the prober's (`prober.py`). This module decides; `pods.py` reads and writes the API.
"""

from __future__ import annotations

from sandbox.kubelet import config
from sandbox.kubelet.commands import Inside, Plan, interpret
from sandbox.kubelet.containers import NEVER, PodRuntime, Run, container_id
from sandbox.kubelet.dialing import SERVICES, ClusterNetwork
from sandbox.kubelet.environment import container_env
from sandbox.kubelet.filesystem import ContainerFiles
from sandbox.kubelet.images import normalize
from sandbox.kubelet.podstatus import will_restart
from sandbox.kubelet.prober import Ending, Prober
from sandbox.kubelet.profiles import Profile
from sandbox.kubelet.usage import limits, oom_at
from sandbox.kubelet.worker import PodWorker
from sandbox.store import Obj

BACKOFF_START, BACKOFF_MAX = 10.0, 300.0
BACKOFF_RESET = 600.0  # a container that ran this long restarts without waiting
CONFIG_RETRY = 10.0
ERR_IMAGE_PULL_SHOWN = 1.0  # ErrImagePull stays until the next sync turns it into the backoff
FAILED_RESOLVE = 0.8
CACHED_PULL = 0.4  # pull policy Always with the image present: only the manifest is fetched
EXIT_DELAY_MISSING_ENV = 0.5
PULL_FAILURES = ("ErrImagePull", "ImagePullBackOff")  # waiting reasons a retried pull keeps


class ContainerRunner:
    def __init__(self, kubelet: PodWorker) -> None:
        self.kubelet = kubelet
        self.world = kubelet.ctx.world
        self.logs = kubelet.ctx.logs
        self.prober = Prober(kubelet)

    def advance(self, pod: Obj, runtime: PodRuntime, now: float) -> float:
        spec = pod["spec"]
        if not runtime.mounted and not self._mount(pod, runtime, now):
            return runtime.mount_due
        due = NEVER
        containers = {
            c["name"]: c for c in [*(spec.get("initContainers") or ()), *spec["containers"]]
        }
        _sync_runs(runtime, spec)
        for run in runtime.runs.values():
            if not run.init:
                continue
            due = min(due, self._step(pod, runtime, run, containers[run.name], now))
            finished = run.phase == "done" and run.exit_code == 0
            if not (run.started if run.sidecar else finished):
                return due  # the next init container waits for this one
        for run in runtime.runs.values():
            if not run.init:
                due = min(due, self._step(pod, runtime, run, containers[run.name], now))
        return due

    def stop_sidecars(self, pod: Obj, runtime: PodRuntime, now: float) -> None:
        """The pod is over: sidecars are stopped and nothing runs again."""
        for run in runtime.runs.values():
            if run.sidecar and run.phase == "running":
                self.kubelet.pod_event(pod, run, "Killing", f"Stopping container {run.name}")
                self._terminate(run, now, 0, "Completed")
            if run.phase == "exited":
                run.phase, run.due = "done", NEVER

    # -- volumes -------------------------------------------------------------------------------

    def _mount(self, pod: Obj, runtime: PodRuntime, now: float) -> bool:
        namespace = pod["metadata"]["namespace"]
        missing = config.missing_volume(pod["spec"], self.kubelet.lookup(namespace))
        if missing is None:
            runtime.mounted = True
            return True
        if now + 1e-9 < runtime.mount_due:
            return False
        volume, reason = missing
        message = f'MountVolume.SetUp failed for volume "{volume}" : {reason}'
        self.kubelet.pod_event(pod, None, "FailedMount", message, warning=True)
        runtime.mount_backoff = min(max(runtime.mount_backoff * 2, 2.0), 120.0)
        runtime.mount_due = now + runtime.mount_backoff
        return False

    # -- one container -------------------------------------------------------------------------

    def _step(self, pod: Obj, runtime: PodRuntime, run: Run, container: Obj, now: float) -> float:
        for _ in range(12):  # a few transitions can happen in the same instant
            if run.phase == "running":
                due = self._running(pod, run, container, now)
                if run.phase == "running":
                    return due
                continue
            if run.phase == "done":
                return NEVER
            if now + 1e-9 < run.due and not self._config_changed(pod, run, container):
                return run.due
            self._transition(pod, runtime, run, container, now)
        return now + 1.0

    def _config_changed(self, pod: Obj, run: Run, container: Obj) -> bool:
        """A container waiting for its configuration retries as soon as the answer changes."""
        if run.phase != "config-error":
            return False
        namespace = pod["metadata"]["namespace"]
        problem = config.missing_env(container, namespace, self.kubelet.lookup(namespace))
        return problem != run.waiting[1]

    def _transition(
        self, pod: Obj, runtime: PodRuntime, run: Run, container: Obj, now: float
    ) -> None:
        if run.phase == "pull":
            self._pull(pod, runtime, run, container, now)
        elif run.phase == "pulling":
            self._pulled(pod, runtime, run, container, now)
        elif run.phase == "pull-failed":
            self.kubelet.pod_event(
                pod,
                run,
                "Failed",
                f'Failed to pull image "{run.image}": {run.pull_error}',
                warning=True,
            )
            self.kubelet.pod_event(pod, run, "Failed", "Error: ErrImagePull", warning=True)
            run.waiting = ("ErrImagePull", run.pull_error)
            run.pull_backoff = min(run.pull_backoff * 2, BACKOFF_MAX) or BACKOFF_START
            run.phase, run.due = "pull-error", now + ERR_IMAGE_PULL_SHOWN
        elif run.phase == "pull-error":
            self.kubelet.pod_event(pod, run, "BackOff", f'Back-off pulling image "{run.image}"')
            self.kubelet.pod_event(pod, run, "Failed", "Error: ImagePullBackOff", warning=True)
            message = f'Back-off pulling image "{run.image}": ErrImagePull: {run.pull_error}'
            run.waiting = ("ImagePullBackOff", message)
            run.phase, run.due = "pull-backoff", now + run.pull_backoff - ERR_IMAGE_PULL_SHOWN
        elif run.phase in ("pull-backoff", "crash-backoff"):
            run.phase = "pull"
        elif run.phase in ("create", "config-error"):
            self._create(pod, run, container, now)
        elif run.phase == "exited":
            self._exited(pod, run, now)

    def _pull(self, pod: Obj, runtime: PodRuntime, run: Run, container: Obj, now: float) -> None:
        image = str(container.get("image") or "")
        run.image = image
        policy = str(container.get("imagePullPolicy") or "IfNotPresent")
        present = self._present(runtime.node, image)
        if policy == "Never" and not present:
            message = f'Container image "{image}" is not present with pull policy of Never'
            self.kubelet.pod_event(pod, run, "ErrImageNeverPull", message, warning=True)
            run.waiting = ("ErrImageNeverPull", message)
            run.pull_backoff = min(run.pull_backoff * 2, BACKOFF_MAX) or BACKOFF_START
            run.phase, run.due = "pull-backoff", now + run.pull_backoff
            return
        found = self.world.images.resolve(image)
        if present and policy != "Always" and found is not None:
            message = f'Container image "{image}" already present on machine'
            self.kubelet.pod_event(pod, run, "Pulled", message)
            self._use_image(run, image)
            run.phase, run.due = "create", now
            return
        self.kubelet.pod_event(pod, run, "Pulling", f'Pulling image "{image}"')
        if not run.last and run.waiting[0] not in PULL_FAILURES:
            # While it retries, the kubelet keeps reporting the last pull failure (its reason
            # cache): a retried pull never shows ContainerCreating again.
            run.waiting = ("ContainerCreating", "")
        if found is None:
            run.pull_error = _pull_error(image)
            run.phase, run.due = "pull-failed", now + FAILED_RESOLVE
        else:
            seconds = CACHED_PULL if present else found.pull_seconds()
            run.phase, run.due = "pulling", now + seconds
            run.pull_started = now

    def _pulled(self, pod: Obj, runtime: PodRuntime, run: Run, container: Obj, now: float) -> None:
        found = self.world.images.resolve(run.image)
        if found is None:
            run.pull_error = _pull_error(run.image)
            run.phase = "pull-failed"
            return
        took = _go_duration(max(run.due - run.pull_started, 0.0))
        message = (
            f'Successfully pulled image "{run.image}" in {took} ({took} including waiting). '
            f"Image size: {found.size} bytes."
        )
        self.kubelet.pod_event(pod, run, "Pulled", message)
        self.kubelet.images.setdefault(runtime.node, set()).add(found.reference)
        self._use_image(run, run.image)
        run.pull_backoff = 0.0
        run.phase, run.due = "create", now

    def _create(self, pod: Obj, run: Run, container: Obj, now: float) -> None:
        namespace = pod["metadata"]["namespace"]
        problem = config.missing_env(container, namespace, self.kubelet.lookup(namespace))
        if problem is not None:
            self.kubelet.pod_event(pod, run, "Failed", f"Error: {problem}", warning=True)
            run.waiting = ("CreateContainerConfigError", problem)
            run.phase, run.due = "config-error", now + CONFIG_RETRY
            return
        if run.container_id:
            run.restarts += 1
            self.logs.restart(namespace, pod["metadata"]["name"], run.name)
        run.container_id = container_id(pod["metadata"]["uid"], run.name, run.restarts)
        self.kubelet.pod_event(pod, run, "Created", f"Created container: {run.name}")
        plan = run.plan = self._plan(pod, container)
        if plan.start_error:
            self.kubelet.pod_event(pod, run, "Failed", f"Error: {plan.start_error}", warning=True)
            run.started_at = 0.0
            self._terminate(run, now, 128, "StartError", plan.start_error)
            return
        self.kubelet.pod_event(pod, run, "Started", f"Started container {run.name}")
        run.phase, run.started_at, run.due = "running", now, now
        run.epoch, run.probes_seen, run.logged = now, now - 1e-6, -1.0
        run.probe_sig, run.ready, run.started = (), False, False
        profile = self.world.profiles.profile_for(pod, container)
        if plan.own_process:
            for line in profile.startup_log_lines:
                self.logs.append(namespace, pod["metadata"]["name"], run.name, line)
        self.write_script_output(pod, run, plan, 0.0)

    def _plan(self, pod: Obj, container: Obj) -> Plan:
        """What the process does, run against the cluster, the files and the env it has now."""
        lookup = self.kubelet.lookup(pod["metadata"]["namespace"])
        inside = Inside(
            ContainerFiles.of(pod, container, lookup),
            container_env(pod, container, lookup, self.kubelet.list(SERVICES)),
        )
        return interpret(container, ClusterNetwork(self.kubelet, pod), inside)

    def _exited(self, pod: Obj, run: Run, now: float) -> None:
        policy = str(pod["spec"].get("restartPolicy") or "Always")
        if not will_restart(run, policy):
            run.phase, run.due = "done", NEVER
            return
        run.last = run.terminated()
        backoff = run.crash_backoff
        if run.started_at and run.finished_at - run.started_at >= BACKOFF_RESET:
            backoff = 0.0
        run.crash_backoff = min(backoff * 2, BACKOFF_MAX) or BACKOFF_START
        resume = run.last_restart + backoff if backoff else now
        if resume <= now + 1e-9:
            run.last_restart = now
            run.phase, run.due = "pull", now
            return
        meta = pod["metadata"]
        who = f"{meta['name']}_{meta['namespace']}({meta['uid']})"
        run.waiting = (
            "CrashLoopBackOff",
            f"back-off {int(backoff)}s restarting failed container={run.name} pod={who}",
        )
        message = f"Back-off restarting failed container {run.name} in pod {who}"
        self.kubelet.pod_event(pod, run, "BackOff", message, warning=True)
        run.phase, run.due, run.last_restart = "crash-backoff", resume, resume

    # -- a running container -------------------------------------------------------------------

    def _running(self, pod: Obj, run: Run, container: Obj, now: float) -> float:
        if str(container.get("image") or "") != run.image:
            message = f"Container {run.name} definition changed, will be restarted"
            self.kubelet.pod_event(pod, run, "Killing", message)
            self._terminate(run, now, 0, "Completed")
            run.crash_backoff = 0.0
            return now
        profile = self.world.profiles.profile_for(pod, container)
        if run.plan is None:  # started before this kubelet process: its tools run again now
            run.plan = self._plan(pod, container)
        plan = run.plan
        ends = self._ending(pod, run, container, profile, plan)
        verdict = self.prober.verdict(pod, run, container, profile, plan, now)
        moment, code, reason, lines = min([ends, verdict], key=lambda e: e[0])
        if moment <= now + 1e-9:
            self.write_script_output(pod, run, plan, moment - run.started_at)
            namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
            for line in lines:
                self.logs.append(namespace, name, run.name, line)
            if reason == "OOMKilled":
                self._oom_event(pod, run, profile)
            self._terminate(run, now, code, reason)
            return now
        return min(moment, run.next_probe)

    def _ending(self, pod: Obj, run: Run, container: Obj, profile: Profile, plan: Plan) -> Ending:
        """(when, exit code, reason, last lines) of the process ending on its own or by OOM."""
        start = run.started_at
        end: Ending = (NEVER, 0, "", ())
        if plan.own_process:
            if profile.required_env and not self._has_env(pod, container, profile):
                end = (start + EXIT_DELAY_MISSING_ENV, 1, "Error", profile.error_log_lines)
            elif not profile.runs_forever:
                lines = profile.error_log_lines[-1:] if profile.exit_code else ()
                code = profile.exit_code
                end = (start + profile.run_seconds, code, _reason(code), lines)
        elif plan.seconds is not None:
            end = (start + plan.seconds, plan.exit_code, _reason(plan.exit_code), ())
        oom = oom_at(profile, plan, start, limits(container)[1])
        if oom is not None and oom < end[0]:
            end = (oom, 137, "OOMKilled", ())
        return end

    def _has_env(self, pod: Obj, container: Obj, profile: Profile) -> bool:
        lookup = self.kubelet.lookup(pod["metadata"]["namespace"])
        return bool(config.env_names(container, lookup) & set(profile.required_env))

    # -- endings and output --------------------------------------------------------------------

    @staticmethod
    def _terminate(run: Run, now: float, code: int, reason: str, message: str = "") -> None:
        run.phase, run.due = "exited", now
        run.finished_at = now
        run.exit_code, run.term_reason, run.term_message = code, reason, message
        run.ready = run.started = False

    def _oom_event(self, pod: Obj, run: Run, profile: Profile) -> None:
        node = self.kubelet.get(("", "nodes"), "", str(pod["spec"].get("nodeName") or ""))
        if node is None:
            return
        limit = limits(_container(pod, run.name))[1] or profile.memory_bytes
        rss = int(limit // 1024)
        pid = 1000 + int(run.container_id[-4:], 16) % 30000 if run.container_id else 4242
        message = (
            f"Memory cgroup out of memory: Killed process {pid} ({_process(profile)}) "
            f"total-vm:{rss + 12000}kB, anon-rss:{rss}kB, file-rss:0kB, shmem-rss:0kB, "
            f"UID:0 pgtables:{max(rss // 500, 4)}kB oom_score_adj:{_oom_score(pod)}"
        )
        self.kubelet.ctx.events.record(
            node,
            reason="OOMKilling",
            message=message,
            component=self.kubelet.name,
            warning=True,
            host=node["metadata"]["name"],
        )

    def write_script_output(self, pod: Obj, run: Run, plan: Plan, age: float) -> None:
        """Append the lines the command printed after `run.logged` and up to `age` seconds.
        The plan fixed when the container started wins over the caller's: only it holds what
        the command's network tools met."""
        plan = run.plan if run.plan is not None else plan
        namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        for offset, line in plan.lines:
            if run.logged < offset <= age + 1e-9:
                self.logs.append(namespace, name, run.name, line)
        if plan.loop and plan.loop_period and age + 1e-9 >= plan.loop_start:
            logged, into = run.logged - plan.loop_start, age - plan.loop_start
            first = 0 if logged < 0 else int(logged // plan.loop_period) + 1
            last = int((into + 1e-9) // plan.loop_period)
            for _ in range(max(first, last - 19), last + 1):
                for line in plan.loop:
                    self.logs.append(namespace, name, run.name, line)
        run.logged = max(run.logged, age)

    def _present(self, node: str, image: str) -> bool:
        found = self.world.images.resolve(image)
        key = found.reference if found is not None else str(normalize(image))
        return key in self.kubelet.images.get(node, ())

    def _use_image(self, run: Run, image: str) -> None:
        found = self.world.images.resolve(image)
        if found is not None:
            run.image_id, run.status_image = found.image_id, found.reference


def _sync_runs(runtime: PodRuntime, spec: Obj) -> None:
    """A bare pod's image is mutable: a waiting container retries at once with the new one."""
    for container in [*(spec.get("initContainers") or ()), *spec["containers"]]:
        run = runtime.runs.get(container["name"])
        if run is None:
            continue
        image = str(container.get("image") or "")
        if run.image and image != run.image and run.phase in ("pull-error", "pull-backoff"):
            run.phase, run.due, run.pull_backoff = "pull", 0.0, 0.0
            run.waiting = ("ContainerCreating", "")


def _reason(code: int) -> str:
    return "Completed" if code == 0 else "Error"


def _container(pod: Obj, name: str) -> Obj:
    spec = pod["spec"]
    for container in [*(spec.get("initContainers") or ()), *spec["containers"]]:
        if container["name"] == name:
            return dict(container)
    return {}


def _process(profile: Profile) -> str:
    return {"shop-api": "shop-api", "leaky": "leaky-app", "web": "server"}.get(
        profile.name, profile.name
    )


def _oom_score(pod: Obj) -> int:
    qos = (pod.get("status") or {}).get("qosClass")
    return {"Guaranteed": -997, "BestEffort": 1000}.get(str(qos), 968)


def _pull_error(image: str) -> str:
    ref = str(normalize(image))
    return (
        f'rpc error: code = NotFound desc = failed to pull and unpack image "{ref}": '
        f'failed to resolve reference "{ref}": {ref}: not found'
    )


def _go_duration(seconds: float) -> str:
    if seconds < 1.0:
        return f"{round(seconds * 1000)}ms"
    return f"{seconds:.3f}".rstrip("0").rstrip(".") + "s"
