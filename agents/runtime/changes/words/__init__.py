"""Change requests as people type them: a verb, an object and quantities, read as words.

`read(text)` finds what is asked and returns an `Asked`: the operation, its parameters, and
the words left that may name the object (the agent resolves those against the cluster). It
is not a list of sentences but a small grammar in four parts:

- `sentence`: the request as tokens (quoted commands, cron lines and kubectl-style flags taken
  out whole), what has been read of them, and where it applies ("in shop", "-n shop");
- `verbs`: which operation is asked, by its verb ("scale", "restart", "drain", "expose"), by
  a particle that comes later ("take web down"), or by the object a generic verb ("set",
  "add", "give", "make", "remove") is applied to ("a readiness probe", "an HPA", "LOG_LEVEL");
- `amounts`: quantities as people write them ("two", "+2", "double", "half a CPU", "512MB",
  "70%", "port 8080", "/healthz", "every night at 2");
- one module of readers per family of operations, each taking the parameters it needs:
  `workloads` (scale, restart, undo, pause, image, env, resources, labels, delete),
  `shaping` (probes, node selector, tolerations, spread), `network` (expose, a Service's
  selector or port, network policies, Ingress), `guards` (disruption budgets, autoscalers),
  `tenancy` (namespaces, quotas, limit ranges, pod security), `access` (who may do what),
  `creating` (new workloads, ConfigMaps, volumes' sizes, mounts) and `nodes` (cordon, drain,
  taint).

A question is never a change: text that starts with a question word ("why did the scale
fail?", "is web scaled?") reads as None, as does text with no change in it. A change that
cannot be made precise (a quantity that does not parse, a scale without a number) comes back
with `problem` set, so the agent says exactly that and changes nothing.

Must not know: any agent, the cluster, the servers.
"""

from __future__ import annotations

import re
from dataclasses import replace

from agents.runtime.changes.words import (
    access,
    creating,
    guards,
    network,
    nodes,
    shaping,
    stored,
    tenancy,
)
from agents.runtime.changes.words import workloads as _workloads
from agents.runtime.changes.words.asked import Asked, Reader
from agents.runtime.changes.words.sentence import Sentence, kind_of, subject
from agents.runtime.changes.words.verbs import operation
from agents.runtime.changes.words.vocabulary import VERSION

__all__ = ["OPS", "Asked", "affirmative", "read"]

_READERS: dict[str, Reader] = {
    **_workloads.READERS,
    **shaping.READERS,
    **network.READERS,
    **guards.READERS,
    **tenancy.READERS,
    **access.READERS,
    **creating.READERS,
    **stored.READERS,
    **nodes.READERS,
}
OPS = frozenset(_READERS)  # every operation a request can ask for

_YES = re.compile(
    r"^\s*(?:y|yes|yep|yeah|sure|ok|okay|confirm(?:ed)?|go(?: ahead)?|do it|proceed|"
    r"yes,? (?:please|go ahead|do it))\s*[.!]*\s*$",
    re.IGNORECASE,
)


def affirmative(text: str) -> bool:
    """Whether `text` says yes to a question asked before a change ("yes", "go ahead")."""
    return _YES.match(text) is not None


_MODALS = frozenset({"can", "could", "would", "will", "should", "shall", "must", "might"})
_GREETINGS = frozenset({"hey", "hi", "hello", "ok", "okay", "so", "well"})


def _wonders(sentence: Sentence) -> bool:
    """ "should web have a pdb?", "can I scale web to 1?": a modal said of someone other than
    the crew asks whether, and asks nothing to be done ("can you scale web" does)."""
    words = [w for w in sentence.low if w not in _GREETINGS]
    return len(words) > 1 and words[0] in _MODALS and words[1] not in ("you", "u", "we", "please")


# An upgrade of these is the Cluster Operator's (a Kubernetes version), never a workload's image.
_CLUSTER_WORDS = frozenset(
    {"cluster", "clusters", "kubernetes", "k8s", "control", "control-plane", "controlplane",
     "kubelet", "kubelets", "kernel", "kernels", "readiness", "pool", "pools", "fleet"}
)  # fmt: skip
_NEVER = frozenset({"dont", "never", "not"})
_ARTICLES = frozenset({"a", "an", "the", "this", "that", "next", "our", "its"})
# In a node pool, nodes and machines are what its replicas are: "add 2 nodes to the gpu pool".
_POOL_MEMBERS = {"node": "replica", "nodes": "replicas", "machine": "replica",
                 "machines": "replicas"}  # fmt: skip


def _upgrades_the_cluster(sentence: Sentence, at: int) -> bool:
    """ "upgrade the cluster to 1.38", "upgrade readiness", "plan a kernel upgrade of node-3",
    "prepare the 1.38 upgrade": the cluster's version, or "upgrade" as a noun."""
    low = sentence.low
    before = low[at - 1] if at > 0 else ""
    noun = before in _ARTICLES or before in _CLUSTER_WORDS or bool(VERSION.match(before))
    return noun or bool(_CLUSTER_WORDS & set(low)) or kind_of(low, loose=True) == "Node"


def _negated(sentence: Sentence, at: int) -> bool:
    """The verb at `at` said with a negation: "don't restart web", "do not scale api", "never
    delete the db" (an apostrophe splits "don't" into "don", "t")."""
    before = sentence.low[max(0, at - 2) : at] if at > 0 else []
    return before in (["don", "t"], ["do", "not"]) or (bool(before) and before[-1] in _NEVER)


def read(text: str) -> Asked | None:
    """The change `text` asks for, or None when it asks none (a question, or no change)."""
    sentence = Sentence.of(text)
    if sentence.empty or sentence.asks or _wonders(sentence):
        return None
    if kind_of(sentence.low) == "MachineDeployment" or any(
        w.startswith("md/") for w in sentence.low
    ):
        sentence.low = [_POOL_MEMBERS.get(w, w) for w in sentence.low]
    found = operation(sentence)
    if found is None:
        return None
    op, at, width = found  # at -1: the operation is named by its object, not by a verb
    if _negated(sentence, at) and op != "cordon":
        return None  # "don't restart web" asks for nothing ("don't schedule on node-3" cordons)
    if op == "image" and at >= 0 and _upgrades_the_cluster(sentence, at):
        return None
    if at >= 0:
        sentence.take(*range(at, at + width))
    asked = _READERS[op](sentence, at)
    words, namespace, named_kind = subject(sentence)
    kind = asked.kind or named_kind or kind_of(sentence.low)
    return replace(asked, subject=words, namespace=asked.namespace or namespace, kind=kind)
