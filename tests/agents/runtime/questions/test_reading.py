"""The question grammar reads each family in people's own phrasing (terse, chatty, plural,
with synonyms and typos) into its parameters, and reads nothing else: a diagnosis, a change,
a fix or a deployment is left to the agent's other intents (None)."""

from __future__ import annotations

from typing import Any

import pytest

from agents.runtime.questions import (
    Access,
    Capacity,
    Events,
    History,
    Inventory,
    Logs,
    Overview,
    PolicyCheck,
    Question,
    read,
)


def fields(question: Question | None, *names: str) -> tuple[Any, ...]:
    assert question is not None, "not read as a question"
    return tuple(getattr(question, name) for name in names)


INVENTORY = [
    ("what images run in shop", "images", "shop", None),
    ("list the images used by pods in staging", "images", "staging", None),
    ("images in shop?", "images", "shop", None),
    ("hey, which container imgaes are running in the shop namespace", "images", "shop", None),
    ("which pods use the most memory", "top", None, None),
    ("top 5 pods by cpu in shop", "top", "shop", None),
    ("could you tell me which pods eat the most memroy in -n shop?", "top", "shop", None),
    ("which workloads have no limits", "check", None, "limits"),
    ("workloads without resource limits in shop", "check", "shop", "limits"),
    ("which deploymnets don't set limits?", "check", None, "limits"),
    ("which workloads have no probes", "check", None, "probes"),
    ("any apps missing health checks in staging?", "check", "staging", "probes"),
    ("which deployments have no readiness probe", "check", None, "readiness"),
    ("show me workloads lacking a liveness probe", "check", None, "liveness"),
    ("which workloads have no PDB", "check", None, "pdb"),
    ("apps without a disruption budget in shop", "check", "shop", "pdb"),
    ("which pods run as root", "check", None, "root"),
    ("what runs as root in shop?", "check", "shop", "root"),
    ("which workloads use :latest", "check", None, "latest"),
    ("who uses the latest tag in staging", "check", "staging", "latest"),
    ("how many pods are running in shop", "count", "shop", None),
    ("count the services in staging", "count", "staging", None),
    ("list deployments in staging", "list", "staging", None),
    ("pods in shop", "list", "shop", None),
    ("which pods are not ready", "list", None, None),
    ("which pods restarted the most", "restarts", None, None),
    ("show resource quotas in team-a", "list", "team-a", None),
    ("what is the quota in shop?", "list", "shop", None),
    ("show the limit ranges in team-a", "list", "team-a", None),
    ("how many replicas does web have?", "count", None, None),
    ("what version of nginx is web running?", "images", None, None),
]


@pytest.mark.parametrize(
    ("text", "topic", "namespace", "check"), INVENTORY, ids=[t[0] for t in INVENTORY]
)
def test_inventory_questions_are_read_with_their_topic_namespace_and_check(
    text: str, topic: str, namespace: str | None, check: str | None
) -> None:
    question = read(text, namespace=None)
    assert isinstance(question, Inventory), question
    assert fields(question, "topic", "namespace", "check") == (topic, namespace, check)


def test_inventory_parameters_are_read_from_the_words() -> None:
    assert fields(read("top 5 pods by cpu", namespace="shop"), "metric", "count", "namespace") == (
        "cpu",
        5,
        "shop",
    )
    assert fields(read("the 3 hungriest pods by ram", namespace=None), "metric", "count") == (
        "memory",
        3,
    )
    assert fields(read("how many pods are pending", namespace=None), "state") == ("pending",)
    assert fields(read("which pods are not ready", namespace=None), "state") == ("not-ready",)
    assert fields(read("which statefulsets have no limits", namespace=None), "kind") == (
        "statefulsets",
    )
    # the conversation's namespace, unless the words name one or say everywhere
    assert fields(read("what images run", namespace="shop"), "namespace") == ("shop",)
    assert fields(read("what images run in staging", namespace="shop"), "namespace") == ("staging",)
    everywhere = read("which pods use the most cpu across all namespaces", namespace="shop")
    assert fields(everywhere, "namespace", "said_namespace") == (None, True)


ACCESS = [
    ("who can delete pods in shop", ("who", "delete", "pods", "", "shop")),
    ("who may read secrets in staging", ("who", "get", "secrets", "", "staging")),
    ("Who has access to the secrets in staging?", ("who", "get", "secrets", "", "staging")),
    ("who's allowed to read logs in shop", ("who", "get", "logs", "", "shop")),
    ("who can exec into pods in shop", ("who", "create", "pods/exec", "", "shop")),
    ("who can scale deploymnets in shop", ("who", "patch", "deployments/scale", "", "shop")),
    ("what may the dev-team agent do", ("rights", "", "", "agent:dev_team", None)),
    ("what can the dev team do?", ("rights", "", "", "agent:dev_team", None)),
    (
        "what is the cluster operator agent allowed to do",
        ("rights", "", "", "agent:cluster_operator", None),
    ),
    ("what can alice do in shop", ("rights", "", "", "alice", "shop")),
    ("what permissions does bob have in staging", ("rights", "", "", "bob", "staging")),
    ("what may group:shop-admins do", ("rights", "", "", "group:shop-admins", None)),
    ("what can the shop-admins group do", ("rights", "", "", "group:shop-admins", None)),
    ("what can kubecrew-system/dev-team do", ("rights", "", "", "kubecrew-system/dev-team", None)),
    ("can bob scale deployments in shop?", ("may", "patch", "deployments/scale", "bob", "shop")),
    ("is alice allowed to delete pods in shop", ("may", "delete", "pods", "alice", "shop")),
    (
        "does bob have permission to read secrets in staging?",
        ("may", "get", "secrets", "bob", "staging"),
    ),
    ("can I delete pods in shop", ("may", "delete", "pods", "me", "shop")),
]


@pytest.mark.parametrize(("text", "expected"), ACCESS, ids=[t[0] for t in ACCESS])
def test_access_questions_name_the_verb_resource_and_subject(
    text: str, expected: tuple[str, ...]
) -> None:
    question = read(text, namespace=None)
    assert isinstance(question, Access), question
    assert fields(question, "topic", "verb", "resource", "subject", "namespace") == expected


HISTORY = [
    ("what changed in shop in the last hour", ("changes", "shop", (), 3600, False)),
    ("what changed in shop over the past 30 minutes?", ("changes", "shop", (), 1800, False)),
    ("recent changes to web", ("changes", None, ("web",), 86_400, False)),
    ("recnt changes to wbe in shop", ("changes", "shop", ("wbe",), 86_400, False)),
    ("what happened in staging today", ("changes", "staging", (), 86_400, True)),
    (
        "so what's been happening with checkout lately?",
        ("changes", None, ("checkout",), 86_400, False),
    ),
    ("who changed web in the last 2h", ("changes", None, ("web",), 7200, False)),
    ("show the rollout history of web", ("rollout", None, ("web",), 86_400, False)),
    ("rollout history of api in shop", ("rollout", "shop", ("api",), 86_400, False)),
    ("web revisions", ("rollout", None, ("web",), 86_400, False)),
    (
        "something feels different in staging since this morning, what changed there in the "
        "last hour?",
        ("changes", "staging", (), 3600, False),
    ),
    ("web is slow. what changed to it lately?", ("changes", None, ("web", "slow"), 86_400, False)),
]


@pytest.mark.parametrize(("text", "expected"), HISTORY, ids=[t[0] for t in HISTORY])
def test_history_questions_name_the_window_and_the_object(
    text: str, expected: tuple[object, ...]
) -> None:
    question = read(text, namespace=None)
    assert isinstance(question, History), question
    assert fields(question, "topic", "namespace", "names", "since_seconds", "since_midnight") == (
        expected
    )


CAPACITY = [
    ("how full is the cluster", ("fullness", "")),
    ("cluster capacity?", ("fullness", "")),
    ("how utilised are our nodes", ("fullness", "")),
    ("which nodes are under pressure", ("pressure", "")),
    ("any node under memory pressure?", ("pressure", "memory")),
    ("which nodes are not ready", ("pressure", "")),
    ("how much cpu is free", ("free", "cpu")),
    ("how much memory is left on the nodes", ("free", "memory")),
    ("what headroom do the nodes have", ("free", "")),
    ("which node has the most pods", ("rank", "pods")),
    ("which node is the busiest", ("rank", "cpu")),
    ("nodes with the least memory in use", ("rank", "memory")),
]


@pytest.mark.parametrize(("text", "expected"), CAPACITY, ids=[t[0] for t in CAPACITY])
def test_capacity_questions_name_what_is_measured(text: str, expected: tuple[str, str]) -> None:
    question = read(text, namespace="shop")
    assert isinstance(question, Capacity), question
    topic, metric = expected
    assert question.topic == topic
    assert topic == "pressure" or question.metric == metric


POLICY = [
    ("may I scale web to 1?", ("scale", ("web",), 1, None, None)),
    ("can we scale the web deployment down to zero in shop", ("scale", ("web",), 0, None, "shop")),
    ("is it ok to scale wbe down by 2?", ("scale", ("wbe",), None, -2, None)),
    ("would policy allow deleting web in shop?", ("delete", ("web",), None, None, "shop")),
    ("does policy let me delete api", ("delete", ("api",), None, None, None)),
    ("can the dev team restart api in shop?", ("restart", ("api",), None, None, "shop")),
    ("am I allowed to drain node-2", ("drain", ("node-2",), None, None, None)),
    ("would it be ok to roll back checkout?", ("rollback", ("checkout",), None, None, None)),
    ("can we take web down in shop", ("scale", ("web",), 0, None, "shop")),
    ("is cordoning node-1 allowed?", ("cordon", ("node-1",), None, None, None)),
    (
        "would policy let me scale web down to a single replica in staging?",
        ("scale", ("web",), 1, None, "staging"),
    ),
    ("can I scale web to a pair of replicas", ("scale", ("web",), 2, None, None)),
]


@pytest.mark.parametrize(("text", "expected"), POLICY, ids=[t[0] for t in POLICY])
def test_policy_questions_name_the_action_its_target_and_replicas(
    text: str, expected: tuple[object, ...]
) -> None:
    question = read(text, namespace=None)
    assert isinstance(question, PolicyCheck), question
    assert fields(question, "action", "names", "replicas", "by", "namespace") == expected


def test_the_actor_of_a_policy_question_is_kept_for_the_answer() -> None:
    assert fields(read("can the dev team restart api?", namespace=None), "actor") == ("dev team",)
    assert fields(read("may I scale web to 1?", namespace=None), "actor") == ("i",)
    drain = read("am I allowed to drain node-2", namespace=None)
    assert fields(drain, "kind") == ("nodes",)


# text -> (namespace, name, kind, warnings, since_seconds, count)
EVENTS = [
    ("show me the events in the shop namespace", ("shop", "", "", False, None, 10)),
    ("show warnings in namespace shop", ("shop", "", "", True, None, 10)),
    ("any warnings in shop in the last hour?", ("shop", "", "", True, 3600, 10)),
    ("get events for deployment web", ("default", "web", "deployments", False, None, 10)),
    ("events of web in shop", ("shop", "web", "", False, None, 10)),
    ("what warning events does pod web-1 have?", ("default", "web-1", "pods", True, None, 10)),
    ("give me the last 5 events across the cluster", (None, "", "", False, None, 5)),
    ("kubectl get events -n payments", ("payments", "", "", False, None, 10)),
    ("recent evnets for shop/api", ("shop", "api", "", False, None, 10)),
    ("which events did node-2 report today?", ("default", "node-2", "", False, 86_400, 10)),
]


@pytest.mark.parametrize(("text", "expected"), EVENTS, ids=[t[0] for t in EVENTS])
def test_events_questions_name_the_object_type_and_window(
    text: str, expected: tuple[object, ...]
) -> None:
    question = read(text, namespace="default")
    assert isinstance(question, Events), question
    assert fields(question, "namespace", "name", "kind", "warnings", "since_seconds", "count") == (
        expected
    )


OVERVIEW = [
    "give me an overview of the cluster",
    "how is the cluster doing?",
    "cluster status",
    "is the cluster healthy?",
    "what's the state of the cluster",
    "summary of the cluster please",
    "the big picture?",
]


@pytest.mark.parametrize("text", OVERVIEW)
def test_the_cluster_at_a_glance_is_an_overview(text: str) -> None:
    assert isinstance(read(text, namespace="shop"), Overview)


def test_an_overview_of_a_namespace_lists_what_runs_there_and_operators_words_are_theirs() -> None:
    assert fields(read("give me a summary of the shop namespace", namespace=None),
                  "topic", "kind", "namespace") == ("list", "workloads", "shop")  # fmt: skip
    assert fields(read("give me a summary of pods in shop", namespace=None),
                  "topic", "kind", "owner") == ("list", "pods", "")  # fmt: skip
    for text in ("how is the upgrade going?", "what's the status of the cluster upgrade?",
                 "are the nodes healthy?", "cluster cost summary"):  # fmt: skip
        assert not isinstance(read(text, namespace=None), Overview), text


def test_in_namespace_names_the_namespace_after_it() -> None:
    assert fields(read("list pods in namespace shop", namespace=None), "namespace") == ("shop",)
    assert fields(read("count deployments in ns staging", namespace=None), "namespace") == (
        "staging",
    )


NOT_QUESTIONS = [
    "why is web failing?",
    "scale web to 3",
    "fix web",
    "heal checkout",
    "is web healthy?",
    "what's wrong with web",
    "restart api in shop",
    "deploy nginx:1.27 as web to staging",
    "roll back checkout",
    "rollout restart web",
    "is anything broken in shop?",
    "web keeps crashing, why?",
    "set web's memory limit to 512Mi",
    "add a readiness probe to web",
    "drain node-2",
    "cordon node-3",
    "delete pod web-1",
    "describe web",
    "can you scale web to 3 please",
    "please fix the checkout service",
    "make web a sandwich",
    "give web 3 more replicas",
    "why did the rollout of web change the image?",
    "take web down",
    "probe web",
    "has web drifted from git?",
    "right-size web",
    "hello",
    "",
]


@pytest.mark.parametrize("text", NOT_QUESTIONS)
def test_diagnoses_changes_and_commands_are_not_read_as_questions(text: str) -> None:
    assert read(text, namespace="shop") is None


@pytest.mark.parametrize(
    ("text", "name", "lines", "grep", "previous", "namespace"),
    [("show me the logs of web in shop", "web", 30, "", False, "shop"),
     ("last 50 lines of api's logs in shop", "api", 50, "", False, "shop"),
     ("any errors in the logs of web?", "web", 30, "error", False, None),
     ("show me exceptions in api logs", "api", 30, "exception", False, None),
     ("errors in web logs in shop", "web", 30, "error", False, "shop"),
     ("what has web been logging in shop?", "web", 30, "", False, "shop"),
     ("show the previous logs of api", "api", 30, "", True, None),
     ("kubectl logs web-7d4b9-x2kq -n shop", "web-7d4b9-x2kq", 30, "", False, "shop")],
)  # fmt: skip
def test_logs_questions_name_whose_logs_and_which_lines(
    text: str, name: str, lines: int, grep: str, previous: bool, namespace: str | None
) -> None:
    question = read(text, namespace=None)
    assert isinstance(question, Logs), question
    assert fields(question, "name", "lines", "grep", "previous", "namespace") == (
        name, lines, grep, previous, namespace)  # fmt: skip


def test_access_to_logs_is_no_logs_question() -> None:
    assert not isinstance(read("who can read logs in shop?", namespace=None), Logs)


@pytest.mark.parametrize(
    ("text", "owner"),
    [("what version of nginx is web running?", "web"),
     ("which version of redis does cache use?", "cache"),
     ("how many replicas does web have?", "web")],
)  # fmt: skip
def test_a_workloads_version_and_replicas_are_asked_of_it(text: str, owner: str) -> None:
    assert fields(read(text, namespace=None), "owner") == (owner,)
