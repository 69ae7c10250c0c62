"""Training and batch pods on a node, and whether their Job has checkpointed.

A pod is training work when a Job owns it or it carries `kubecrew.io/workload-class: training`.
Its Job has checkpointed when its `kubecrew.io/checkpointed-at` annotation (an ISO time, set by
the training code after it saved its state) is at or after the moment the eviction intent was
recorded: a checkpoint from before the intent would lose the work done since.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict

from agents.runtime.toolbox import Toolbox

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
