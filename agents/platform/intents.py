"""What people ask the Platform agent, read into a `Task` and, for audits and blueprints, the
namespace it is about and whether to fix.

`read_question` reads a question by its words, in this order, and the first that matches wins:

- "escalation(s)", "escalated", "arbitrate" ("answer escalations", "any escalations?") is
  `escalations`;
- "audit" ("audit the fleet", "audit shop") is `audit`;
- "blueprint(s)" ("sync blueprints", "is shop on the blueprint?") is `blueprints`;
- "egress", "network policy/policies", "netpol", or a state word (compliant, compliance,
  enforced, in force, missing, drift) ("which namespaces are not compliant with the egress
  policy?") is `compliance`;
- anything else is `unsupported`, which the graph answers with what it can be asked.

`read_scope` then reads an audit's or a blueprint question's scope: the one namespace it names
("audit [of] [the] [namespace] shop"; "shop on/matches [the/its] blueprint", "blueprint
for/of/in [namespace] shop"), or "" for the fleet (a word such as fleet, clusters, all,
everything, namespaces names no namespace); and whether to fix: an audit always fixes what a PR
can, blueprints only when asked to sync, fix, enforce, apply or reconcile.

The procedures (`propagate`, and scheduled audits, blueprint syncs and escalations) arrive with
their task set and are not read. It is a reading of cue words, not of sentences: it knows
neither the cluster (a namespace named is not checked here) nor the tools.
"""

from __future__ import annotations

import re

from agents.platform.state import Task

_AUDIT = re.compile(r"\baudit\b", re.IGNORECASE)
_ESCALATIONS = re.compile(r"\b(escalations?|escalated|arbitrat\w*)\b", re.IGNORECASE)
_AUDIT_OF = re.compile(
    r"\baudit(?:\s+of)?\s+(?:the\s+)?(?:namespace\s+)?([a-z0-9][-a-z0-9]*)", re.IGNORECASE
)
_BLUEPRINT = re.compile(r"\bblueprints?\b", re.IGNORECASE)
_ON_BLUEPRINT = re.compile(
    r"\b([a-z0-9][-a-z0-9]*)\s+(?:on|match(?:es|ing)?)\s+(?:the\s+|its\s+)?blueprint"
)
_BLUEPRINT_OF = re.compile(r"blueprints?\s+(?:for|of|in)\s+(?:namespace\s+)?([a-z0-9][-a-z0-9]*)")
_FIX = re.compile(r"\b(sync|fix|enforce|apply|reconcile)\b", re.IGNORECASE)
_FLEET = frozenset({"fleet", "cluster", "clusters", "everything", "all", "namespaces", "me"})
_EGRESS = re.compile(r"\b(egress|network ?polic(y|ies)|netpol)\b", re.IGNORECASE)
_STATE = re.compile(r"\b(complian\w*|enforc\w*|in force|missing|drift\w*)\b", re.IGNORECASE)


def read_question(question: str) -> Task:
    if _ESCALATIONS.search(question):
        return "escalations"
    if _AUDIT.search(question):
        return "audit"
    if _BLUEPRINT.search(question):
        return "blueprints"
    if _EGRESS.search(question) or _STATE.search(question):
        return "compliance"
    return "unsupported"


def read_scope(question: str, task: Task) -> tuple[str, bool]:
    """The one namespace a question names ("" for the fleet), and whether to fix: an audit
    fixes what a PR can; blueprints are fixed when asked to sync, else only looked at."""
    if task == "audit":
        found = _AUDIT_OF.search(question)
        named = found.group(1).lower() if found else ""
        return ("" if named in _FLEET else named), True
    found = _ON_BLUEPRINT.search(question) or _BLUEPRINT_OF.search(question)
    named = found.group(1).lower() if found else ""
    return ("" if named in _FLEET or named == "namespace" else named), bool(_FIX.search(question))
