"""What the Platform says about egress: per namespace, in force or not and why, built only from
what the tools answered (the steps each delivery recorded as it went)."""

from __future__ import annotations

from agents.platform.propagation import Propagation

DELIVERED = {
    "merged": "PR merged and synced",
    "applied": "applied through the gated apply",
    "pr-open": "PR open, not merged",
    "refused": "refused by policy",
    "no-repo": "its repository is not reachable",
    "nothing to do": "already in force",
}


def propagation(done: Propagation) -> str:
    if not done["policies"]:
        return "There is no EgressPolicy in the policy store: nothing to propagate."
    rows = done["namespaces"]
    bad = [r for r in rows if not r["compliant"]]
    head = (
        f"Egress policies {', '.join(done['policies'])} cover {len(rows)} namespace(s): "
        f"{len(rows) - len(bad)} compliant, {len(bad)} not (confirmed from live state)."
    )
    lines = [head]
    for r in rows:
        verdict = "compliant" if r["compliant"] else "NOT compliant"
        via = f"{r['channel']}" + (f" ({r['repo']})" if r["repo"] else "")
        lines.append(
            f"- {r['namespace']}: {verdict}; NetworkPolicy {r['networkpolicy']} was {r['before']}, "
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
