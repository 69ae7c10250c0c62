"""Which workloads lack something or do something risky, read from their pod templates.

Each check looks at a Deployment's, StatefulSet's or DaemonSet's pod template and says, per
container, what is missing or risky: no cpu or memory limit (or request); no probe at all, or
no readiness, liveness or startup probe; an image on `:latest` (or with no tag, which means
it); a privileged container; and running as root. Root is judged from the securityContext:
`runAsUser: 0` runs as root for sure; with neither `runAsNonRoot: true` nor a non-zero
`runAsUser`, nothing stops it, and the image's USER (which no API shows) decides, so those are
listed apart as "may run as root". A missing PodDisruptionBudget is judged for Deployments and
StatefulSets against the budgets of their namespace (a budget selects pods by labels; a
DaemonSet's pods are not evicted by drains, so it needs none).

Must not know: any agent; the cluster only through the toolbox's read tools.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import ValidationError

from agents.runtime.questions.asked import Answered, Inventory
from agents.runtime.questions.evidence import Evidence, Json, cite, finish, unanswered, where
from core.policy.documents.selectors import LabelSelector

WORKLOAD_FIELDS = ["spec.template.spec", "spec.template.metadata.labels"]
_KINDS = {"deployments": "Deployment", "statefulsets": "StatefulSet", "daemonsets": "DaemonSet"}
_SAYS = {
    "limits": "have no limits",
    "requests": "have no requests",
    "probes": "have no probes",
    "readiness": "have no readiness probe",
    "liveness": "have no liveness probe",
    "startup": "have no startup probe",
    "pdb": "have no PodDisruptionBudget",
    "root": "run as root",
    "latest": "use the :latest tag",
    "privileged": "run privileged",
}
_NONE = {
    "limits": "lacks limits",
    "requests": "lacks requests",
    "probes": "lacks probes",
    "readiness": "lacks a readiness probe",
    "liveness": "lacks a liveness probe",
    "startup": "lacks a startup probe",
    "pdb": "lacks a PodDisruptionBudget",
    "root": "runs as root",
    "latest": "uses the :latest tag",
    "privileged": "runs privileged",
}
_NAMED = {"deployments": "Deployments", "statefulsets": "StatefulSets", "daemonsets": "DaemonSets"}


async def check_workloads(evidence: Evidence, question: Inventory) -> Answered:
    ns, check = question.namespace, question.check or "limits"
    kinds = list(_KINDS) if question.kind == "workloads" else [question.kind]
    if check == "pdb":
        kinds = [k for k in kinds if k != "daemonsets"] or ["deployments"]
    workloads: list[Json] = []
    for plural in kinds:
        scan = await evidence.scan(
            plural, f"{plural} {where(ns)}", namespace=ns, fields=WORKLOAD_FIELDS
        )
        workloads += [{**w, "kind": _KINDS.get(plural, plural)} for w in scan.items] if scan else []
    if not workloads and evidence.unseen:
        return unanswered(evidence, "inventory", f"which workloads {_SAYS[check]}")
    finder = await _finder(evidence, check, ns)
    found = [(w, problems) for w in workloads if (problems := finder(w))]
    sure = [(w, p) for w, p in found if not p[0].startswith("may ")]
    unsure = [(w, p) for w, p in found if p[0].startswith("may ")]
    rows = [_row(w, p) for w, p in (sure + unsure)[: question.count]]
    named = "workloads" if len(kinds) > 1 else _NAMED.get(kinds[0], kinds[0])
    head = (
        f"{len(sure)} of {len(workloads)} {named} {where(ns)} {_SAYS[check]}:"
        if sure
        else f"None of the {len(workloads)} {named} {where(ns)} {_NONE[check]}."
    )
    lines = [f"- {r['object']}: {'; '.join(r['problems'])}" for r in rows]
    if unsure:
        lines.append(
            f"{len(unsure)} more may run as root: nothing in their securityContext forbids it, "
            "and the image's USER, which decides, is not visible to me."
        )
    if len(found) > len(rows):
        lines.append(f"(and {len(found) - len(rows)} more; ask for more with a number)")
    basis = f"read the pod templates of {len(workloads)} {named}"
    return finish(
        evidence,
        "inventory",
        head,
        lines,
        basis,
        rows=rows,
        total=len(found),
        topic="check",
        check=check,
        namespace=ns,
    )


def _row(workload: Json, problems: list[str]) -> Json:
    ref = cite(workload["kind"], workload["name"], workload.get("namespace", ""))
    return {
        "object": ref,
        "kind": workload["kind"],
        "name": workload["name"],
        "namespace": workload.get("namespace", ""),
        "problems": problems,
    }


async def _finder(
    evidence: Evidence, check: str, namespace: str | None
) -> Callable[[Json], list[str]]:
    if check == "pdb":
        budgets = await _budgets(evidence, namespace)
        return lambda w: _no_budget(w, budgets)
    per_container = {
        "limits": lambda c: _missing(c, "limits"),
        "requests": lambda c: _missing(c, "requests"),
        "probes": lambda c: (
            ["no probes"]
            if not any(c.get(f"{p}Probe") for p in ("readiness", "liveness", "startup"))
            else []
        ),
        "readiness": lambda c: [] if c.get("readinessProbe") else ["no readiness probe"],
        "liveness": lambda c: [] if c.get("livenessProbe") else ["no liveness probe"],
        "startup": lambda c: [] if c.get("startupProbe") else ["no startup probe"],
        "latest": lambda c: [f"image {c.get('image')}"] if _latest(str(c.get("image"))) else [],
        "privileged": lambda c: (
            ["privileged"] if (c.get("securityContext") or {}).get("privileged") else []
        ),
    }
    if check == "root":
        return _root
    each: Callable[[Json], list[str]] = per_container[check]
    return lambda w: [
        f"container {c.get('name')}: {', '.join(found)}"
        for c in _containers(w)
        if (found := each(c))
    ]


def _containers(workload: Json) -> list[Json]:
    spec = workload.get("spec.template.spec") or {}
    return [c for c in spec.get("containers") or [] if isinstance(c, dict)]


def _missing(container: Json, field: str) -> list[str]:
    held = (container.get("resources") or {}).get(field) or {}
    lacking = [r for r in ("cpu", "memory") if r not in held]
    return [f"no {' or '.join(lacking)} {field[:-1]}"] if lacking else []


def _latest(image: str) -> bool:
    if "@" in image:
        return False  # pinned by digest
    last = image.rsplit("/", 1)[-1]
    return ":" not in last or last.endswith(":latest")


def _root(workload: Json) -> list[str]:
    spec = workload.get("spec.template.spec") or {}
    pod = spec.get("securityContext") or {}
    sure: list[str] = []
    maybe: list[str] = []
    for container in _containers(workload):
        own = container.get("securityContext") or {}
        user = own.get("runAsUser", pod.get("runAsUser"))
        non_root = own.get("runAsNonRoot", pod.get("runAsNonRoot"))
        name = container.get("name")
        if user == 0 or own.get("privileged"):
            sure.append(f"container {name}: " + ("runAsUser 0" if user == 0 else "privileged"))
        elif user is None and non_root is not True:
            maybe.append(
                f"may run as root: container {name} sets neither runAsNonRoot nor runAsUser"
            )
    return sure or maybe


async def _budgets(evidence: Evidence, namespace: str | None) -> list[tuple[str, LabelSelector]]:
    scan = await evidence.scan(
        "poddisruptionbudgets",
        f"PodDisruptionBudgets {where(namespace)}",
        namespace=namespace,
        fields=["spec.selector"],
    )
    budgets = []
    for item in scan.items if scan else []:
        try:
            selector = LabelSelector.model_validate(item.get("spec.selector") or {})
        except ValidationError:
            continue  # a selector the API server would refuse selects nothing here
        if item.get("spec.selector") is not None:
            budgets.append((str(item.get("namespace", "")), selector))
    return budgets


def _no_budget(workload: Json, budgets: list[tuple[str, LabelSelector]]) -> list[str]:
    labels = workload.get("spec.template.metadata.labels") or {}
    namespace = workload.get("namespace", "")
    if any(ns == namespace and s.matches(labels) for ns, s in budgets):
        return []
    return ["no PodDisruptionBudget selects its pods"]
