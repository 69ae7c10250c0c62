"""What a request acts on, read exactly: a delete removes the kind said and never the namespace
the words say it is in, many objects are never deleted at once; a quota or limit range made in a
namespace is not a new namespace (and a new namespace said with its quota is); a network policy
said with any form of its verb is a network policy, not an Ingress."""

from __future__ import annotations

import pytest

from agents.runtime.changes import words

# What a delete removes is exactly the kind said, never a workload of the same name.
DELETES = [
    ("delete the worker service in shop", "Service", ("worker",)),
    ("delete svc/api -n shop", "Service", ("api",)),
    ("remove the api svc", "Service", ("api",)),
    ("get rid of the completed job report-1", "Job", ("report-1",)),
    ("delete the worker deployment", "Deployment", ("worker",)),
    ("delete web", "", ("web",)),
]


@pytest.mark.parametrize(("text", "kind", "subject"), DELETES, ids=[d[0] for d in DELETES])
def test_a_delete_names_the_kind_said(text: str, kind: str, subject: tuple[str, ...]) -> None:
    asked = words.read(text)
    assert asked is not None and asked.op == "delete", asked
    assert (asked.kind, asked.subject) == (kind, subject)


@pytest.mark.parametrize(
    ("text", "kind"),
    [("delete all failed pods in namespace jobs", "Pod"),
     ("delete all pods in namespace jobs", "Pod"),
     ("delete the failed pods in the jobs namespace", "Pod"),
     ("delete completed jobs in namespace ci", "Job")],
)  # fmt: skip
def test_a_delete_of_many_deletes_nothing_and_never_the_namespace_they_are_in(
    text: str, kind: str
) -> None:
    """The namespace a delete is said to be in is where, never what: these read as the
    namespace's own delete once (the words "in namespace jobs" named the kind)."""
    asked = words.read(text)
    assert asked is not None and asked.op == "delete", asked
    assert asked.kind == kind and "one object at a time" in asked.problem, asked
    assert "name" not in asked.params, asked


@pytest.mark.parametrize(
    ("text", "hard"),
    [("create a resource quota limiting pods to 10 in namespace team-a", {"pods": "10"}),
     ("create a quota of 10 pods in namespace team-a", {"pods": "10"}),
     ("set a quota on team-a: pods at most 20, services up to 5",
      {"pods": "20", "services": "5"})],
)  # fmt: skip
def test_a_quota_made_in_a_namespace_is_the_quota_not_a_new_namespace(
    text: str, hard: dict[str, str]
) -> None:
    asked = words.read(text)
    assert asked is not None and asked.op == "quota" and not asked.problem, asked
    assert asked.params["hard"] == hard and asked.namespace == "team-a", asked


def test_a_new_namespace_said_with_its_quota_is_the_namespace() -> None:
    asked = words.read("new namespace team-a, quota cpu=4 memory=8Gi pods=20")
    assert asked is not None and asked.op == "namespace", asked
    assert asked.params["quota"] == {"requests.cpu": "4", "requests.memory": "8Gi", "pods": "20"}


@pytest.mark.parametrize(
    ("text", "deny", "direction", "namespace"),
    [("Create a network policy that denies all ingress in namespace secure", True, "ingress",
      "secure"),
     ("create a networkpolicy blocking egress in shop", True, "egress", "shop"),
     ("add a network policy allowing ingress from api to web", False, "ingress", None)],
)  # fmt: skip
def test_a_network_policy_said_with_any_form_of_its_verb(
    text: str, deny: bool, direction: str, namespace: str | None
) -> None:
    asked = words.read(text)
    assert asked is not None and asked.op == "netpol" and not asked.problem, asked
    assert (asked.params["deny"], asked.params["direction"]) == (deny, direction), asked
    assert asked.namespace == namespace
    assert all("ing" not in str(peer.get("word", "")) for peer in asked.params["peers"]), asked
