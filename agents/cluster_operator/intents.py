"""What people ask the Cluster Operator, read into a `Task` with its node and reason.

`read_question` reads a question by its words, in this order, and the first that matches wins:

- "maintenance of/on/for [node] NAME [for/because (of)/: REASON]" ("plan maintenance of node-3
  for a kernel upgrade") is `maintenance`, with the node named and the reason given ("kernel
  upgrade"; "planned maintenance" when none is);
- "drain/draining [node] NAME" ("what would draining node node-1 do?") is `drain-preview` of
  that node; "drain the nodes" or "drain it" names none, so it reads on;
- "node(s)" with a health word (unhealthy, healthy, broken, failing, sick, down, health) is
  `nodes`;
- a saving word (save, savings, cost, cheaper, underused, waste) is `savings`;
- "clusters", "fleet" or "imbalance" is `fleet`;
- the upgrade under way ("continue the upgrade", "how is the upgrade going?"): "upgrade" with
  a word of carrying on or of progress is `upgrade`;
- an upgrade of the cluster ("are we ready to upgrade to 1.38?", "what blocks a Kubernetes
  upgrade?"): "upgrade" with a version, or with a word of the cluster, readiness or blocking,
  is `upgrade-readiness` (an upgrade of a workload's image is a change, read before this); so is
  another verb of change with a release and a word of the cluster ("bump kubernetes to v1.38",
  "move the cluster to the next minor", "is the cluster ready for 1.38?") or "we" as the ones
  moving, no workload named ("what stops us from going to 1.38?"), and the cluster's
  version asked ("what version is the control plane running?": the report starts with it); the
  graph makes it `upgrade` when it is a command ("upgrade the cluster to 1.38");
- security patching of the nodes ("which nodes need patching?", "are any nodes below the patch
  policy?", "patch the nodes", "roll out the kernel patches"): a word of patching (patch,
  kernel, CVE, security update, OS image) with one of nodes, pools or the cluster, or a
  PatchPolicy named, is `patching`;
- "node(s)" with "ready" or "readiness" is `readiness`;
- anything else is `unsupported`, which the graph answers with what it can be asked.

The procedures (`patrol`, `capacity`, `fleet`) arrive with their task set and are not read.
It is a reading of cue words, not of sentences: it knows neither the cluster (a node named is
not checked here) nor the tools; the graph routes on the task.
"""

from __future__ import annotations

import re

from agents.cluster_operator.state import Task

_MAINTAIN = re.compile(
    r"\bmaintenance\s+(?:of|on|for)\s+(?:node\s+)?([a-z0-9][a-z0-9.-]*[a-z0-9])"
    r"(?:\s*(?:for|because of|because|:)\s*(?:an?\s+|the\s+)?(.+?))?\s*[.?!]?$",
    re.IGNORECASE,
)
_READY = re.compile(r"\b(ready|readiness)\b", re.IGNORECASE)
_FLEET = re.compile(r"\b(clusters|fleet|imbalance)\b", re.IGNORECASE)
_DRAIN = re.compile(r"\bdrain(?:ing)?\s+(?:node\s+)?([a-z0-9][a-z0-9.-]*)", re.IGNORECASE)
_NODES = re.compile(r"\bnodes?\b", re.IGNORECASE)
_HEALTH = re.compile(r"\b(unhealthy|healthy|broken|failing|sick|down|health)\b", re.IGNORECASE)
_UPGRADE = re.compile(r"\bupgrad(?:e|es|ed|ing)\b", re.IGNORECASE)
# A release asked for with another verb: "bump kubernetes to v1.38", "move to the next one".
_CHANGE = re.compile(
    r"\b(update|updating|bump|move|moving|go|going|get|getting|take|bring|migrate|roll|jump|"
    r"advance|switch|step)\b",
    re.IGNORECASE,
)
_RELEASE = re.compile(
    r"\bv?1\.\d{1,2}(?:\.\d+)?\b|\bnext\s+(?:one|minor|version|release)\b|"
    r"\b(?:newer|newest|latest)\s+(?:kubernetes|k8s|version|release|minor)\b",
    re.IGNORECASE,
)
_VERSION = re.compile(r"\bversions?\b", re.IGNORECASE)
_THE_CLUSTER = re.compile(
    r"\b(cluster|kubernetes|k8s|control[- ]plane|kubelets?|minor)\b", re.IGNORECASE
)
_OF_CLUSTER = re.compile(
    r"\b(?:v?1\.\d{1,2}(?:\.\d+)?|cluster|kubernetes|k8s|control[- ]plane|minor|version|"
    r"ready|readiness|block|blocks|blocking|blocker|blockers|prepared?|safe)\b",
    re.IGNORECASE,
)
_GOING = re.compile(
    r"\b(continue|resume|proceed|carry on|go on|status|state|progress|progressing|finish|"
    r"finished|done\s+yet)\b|\bgoing\b(?!\s+to\b)|\bwhere\s+(is|are)\b|\bhow\s+(far|long)\b",
    re.IGNORECASE,
)
_ASSESS = re.compile(
    r"\b(ready|readiness|block|blocks|blocking|blocker|blockers|prepared?|safe|check|report|"
    r"assess|plan|preview|stands?|stop|stops|stopping|prevents?|preventing)\b",
    re.IGNORECASE,
)
# The people who run the cluster as the ones who move ("can we go to 1.38?", "what stops us
# from going to 1.38?"): the cluster's release, unless a workload's image is in the words.
_WE = re.compile(r"\b(we|us|our|we're)\b", re.IGNORECASE)
_A_WORKLOAD = re.compile(
    r"\b(images?|tags?|apps?|deployments?|deploy|services?|svc|pods?|charts?|containers?)\b",
    re.IGNORECASE,
)
_PATCH = re.compile(
    r"\b(patch|patches|patched|patching|unpatched|kernels?|cves?|security\s+updates?|"
    r"os\s+images?)\b",
    re.IGNORECASE,
)
_OF_NODES = re.compile(
    r"\b(nodes?|pools?|machines?|cluster|fleet|patchpolic(?:y|ies)|polic(?:y|ies))\b",
    re.IGNORECASE,
)
_SAVE = re.compile(r"\b(save|saving|savings|cost|costs|cheaper|underused|waste)\b", re.IGNORECASE)


def assesses(question: str) -> bool:
    """Whether words about an upgrade ask to assess it ("check upgrade readiness", "plan an
    upgrade to 1.38"), not to carry it out ("upgrade the cluster to 1.38")."""
    return _ASSESS.search(question) is not None


def _the_clusters(question: str) -> bool:
    """Whether the release in the words is the cluster's: the cluster named, or "we" moving
    with no workload in sight."""
    if _THE_CLUSTER.search(question):
        return True
    return _WE.search(question) is not None and _A_WORKLOAD.search(question) is None


def read_question(question: str) -> tuple[Task, str, str]:
    """The kind of question, the node a drain or maintenance question names, and the reason
    a maintenance question gives."""
    maintain = _MAINTAIN.search(question.strip())
    if maintain:
        return "maintenance", maintain.group(1), (maintain.group(2) or "planned maintenance")
    task, node = _reading(question)
    return task, node, ""


def _reading(question: str) -> tuple[Task, str]:
    drain = _DRAIN.search(question)
    if drain and drain.group(1).lower() not in ("node", "nodes", "it"):
        return "drain-preview", drain.group(1)
    if _NODES.search(question) and _HEALTH.search(question):
        return "nodes", ""
    if _SAVE.search(question):
        return "savings", ""
    if _FLEET.search(question):
        return "fleet", ""
    if _UPGRADE.search(question) and _GOING.search(question):
        return "upgrade", ""
    if _UPGRADE.search(question) and _OF_CLUSTER.search(question):
        return "upgrade-readiness", ""
    if (_CHANGE.search(question) or _ASSESS.search(question)) and (
        _RELEASE.search(question) and _the_clusters(question)
    ):
        return "upgrade-readiness", ""
    if _VERSION.search(question) and _THE_CLUSTER.search(question):
        return "upgrade-readiness", ""  # "what version is the control plane running?"
    if _PATCH.search(question) and _OF_NODES.search(question):
        return "patching", ""
    if _NODES.search(question) and _READY.search(question):
        return "readiness", ""
    return "unsupported", ""
