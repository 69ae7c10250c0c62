"""What a person reads of an upgrade or a patch roll (`upgrading`): the release a request
names, the plan asked back, a refusal with its reasons, and each pass's steps and where it
waits. Text only: it reads the records `upgrading` keeps and changes nothing.
"""

from __future__ import annotations

import re

from agents.cluster_operator.upgrades import Minor, Readiness
from agents.cluster_operator.upgrading import Pass, Record, where


def release_in(question: str, current: str = "") -> str:
    """The release an upgrade asked in words ends at: "1.38" is v1.38.0, "v1.38.2" itself; no
    version named: the next minor after `current`."""
    named = re.search(r"\bv?(\d+)\.(\d{1,2})(?:\.(\d+))?\b", question)
    if named:
        return f"v{named.group(1)}.{named.group(2)}.{named.group(3) or 0}"
    now = Minor.parse(current)
    return f"v{now.major}.{now.minor + 1}.0" if now else ""


def said_plan(record: Record, found: Readiness) -> str:
    """The upgrade about to start, asked back."""
    lines = [f"Ready to upgrade {found['current']} to {record['target']}. The plan:"]
    if record["control_plane"]:
        lines.append(f"1. the control plane ({record['control_plane']}) first;")
    first = 2 if record["control_plane"] else 1
    for n, wave in enumerate(record["waves"], start=first):
        canary = " (the canary)" if n == first else ""
        lines.append(f"{n}. pool {wave['pool']}{canary}, from {wave['before']}, one "
                     "machine at a time inside its maintenance window;")  # fmt: skip
    warnings = [f for f in found["findings"] if f["severity"] == "warning"]
    if warnings:
        lines.append("Warnings: " + "; ".join(f"{f['what']}: {f['why']}" for f in warnings) + ".")
    lines.append(
        "Each node is drained through the Eviction API (no PodDisruptionBudget broken, training "
        "Jobs kept until they checkpoint) after its owners are told; a wave whose new node "
        "does not come up Ready, or after which workloads are worse off than before it began, "
        "is rolled back. Reply 'yes' to start, anything else to leave "
        "the cluster as it is."
    )
    return "\n".join(lines)


def said_refused(found: Readiness, refusals: list[str]) -> str:
    head = f"Not started: the upgrade of {found['current'] or 'the cluster'} to {found['target']} "
    lines = [head + "cannot begin. Nothing was changed."]
    lines += [f"- {why}" for why in refusals]
    return "\n".join(lines)


def said_pass(done: Pass) -> str:
    record = done["record"]
    if record is None:
        return "No cluster upgrade is in progress. Nothing was changed."
    if record["purpose"] == "patch":
        what = f"The patch roll of PatchPolicy {record['target']}"
        head = {
            "done": f"{what} is done: every pool it covers runs its template.",
            "rolled-back": f"{what} was stopped and its last wave rolled back.",
        }.get(record["state"], f"{what}: {where(record, done)}.")
    else:
        head = {
            "done": f"The cluster is upgraded to {record['target']}: the control plane and "
            "every pool.",
            "rolled-back": f"The upgrade to {record['target']} was stopped and its last wave "
            "rolled back.",
        }.get(record["state"], f"Upgrading to {record['target']}: {where(record, done)}.")
    lines = [head, *(f"- {step}" for step in done["steps"])]
    if done["waiting"] and record["state"] not in ("done", "rolled-back"):
        also = " or when you say 'continue the upgrade'" if record["purpose"] == "upgrade" else ""
        lines.append(f"Waiting: {done['waiting']}. I carry on at the next patrol{also}.")
    return "\n".join(lines)
