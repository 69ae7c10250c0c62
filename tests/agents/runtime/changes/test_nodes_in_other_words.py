"""A node kept from new pods in other words than cordon, never said of a pod; every pod taken off
a node in other words than drain, never one workload moved; and a request
said with a negation ("don't restart web"), which asks for nothing. Words only: the cordon
itself is checked on a live node in tests/agents/cluster_operator/test_node_changes.py."""

from __future__ import annotations

import pytest

from agents.runtime.changes import words


@pytest.mark.parametrize(
    ("text", "op"),
    [
        ("mark node-2 unschedulable", "cordon"),
        ("make node-2 unschedulable", "cordon"),
        ("mark node-2 as not schedulable", "cordon"),
        ("stop scheduling pods on node-2", "cordon"),
        ("prevent scheduling on node-2 please", "cordon"),
        ("take node-2 out of rotation", "cordon"),
        ("make node-2 schedulable again", "uncordon"),
        ("resume scheduling on node-2", "uncordon"),
        ("allow scheduling on node-2", "uncordon"),
        ("put node-2 back into service", "uncordon"),
        ("return node-2 to service", "uncordon"),
        ("prevent new pods from landing on node-2", "cordon"),
        ("don't schedule anything on node-2", "cordon"),
        ("keep new pods off node-2", "cordon"),
    ],
)
def test_a_node_kept_from_new_pods_in_other_words_is_a_cordon(text: str, op: str) -> None:
    asked = words.read(text)
    assert asked is not None and (asked.op, asked.kind) == (op, "Node"), asked
    assert asked.subject == ("node-2",), asked


@pytest.mark.parametrize(
    "text",
    ["evict all pods from node-2", "move everything off node-2", "empty node-2",
     "migrate the workloads off node-2", "reschedule all pods from node-2 elsewhere",
     "evict all the pods running on node-2", "move all pods on node-2 to node-3"],
)  # fmt: skip
def test_every_pod_taken_off_a_node_in_other_words_is_a_drain(text: str) -> None:
    asked = words.read(text)
    assert asked is not None and (asked.op, asked.kind) == ("drain", "Node"), asked
    assert asked.subject == ("node-2",), asked


@pytest.mark.parametrize(
    "text", ["evict pod web-1", "move web to node-2", "clear the cache configmap"]
)
def test_one_workload_moved_or_cleared_is_no_drain(text: str) -> None:
    asked = words.read(text)
    assert asked is None or asked.op != "drain", asked


@pytest.mark.parametrize(
    "text", ["why is my pod unschedulable?", "make the web pod schedulable", "stop web"]
)
def test_a_pod_is_never_cordoned(text: str) -> None:
    asked = words.read(text)
    assert asked is None or asked.op not in ("cordon", "uncordon"), asked


@pytest.mark.parametrize(
    "text",
    ["don't restart web", "do not scale api to 0", "never delete the db deployment",
     "please do not drain node-2"],
)  # fmt: skip
def test_a_negated_request_is_no_change(text: str) -> None:
    assert words.read(text) is None, text


@pytest.mark.parametrize(
    ("text", "op"), [("cordon every node", "cordon"), ("drain each node", "drain")]
)
def test_every_node_said_with_a_node_verb_is_that_verb_not_a_spread(text: str, op: str) -> None:
    asked = words.read(text)
    assert asked is not None and (asked.op, asked.kind) == (op, "Node"), asked
