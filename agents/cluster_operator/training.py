"""Training and batch pods on a node, and whether their Job has checkpointed.

A pod is training work when a Job owns it or it carries `kubecrew.io/workload-class: training`.
Its Job has checkpointed when its `kubecrew.io/checkpointed-at` annotation (an ISO time, set by
the training code after it saved its state) is at or after the moment the eviction intent was
recorded: a checkpoint from before the intent would lose the work done since.

Policy may allow evicting one mid-run: a ChangePolicy that selects the pod and names `evict`
among its maintenance actions allows it inside its windows (judged by `evaluate_action` at the
cluster's time, the window open and nothing else refusing). Even then the eviction intent names
the pod first (the notice), and the drain evicts it only when that notice was given.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict

import yaml

from agents.runtime.toolbox import Toolbox
from core.policy.documents.change import ChangePolicy

CLASS_LABEL = "kubecrew.io/workload-class"
CHECKPOINT = "kubecrew.io/checkpointed-at"
BATCH_OWNERS = frozenset({"Job"})


class TrainingPod(TypedDict):
    pod: str  # namespace/name
    job: str  # namespace/name of its Job, "" when only the label marks it
    checkpointed_at: str  # the Job's annotation, "" when it has none


async def training_pods(toolbox: Toolbox, pods: list[str]) -> list[TrainingPod]:
    found: list[TrainingPod] = []
    for key in pods:
        namespace, name = key.split("/", 1)
        meta = await _fields(toolbox, "pod", name, namespace, "labels", "ownerReferences")
        owners = meta.get("metadata.ownerReferences") or []
        owner = next((o for o in owners if o.get("kind") in BATCH_OWNERS), None)
        labelled = (meta.get("metadata.labels") or {}).get(CLASS_LABEL) == "training"
        if owner is None and not labelled:
            continue
        job, mark = "", ""
        if owner is not None:
            job = f"{namespace}/{owner['name']}"
            marks = await _fields(toolbox, "job", str(owner["name"]), namespace, "annotations")
            mark = str((marks.get("metadata.annotations") or {}).get(CHECKPOINT, ""))
        found.append(TrainingPod(pod=key, job=job, checkpointed_at=mark))
    return found


async def _fields(
    toolbox: Toolbox, kind: str, name: str, namespace: str, *parts: str
) -> dict[str, Any]:
    return await toolbox.call(
        "get_resource", kind=kind, name=name, namespace=namespace, output="fields",
        fields=[f"metadata.{part}" for part in parts],
    )  # fmt: skip


def checkpointed(pod: TrainingPod, since: datetime) -> bool:
    try:
        at = datetime.fromisoformat(pod["checkpointed_at"])
    except ValueError:
        return False
    return at.tzinfo is not None and at >= since


async def allowed_mid_run(toolbox: Toolbox, pod: TrainingPod, *, at: datetime) -> str:
    """The policy that allows evicting `pod` before its Job checkpoints, now; "" when none does."""
    namespace, name = pod["pod"].split("/", 1)
    judged = await toolbox.call(
        "evaluate_action", action="evict", target=f"pod/{name}", namespace=namespace,
        now=at.isoformat(),
    )  # fmt: skip
    if judged.get("verdict") != "allow" or judged.get("not_before") or judged.get("approvals"):
        return ""
    for line in judged.get("applicable", []):
        kind, _, rest = str(line).partition(" ")
        if kind != "ChangePolicy":
            continue
        policy_name = rest.split(":", 1)[0]
        got = await toolbox.call("get_policy", name=policy_name, kind="ChangePolicy")
        policy = ChangePolicy.model_validate(yaml.safe_load(got["yaml"]))
        maintenance = policy.spec.maintenance
        if maintenance is not None and "evict" in maintenance.actions:
            open_now = [w.name for w in maintenance.windows if w.is_open(at)]
            if open_now:
                return f"ChangePolicy {policy_name} (maintenance window {open_now[0]})"
    return ""
