"""Access answers: who may do what, may one subject do it, and everything a subject may do.

The kube server's `access_review` evaluates the cluster's RBAC objects (the answer cites each
binding and role that grants); this module words its answer. For one of the crew's agents the
answer joins two sources: what its role file (`AGENTS.md`) lets it call, and what its
ServiceAccount's RBAC lets those calls do. Which ServiceAccount is the agent's is read from its
bindings (labelled `kubecrew.io/agent`), so a crew installed in another namespace is found too.

Group members are never listed: RBAC does not say who is in a group. The person asking ("can
I ...") is not someone the crew can name; the answer says so and lists who may.

Must not know: any agent's code; the cluster only through the toolbox's read tools.
"""

from __future__ import annotations

from dataclasses import replace

from agents.runtime.identity import service_account
from agents.runtime.questions.asked import Access, Answered
from agents.runtime.questions.evidence import Evidence, Json, finish, unanswered, where
from agents.runtime.questions.subjects import ME
from agents.runtime.roles import load_role

AGENT_LABEL = "kubecrew.io/agent"
DEFAULT_HOME = "kubecrew-system"
# The Kubernetes call each of the kube server's typed write tools makes, to check it against
# the agent's RBAC (apply, patch and delete act on any kind: RBAC decides per object).
WRITE_CALLS = {
    "scale": ("patch", "deployments"),
    "set_image": ("patch", "deployments"),
    "rollout_undo": ("patch", "deployments"),
    "rollout_restart": ("patch", "deployments"),
    "set_resources": ("patch", "deployments"),
    "cordon": ("patch", "nodes"),
    "uncordon": ("patch", "nodes"),
    "taint": ("patch", "nodes"),
    "drain": ("create", "pods/eviction"),
}
SHOWN = 15  # subjects named in the text; the data holds every one read
GROUPS = "group members are not listed: RBAC does not say who is in a group"


async def answer(evidence: Evidence, question: Access) -> Answered:
    if question.subject.startswith("agent:"):
        agent = question.subject.partition(":")[2]
        if question.topic != "may":
            return await _agent(evidence, question, agent)
        account = service_account(agent)  # "can the dev team scale deployments?": its account
        subject = f"{await _home(evidence, account)}/{account}"
        question = replace(question, subject=subject)
    if question.subject == ME and question.topic == "rights":
        return Answered(
            "I cannot tell which identity you use from here. Ask about it by name: 'what can "
            "alice do in shop', 'what may group:shop-admins do', 'what can shop/robot do'.",
            {"family": "access", "topic": "rights", "clarify": True, "rows": [], "sure": False},
        )
    if question.topic == "who" or question.subject == ME:
        return await _who(evidence, question)
    if question.topic == "may":
        return await _may(evidence, question)
    return await _rights(evidence, question)


async def _review(evidence: Evidence, what: str, **arguments: object) -> Json | None:
    found = await evidence.call(
        "access_review", what, **{k: v for k, v in arguments.items() if v not in (None, "")}
    )
    for missing in (found or {}).get("partial") or []:
        evidence.unseen.append(f"RBAC objects: {missing}")
    return found


async def _who(evidence: Evidence, question: Access) -> Answered:
    ns = question.namespace
    found = await _review(
        evidence,
        "the RBAC bindings",
        verb=question.verb,
        resource=question.resource,
        namespace=ns,
        limit=100,
    )
    asked = f"{question.verb} {question.resource}"
    if found is None:
        return unanswered(evidence, "access", f"who may {asked}")
    resource = found["request"]["resource"]
    subjects = found.get("subjects") or []
    lines = [
        f"- {_subject(s)}: " + "; ".join(_via(v, anywhere=not ns) for v in s["via"][:3])
        for s in subjects[:SHOWN]
    ]
    total = int(found.get("total") or len(subjects))
    if total > SHOWN:
        lines.append(f"(and {total - SHOWN} more subjects)")
    head = f"{total} subjects may {question.verb} {resource} {where(ns)}:"
    if question.subject == ME:
        head = (
            "I cannot tell which identity you use, so here is everyone who may "
            f"{question.verb} {resource} {where(ns)} ({len(subjects)}):"
        )
    lines.append(f"({GROUPS}.)")
    return finish(
        evidence,
        "access",
        head,
        lines,
        "evaluated the cluster's Roles, ClusterRoles and bindings",
        rows=subjects,
        total=int(found.get("total") or len(subjects)),
        topic="who",
        request=found["request"],
    )


async def _may(evidence: Evidence, question: Access) -> Answered:
    ns = question.namespace
    found = await _review(
        evidence,
        "the RBAC bindings",
        verb=question.verb,
        resource=question.resource,
        namespace=ns,
        subject=question.subject,
    )
    if found is None:
        return unanswered(
            evidence,
            "access",
            f"whether {question.subject} may {question.verb} {question.resource}",
        )
    who = _subject(found["subject"])
    resource = found["request"]["resource"]
    grants = found.get("grants") or []
    asked = f"{question.verb} {resource} {where(ns) if ns else 'in every namespace'}"
    if found.get("allowed"):
        head = f"Yes: {who} may {asked}."
    elif found.get("allowed_in"):
        head = (
            f"Only in some namespaces: {who} may {question.verb} {resource} in "
            + ", ".join(found["allowed_in"])
            + "."
        )
    else:
        head = f"No: nothing grants {who} {asked}."
    lines = [f"- through {g['through']}: {g['binding']}" for g in grants[:5]]
    lines += [
        f"- only for {', '.join(g['rule'].get('resource_names', []))}: {g['binding']}"
        for g in found.get("only_some_names") or []
    ]
    lines.append(
        f"(Groups counted: {', '.join(found.get('groups_counted') or [])}; its other "
        "groups come from how it signs in.)"
    )
    return finish(
        evidence,
        "access",
        head,
        lines,
        "evaluated the cluster's Roles, ClusterRoles and bindings",
        rows=grants,
        total=len(grants),
        topic="may",
        allowed=bool(found.get("allowed")),
        request=found["request"],
    )


async def _rights(evidence: Evidence, question: Access) -> Answered:
    ns, named = question.namespace, question.subject
    found = await _review(evidence, "the RBAC bindings", subject=named, namespace=ns, limit=200)
    if found is None:
        return unanswered(evidence, "access", f"what {named} may do")
    return _worded(evidence, found, named, ns, extra=[])


def _worded(
    evidence: Evidence, found: Json, named: str, ns: str | None, *, extra: list[str]
) -> Answered:
    rules = found.get("rules") or []
    own = [r for r in rules if not r.get("implicit")]
    implicit = [r for r in rules if r.get("implicit")]
    who = _subject(found["subject"])
    scope = where(ns) if ns else "across the cluster"
    said = (
        f"{who} holds {len(own)} RBAC rule{'s' if len(own) != 1 else ''} {scope}:"
        if own
        else f"Nothing is bound to {who} {scope} beyond what every signed-in identity may do."
    )
    head, extra = (extra[0], [*extra[1:], said]) if extra else (said, [])
    lines = [*extra, *(f"- {_rule(r)}" for r in own[:12])]
    if len(own) > 12:
        lines.append(f"(and {len(own) - 12} more rules)")
    if implicit:
        lines.append(
            f"Plus {len(implicit)} rules every signed-in identity holds "
            f"({', '.join(sorted({r['through'] for r in implicit}))})."
        )
    return finish(
        evidence,
        "access",
        head,
        lines,
        f"evaluated the bindings of {named}",
        rows=own,
        total=int(found.get("total") or len(rules)),
        topic="rights",
        subject=found["subject"],
    )


async def _agent(evidence: Evidence, question: Access, agent: str) -> Answered:
    role = load_role(agent)
    account = service_account(agent)
    home = await _home(evidence, account)
    subject = f"{home}/{account}"
    loaded = evidence.toolbox.tools
    writes = sorted(t for t in role.tools if t in loaded and not _read_only(loaded[t].metadata))
    unknown = sorted(t for t in role.tools if t not in loaded)
    extra = [
        f"Agent {agent} acts as ServiceAccount {subject}. Its role file "
        f"(agents/{agent}/AGENTS.md) allows {len(role.tools)} tools."
    ]
    if writes:
        extra.append(
            f"Of its tools this agent also holds, {len(writes)} write: {', '.join(writes)}."
        )
    if unknown:
        extra.append(
            f"{len(unknown)} are not loaded here, so not classified: "
            f"{', '.join(unknown[:15])}{' ...' if len(unknown) > 15 else ''}."
        )
    extra += await _writes_allowed(evidence, subject, role.tools)
    found = await _review(
        evidence,
        f"the RBAC bindings of {subject}",
        subject=subject,
        namespace=question.namespace,
        limit=200,
    )
    if found is None:
        text = "\n".join([*extra, f"Its RBAC: not readable ({'; '.join(evidence.unseen)})."])
        return Answered(
            text,
            {
                "family": "access",
                "topic": "rights",
                "agent": agent,
                "tools": sorted(role.tools),
                "rows": [],
                "sure": False,
                "unseen": list(evidence.unseen),
            },
        )
    answered = _worded(evidence, found, f"agent {agent}", question.namespace, extra=extra)
    answered.data.update(agent=agent, tools=sorted(role.tools), writes=writes)
    return answered


async def _home(evidence: Evidence, account: str) -> str:
    """The namespace of the agent's ServiceAccount, from its labelled bindings."""
    found = await evidence.call(
        "list_resources",
        "the agent's bindings",
        kind="clusterrolebindings",
        label_selector=f"{AGENT_LABEL}={account}",
        output="fields",
        fields=["subjects"],
        limit=20,
    )
    for item in (found or {}).get("items") or []:
        for subject in item.get("subjects") or []:
            if subject.get("kind") == "ServiceAccount" and subject.get("name") == account:
                return str(subject.get("namespace") or DEFAULT_HOME)
    return DEFAULT_HOME


async def _writes_allowed(evidence: Evidence, subject: str, tools: frozenset[str]) -> list[str]:
    """One line per Kubernetes call the agent's typed write tools make: allowed or not."""
    calls: dict[tuple[str, str], list[str]] = {}
    for tool in sorted(tools & set(WRITE_CALLS)):
        calls.setdefault(WRITE_CALLS[tool], []).append(tool)
    lines = []
    for (verb, resource), names in calls.items():
        found = await _review(
            evidence,
            f"whether {subject} may {verb} {resource}",
            verb=verb,
            resource=resource,
            subject=subject,
        )
        if found is None:
            continue
        if found.get("allowed"):
            verdict = "RBAC allows it everywhere"
        elif found.get("allowed_in"):
            verdict = f"RBAC allows it only in {', '.join(found['allowed_in'])}"
        else:
            verdict = "RBAC refuses it: these tools would fail"
        lines.append(f"- {', '.join(names)} ({verb} {found['request']['resource']}): {verdict}")
    return lines


def _read_only(metadata: object) -> bool:
    return isinstance(metadata, dict) and metadata.get("readOnlyHint") is True


def _subject(row: Json) -> str:
    where_ = f"{row['namespace']}/" if row.get("namespace") else ""
    return f"{row.get('kind', 'User')} {where_}{row.get('name', '')}"


def _via(via: Json, *, anywhere: bool) -> str:
    said = str(via.get("binding", ""))
    if via.get("only_names"):
        said += f" (only {', '.join(via['only_names'])})"
    if anywhere and via.get("scope") != "cluster":
        said += f" (in {via.get('scope')})"
    return said


def _rule(rule: Json) -> str:
    things = rule.get("resources") or rule.get("non_resource_urls") or []
    shown = ", ".join(things[:6]) + (f" and {len(things) - 6} more" if len(things) > 6 else "")
    names = f" named {', '.join(rule['resource_names'])}" if rule.get("resource_names") else ""
    scope = "everywhere" if rule.get("scope") == "cluster" else f"in {rule.get('scope')}"
    return f"{', '.join(rule.get('verbs') or [])} {shown}{names} {scope} ({rule.get('via')})"
