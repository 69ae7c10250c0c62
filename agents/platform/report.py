"""What the Platform says: egress per namespace (in force or not and why), audit findings with
their evidence and fixes, blueprint drift per namespace, each escalation answered or left and
why; built only from what the tools answered (the steps each delivery recorded as it went).
In a fleet every row is named after its cluster ("east/team-a", `fleet.named`)."""

from __future__ import annotations

from agents.platform.arbitration import Escalations
from agents.platform.audits import Audit
from agents.platform.blueprints import BlueprintSync
from agents.platform.fleet import named
from agents.platform.propagation import Propagation
from agents.platform.workloads import Finding

DELIVERED = {
    "merged": "PR merged and synced",
    "applied": "applied through the gated apply",
    "pr-open": "PR open, not merged",
    "refused": "refused by policy",
    "no-repo": "its repository is not reachable",
    "nothing to do": "already in force",
    "not git-managed": "not managed by a GitOps repository",
    "reported": "reported, not changed",
    "report-only": "report only, no repository",
}


def propagation(done: Propagation) -> str:
    if not done["policies"]:
        return "There is no EgressPolicy in the policy store: nothing to propagate."
    rows = done["namespaces"]
    bad = [r for r in rows if not r["compliant"]]
    head = (
        f"Egress policies {', '.join(done['policies'])} cover {len(rows)} namespace(s)"
        f"{_in(done['clusters'])}: "
        f"{len(rows) - len(bad)} compliant, {len(bad)} not (confirmed from live state)."
    )
    lines = [head]
    for r in rows:
        verdict = "compliant" if r["compliant"] else "NOT compliant"
        via = f"{r['channel']}" + (f" ({r['repo']})" if r["repo"] else "")
        lines.append(
            f"- {named(r['cluster'], r['namespace'])}: {verdict}; "
            f"NetworkPolicy {r['networkpolicy']} was {r['before']}, "
            f"{DELIVERED.get(r['delivered'], r['delivered'])} via {via}"
        )
        lines += [f"    why: {why}" for why in r["why"]]
        lines += [f"    {n}. {step}" for n, step in enumerate(r["steps"], 1)]
        if r["proposal"]:
            lines.append(f"    The owners were told: get_proposal {r['proposal']}.")
    if done["uncovered"]:
        lines.append(f"Not covered (left untouched): {', '.join(done['uncovered'])}.")
    lines += [f"Cannot be enforced by a NetworkPolicy: {line}" for line in done["unrendered"]]
    return "\n".join(lines)


def audit(done: Audit) -> str:
    where = "the fleet" if done["scope"] == "fleet" else f"namespace {done['scope']}"
    found, left, tried = done["findings"], done["remaining"], done["fixes"]
    went = sum(1 for fix in tried if fix["delivered"] in ("merged", "applied"))
    if not tried:
        after = "with no fix tried"
    elif went == len(tried):
        after = f"after {went} fix(es)"
    else:
        after = f"after {len(tried)} fix(es) tried, {went} carried out"
    lines = [
        f"Audit of {where}{_in(done.get('clusters', []))} ({len(done['namespaces'])} "
        f"namespace(s)): {len(found)} finding(s); "
        f"{len(left)} remain, read again from live state {after}."
    ]
    lines += [_finding(f) for f in left]
    for fix in tried:
        pr = f" PR #{fix['pr']}" if fix["pr"] else ""
        writing = f", writing {fix['path']}" if fix["path"] else ""
        lines.append(
            f"Fix for {named(fix.get('cluster', ''), fix['object'])} ({fix['check']}): "
            f"{DELIVERED.get(fix['delivered'], fix['delivered'])}{pr}{writing}"
        )
        lines += [f"    why: {fix['why']}"] if fix["why"] else []
        lines += [f"    {n}. {step}" for n, step in enumerate(fix["steps"], 1)]
    fixed = {(f.get("cluster"), f["object"]) for f in done["fixes"] if f["delivered"] == "merged"}
    gone = [f for f in found if (f.get("cluster"), f["object"]) in fixed and f not in left]
    lines += [f"Fixed (not seen live any more): {_finding(f).strip('- ')}" for f in gone]
    lines += [f"Note: {note}" for note in done["notes"]]
    return "\n".join(lines)


def _finding(f: Finding) -> str:
    how = "fix by PR" if f["fix"] == "pr" else "reported"
    return (
        f"- [{f['severity']}] {f['check']}: {named(f.get('cluster', ''), f['object'])} "
        f"{f['field']} = {f['value']}: {f['message']} ({how})"
    )


def _in(clusters: list[str]) -> str:
    """The words naming a fleet's clusters after a count ("in clusters east, west"); none for
    the one cluster."""
    fleet = [c for c in clusters if c]
    return f" in clusters {', '.join(fleet)}" if fleet else ""


def blueprints(done: BlueprintSync) -> str:
    if not done["blueprints"]:
        return "There is no NamespaceBlueprint in the policy store: nothing to keep in sync."
    rows = done["namespaces"]
    off = [r for r in rows if not r["in_sync"]]
    lines = [
        f"Blueprints {', '.join(done['blueprints'])} cover {len(rows)} namespace(s)"
        f"{_in(done['clusters'])}: "
        f"{len(rows) - len(off)} on the blueprint, {len(off)} not (confirmed from live state)."
    ]
    for r in rows:
        verdict = "on the blueprint" if r["in_sync"] else "NOT on the blueprint"
        pr = f" PR #{r['pr']}" if r["pr"] else ""
        lines.append(
            f"- {named(r['cluster'], r['namespace'])} (team {r['team'] or 'unknown'}, "
            f"{r['channel']}): {verdict}; "
            f"{len(r['drift'])} field(s) drifted; "
            f"{DELIVERED.get(r['delivered'], r['delivered'])}{pr}"
        )
        lines += [f"    drift: {d}" for d in r["drift"]]
        lines += [f"    still: {w}" for w in r["why"]]
        lines += [f"    {n}. {step}" for n, step in enumerate(r["steps"], 1)]
    if done["uncovered"]:
        lines.append(f"No blueprint covers: {', '.join(done['uncovered'])}.")
    return "\n".join(lines)


VERDICTS = {"grant": "granted", "deny": "denied", "left": "left to the people"}


def escalations(done: Escalations) -> str:
    rows = done["requests"]
    others = f"; {done['others']} other(s) wait for people only" if done["others"] else ""
    if not rows:
        return f"No pending escalation names me as the org's arbiter{others}."
    lines = [f"Escalations I may answer: {len(rows)}{others}."]
    for r in rows:
        verdict, answered = VERDICTS[r["verdict"]], r["answered"]
        if r["verdict"] != "left" and answered.startswith("not taken"):
            said = f"{r['verdict']} not recorded: {answered.removeprefix('not taken: ')}"
        elif r["verdict"] == "left" or answered == verdict:
            said = verdict
        else:  # a grant that needs more approvers leaves the request pending
            said = f"{verdict} (the request is now {answered})"
        lines.append(f"- {r['request']} for proposal {r['proposal']} ({r['action']}): {said}")
        lines += [f"    why: {why}" for why in r["reasons"]]
        lines += [f"    cites {c}" for c in r["citations"]]
    return "\n".join(lines)
