"""A just-in-time prober for one workload: "probe web", "write a prober for checkout".

The checks come from what the cluster says the workload should answer, not from a template:
each port of every Service selecting its pods, through cluster DNS, with each path its
readiness, liveness and startup probes ask for on the container port that Service port targets
("/" where no probe names one), and each probe path once more on one pod directly, so a path
the app does not serve shows as a 404 even when failing readiness left the Service without an
endpoint. They run as a Job (`<workload>-prober-<hash>`, label `kubecrew.io/prober`,
curlimages/curl, non-root, bounded, deleted `TTL_SECONDS` after it ends) whose script prints
one `kubecrew-probe` line per check and exits non-zero when any failed. The Job is written with
the kube server's `apply` after a dry run, so the server's policy gate judges and audits it;
then the task waits on the cluster's clock, reads the logs, and says for each check the URL,
what was expected, what came back and what a failure means, citing the Job and its pod.

Only the prober is created: the workload itself is never changed here.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from typing import Any

import anyio
import yaml

from agents.dev_team import tasks
from agents.runtime.errors import ToolFailed
from agents.runtime.loop.validation import cluster_now
from agents.runtime.toolbox import Toolbox

IMAGE = "curlimages/curl:8.10.1"
LABEL = "kubecrew.io/prober"
MARK = "kubecrew-probe"
TTL_SECONDS = 3600
TIMEOUT = 5  # seconds each request may take (curl -m)
DEADLINE = 120.0  # cluster seconds the Job gets to finish
PROBES = ("readinessProbe", "livenessProbe", "startupProbe")
_LINE = re.compile(rf"^{MARK} id=(c\d+) code=(\d+) exit=(\d+)$")


@dataclass
class Check:
    id: str
    url: str
    why: str  # what the check stands for, in the cluster's words
    path: str
    port: int  # the port dialled (Service port, or container port for a pod check)
    target: int  # the container port the traffic should reach (0: unknown)
    service: str = ""  # empty: straight to a pod
    probe: str = ""  # the probe that asks for this path, if any
    expected: str = "HTTP 2xx or 3xx"
    got: str = "not run"
    passed: bool = False
    meaning: str = ""


@tasks.register("probe")
async def probe(request: tasks.Request) -> tasks.Done:
    toolbox, target = request.toolbox, request.target
    name, namespace = target["name"], target["namespace"]
    workload = await _object(toolbox, target["kind"], name, namespace)
    if workload.get("kind") == "Service":  # "probe web" named the Service: read one of its pods
        one = await _one_pod(toolbox, namespace, _selector(workload))
        workload = await _object(toolbox, "pods", one["name"], namespace) if one else {}
    template = _template(workload)
    services = await _services(toolbox, namespace, template.get("metadata", {}).get("labels", {}))
    pod = await _one_pod(toolbox, namespace, _selector(workload))
    checks = build_checks(name, namespace, template, services, pod)
    if not checks:
        summary = f"{name} in {namespace} exposes no port: no Service selects it and no probe "
        summary += "names an HTTP path, so there is nothing to probe. I created nothing."
        return _answer(summary, {"outcome": "nothing-to-probe", "job": "", "checks": []})
    stamp = str(await cluster_now(toolbox))
    job = job_name(name, checks, stamp)
    manifest = render_job(job, namespace, name, checks)
    try:
        await toolbox.call("apply", manifest=manifest, namespace=namespace, dry_run=True)
        await toolbox.call("apply", manifest=manifest, namespace=namespace)
    except ToolFailed as refused:
        summary = f"I did not run a prober for {name}: writing Job {job} was refused: "
        summary += f"{refused.reason}"
        return _answer(summary, {"outcome": "refused", "job": job, "checks": _rows(checks)})
    state, pod_name, log = await _wait(toolbox, job, namespace, request.settings.poll_seconds)
    read_results(checks, log)
    endpoints = {s["metadata"]["name"]: await _ready_count(toolbox, s, namespace) for s in services}
    for check in checks:
        if not check.passed and check.got != "not run":
            check.meaning = explain(check, template, endpoints)
    return _done(name, namespace, job, pod_name, state, checks)


# -- reading the workload ----------------------------------------------------------------------


async def _object(toolbox: Toolbox, kind: str, name: str, namespace: str) -> dict[str, Any]:
    found = await toolbox.call("get_resource", kind=kind, name=name, namespace=namespace)
    loaded = yaml.safe_load(found["yaml"])
    return loaded if isinstance(loaded, dict) else {}


def _template(workload: dict[str, Any]) -> dict[str, Any]:
    if workload.get("kind") == "Pod":
        return {"metadata": workload.get("metadata") or {}, "spec": workload.get("spec") or {}}
    template = (workload.get("spec") or {}).get("template") or {}
    return template if isinstance(template, dict) else {}


def _selector(workload: dict[str, Any]) -> str:
    spec = workload.get("spec") or {}
    labels = (spec.get("selector") or {}).get("matchLabels") or {}
    if workload.get("kind") == "Service":
        labels = spec.get("selector") or {}
    elif workload.get("kind") == "Pod":
        labels = (workload.get("metadata") or {}).get("labels") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


async def _services(
    toolbox: Toolbox, namespace: str, labels: dict[str, str]
) -> list[dict[str, Any]]:
    """The Services whose selector picks the workload's pods."""
    found = await toolbox.call(
        "list_resources", kind="services", namespace=namespace, output="yaml"
    )
    items = yaml.safe_load(found.get("yaml") or "[]") or []
    chosen = []
    for service in items:
        selector = (service.get("spec") or {}).get("selector") or {}
        if selector and all(labels.get(k) == v for k, v in selector.items()):
            chosen.append(service)
    return sorted(chosen, key=lambda s: str(s["metadata"]["name"]))


async def _one_pod(toolbox: Toolbox, namespace: str, selector: str) -> dict[str, str]:
    """Name and IP of one running pod of the workload (empty when none has an IP yet)."""
    if not selector:
        return {}
    found = await toolbox.call(
        "list_resources",
        kind="pods",
        namespace=namespace,
        label_selector=selector,
        output="fields",
        fields=["status.podIP", "metadata.deletionTimestamp"],
    )
    live = [p for p in found.get("items", []) if p.get("status.podIP")]
    live = [p for p in live if not p.get("metadata.deletionTimestamp")]
    if not live:
        return {}
    first = sorted(live, key=lambda p: str(p["name"]))[0]
    return {"name": str(first["name"]), "ip": str(first["status.podIP"])}


def _container_ports(template: dict[str, Any]) -> dict[str, int]:
    ports: dict[str, int] = {}
    for container in (template.get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or []:
            ports[str(port.get("name") or port["containerPort"])] = int(port["containerPort"])
    return ports


def _number(value: Any, named: dict[str, int]) -> int:
    if isinstance(value, int) or str(value).isdigit():
        return int(value)
    return named.get(str(value), 0)


def _probe_paths(template: dict[str, Any], named: dict[str, int]) -> list[tuple[int, str, str]]:
    """(container port, path, probe) of every httpGet probe."""
    found = []
    for container in (template.get("spec") or {}).get("containers") or []:
        for field in PROBES:
            action = (container.get(field) or {}).get("httpGet")
            if isinstance(action, dict):
                port = _number(action.get("port"), named)
                probe = field.removesuffix("Probe")
                found.append((port, str(action.get("path") or "/"), f"{probe} probe"))
    return found


# -- the checks --------------------------------------------------------------------------------


def build_checks(
    name: str,
    namespace: str,
    template: dict[str, Any],
    services: list[dict[str, Any]],
    pod: dict[str, str],
) -> list[Check]:
    named = _container_ports(template)
    paths = _probe_paths(template, named)
    checks: list[Check] = []
    seen: set[str] = set()

    def add(**fields: Any) -> None:
        if fields["url"] not in seen:
            seen.add(fields["url"])
            checks.append(Check(id=f"c{len(checks) + 1}", **fields))

    for service in services:
        svc = str(service["metadata"]["name"])
        host = f"{svc}.{namespace}.svc.cluster.local"
        for port in (service.get("spec") or {}).get("ports") or []:
            written = port.get("targetPort", port["port"])
            target = _number(written, named)
            shown = f"{written}" if str(written) == str(target) else f"{written} ({target})"
            mine = [(path, probe) for number, path, probe in paths if number == target]
            for path, probe in mine or [("/", "")]:
                add(
                    url=f"http://{host}:{port['port']}{path}",
                    why=f"Service {svc} port {port['port']} -> targetPort {shown}"
                    + (f", the {probe}'s path" if probe else ""),
                    path=path,
                    port=int(port["port"]),
                    target=target,
                    service=svc,
                    probe=probe,
                )
    if pod:
        for number, path, probe in paths:
            add(
                url=f"http://{pod['ip']}:{number}{path}",
                why=f"the {probe} of {name} straight on pod {pod['name']}",
                path=path,
                port=number,
                target=number,
                probe=probe,
            )
    return checks


def job_name(workload: str, checks: list[Check], stamp: str) -> str:
    digest = hashlib.sha256(json.dumps([c.url for c in checks] + [stamp]).encode()).hexdigest()
    return f"{workload[:40].rstrip('-')}-prober-{digest[:6]}"


def render_job(job: str, namespace: str, workload: str, checks: list[Check]) -> str:
    lines = ["rc=0"]
    for check in checks:
        report = f"{MARK} id={check.id} code=%{{http_code}} exit=%{{exitcode}}\\n"
        lines.append(
            f"curl -sS -f -o /dev/null -m {TIMEOUT} --connect-timeout 3 -w '{report}' "
            f"'{check.url}' || rc=1"
        )
    lines.append("exit $rc")
    labels = {LABEL: workload, "app.kubernetes.io/managed-by": "kubecrew"}
    container = {
        "name": "prober",
        "image": IMAGE,
        "command": ["sh", "-c", "\n".join(lines)],
        "resources": {
            "requests": {"cpu": "10m", "memory": "16Mi"},
            "limits": {"cpu": "100m", "memory": "32Mi"},
        },
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
    }
    job_doc = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": job, "namespace": namespace, "labels": labels},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": int(DEADLINE),
            "ttlSecondsAfterFinished": TTL_SECONDS,
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "restartPolicy": "Never",
                    "automountServiceAccountToken": False,
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 100,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [container],
                },
            },
        },
    }
    return yaml.safe_dump(job_doc, sort_keys=False)


# -- running and reading -----------------------------------------------------------------------


async def _wait(toolbox: Toolbox, job: str, namespace: str, poll: float) -> tuple[str, str, str]:
    """(Complete, Failed or "still running", the pod's name, its log) on the cluster's clock."""
    start = await cluster_now(toolbox)
    state = "still running"
    while True:
        found = await toolbox.call(
            "get_resource",
            kind="jobs",
            name=job,
            namespace=namespace,
            output="fields",
            fields=["status.conditions"],
        )
        for condition in found.get("status.conditions") or []:
            if (
                condition.get("type") in ("Complete", "Failed")
                and condition.get("status") == "True"
            ):
                state = str(condition["type"])
        now = await cluster_now(toolbox)
        late = start is None or now is None or (now - start).total_seconds() > DEADLINE
        if state != "still running" or late:
            break
        await anyio.sleep(poll)
    pods = await toolbox.call(
        "list_resources", kind="pods", namespace=namespace, label_selector=f"job-name={job}"
    )
    names = sorted(str(p["name"]) for p in pods.get("items", []))
    if not names:
        return state, "", ""
    log = await toolbox.call("logs", pod=names[-1], namespace=namespace, container="prober")
    return state, names[-1], str(log.get("log") or "")


def read_results(checks: list[Check], log: str) -> None:
    """Each check's outcome from its `kubecrew-probe` line and the curl error before it."""
    by_id = {c.id: c for c in checks}
    error = ""
    for line in log.splitlines():
        match = _LINE.match(line.strip())
        if match is None:
            error = line.strip() if line.strip().startswith("curl: (") else error
            continue
        check = by_id.get(match.group(1))
        if check is None:
            continue
        code, exit_code = int(match.group(2)), int(match.group(3))
        check.passed = exit_code == 0 and 200 <= code < 400
        check.got = f"HTTP {code}" if code else (error or f"no response (curl exit {exit_code})")
        if code and exit_code:
            check.got += f" (curl exit {exit_code})"
        error = ""


async def _ready_count(toolbox: Toolbox, service: dict[str, Any], namespace: str) -> int:
    try:
        found = await _object(toolbox, "endpoints", service["metadata"]["name"], namespace)
    except ToolFailed:
        return 0
    return sum(len(s.get("addresses") or []) for s in found.get("subsets") or [])


def explain(check: Check, template: dict[str, Any], endpoints: dict[str, int]) -> str:
    """What a failed check means, in the cluster's terms."""
    declared = sorted(set(_container_ports(template).values()))
    ports = ", ".join(str(p) for p in declared) or "none"
    asked = f"; the {check.probe} asks for it, so that probe fails too" if check.probe else ""
    if check.got.startswith("HTTP 404"):
        return f"the app answers 404 for {check.path}: it does not serve that path{asked}"
    if check.got.startswith("HTTP 5"):
        return f"the app fails requests to {check.path} ({check.got})"
    if "Could not resolve host" in check.got:
        return f"the name does not resolve: is Service {check.service} in the namespace?"
    if "Timeout was reached" in check.got or "timed out" in check.got:
        return f"no answer within {TIMEOUT} s: a slow app, or port {check.port} is dropped"
    if "Empty reply" in check.got:
        return f"port {check.target} accepts connections but does not speak HTTP"
    if check.service and endpoints.get(check.service, 0) == 0:
        return (
            f"Service {check.service} has no ready endpoint: no pod of it is Ready, so "
            "kube-proxy refuses every connection (see the pods' readiness)"
        )
    if check.service:
        return (
            f"port {check.target} is the Service's targetPort but no container listens there "
            f"(the containers declare {ports})"
        )
    return f"nothing listens on port {check.port} of the pod (the containers declare {ports})"


def _rows(checks: list[Check]) -> list[dict[str, Any]]:
    return [asdict(c) for c in checks]


def _done(
    name: str, namespace: str, job: str, pod: str, state: str, checks: list[Check]
) -> tasks.Done:
    failed = [c for c in checks if not c.passed]
    where = f"Job {job} in {namespace}" + (f" (pod {pod})" if pod else "")
    if state == "still running":
        head = (
            f"The prober {where} for {name} did not finish within {DEADLINE:.0f} s of cluster time."
        )
    elif failed:
        head = f"Probed {name} with {where}: {len(failed)} of {len(checks)} checks failed."
    else:
        head = f"Probed {name} with {where}: all {len(checks)} checks passed."
    rows = []
    for check in checks:
        mark = "passed" if check.passed else "FAILED"
        row = f"- {mark}: {check.url} ({check.why}): expected {check.expected}, got {check.got}"
        rows.append(row + (f". Means: {check.meaning}" if check.meaning else ""))
    tail = (
        f"Evidence: the logs of the Job's pod, one `{MARK}` line per check. I created only "
        f"the prober Job (deleted {TTL_SECONDS} s after it ends) and changed nothing of {name}."
    )
    outcome = "timed-out" if state == "still running" else "failed" if failed else "passed"
    report = {"outcome": outcome, "job": job, "pod": pod, "state": state, "checks": _rows(checks)}
    return _answer("\n".join([head, *rows, tail]), report)


def _answer(summary: str, report: dict[str, Any]) -> tasks.Done:
    return tasks.Done(summary, report)
