"""Everyday changes of a workload, asked in people's words (terse, chatty, with a typo in the
name), carried out through policy, a dry run, the gated write and validation; each checked on
the Deployment the API server holds afterwards, not on the answer's wording."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.support.changes import Crew
from tests.support.waiting import eventually

Live = Callable[[Crew], Any]


def replicas(crew: Crew) -> int:
    return int(crew.web()["spec"]["replicas"])


def image(crew: Crew) -> str:
    return str(crew.container()["image"])


def env(crew: Crew) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in crew.container().get("env") or []}


def resources(crew: Crew) -> dict[str, Any]:
    return dict(crew.container().get("resources") or {})


def labels(crew: Crew) -> dict[str, str]:
    return dict(crew.web()["metadata"].get("labels") or {})


def annotations(crew: Crew) -> dict[str, str]:
    return dict(crew.web()["metadata"].get("annotations") or {})


def restarted(crew: Crew) -> str:
    template = crew.web()["spec"]["template"]["metadata"]
    return str((template.get("annotations") or {}).get("kubectl.kubernetes.io/restartedAt", ""))


CASES = [
    pytest.param(
        ["scale web to 3", "could you please bump the web deployment up to 4 replicas?",
         "scale wbe to 5"],
        replicas, [3, 4, 5], id="scale",
    ),
    pytest.param(
        ["add 2 replicas to web", "double web please", "scale the web app down by one"],
        replicas, [4, 8, 7], id="scale-relative",
    ),
    pytest.param(
        ["set the image of web to nginx:1.26", "hey, can you upgrade web to 1.28?",
         "update wbe's image to nginx:1.27"],
        image, ["nginx:1.26", "nginx:1.28", "nginx:1.27"], id="set-image",
    ),
    pytest.param(
        ["set LOG_LEVEL=debug on web", "please add an env var FEATURE_X=on to the web app",
         "remove LOG_LEVEL from wbe"],
        env, [{"LOG_LEVEL": "debug"}, {"LOG_LEVEL": "debug", "FEATURE_X": "on"},
              {"FEATURE_X": "on"}], id="env",
    ),
    pytest.param(
        ["set web's memory limit to 256Mi", "could you give web half a CPU?",
         "set the memory request of wbe to 64 MB"],
        resources, [
            {"requests": {"cpu": "100m", "memory": "32Mi"}, "limits": {"memory": "256Mi"}},
            {"requests": {"cpu": "500m", "memory": "32Mi"}, "limits": {"memory": "256Mi"}},
            {"requests": {"cpu": "500m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}},
        ], id="resources",
    ),
    pytest.param(
        ["label web tier=frontend", "please label the web deployment team=shop",
         "remove label tier from wbe"],
        labels, [{"tier": "frontend"}, {"tier": "frontend", "team": "shop"}, {"team": "shop"}],
        id="labels",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("asked", "read", "expected"), CASES)
def test_an_everyday_change_is_carried_out_as_asked(
    crew: Crew, asked: list[str], read: Live, expected: list[Any]
) -> None:
    for number, (text, wanted) in enumerate(zip(asked, expected, strict=True)):
        outcome = crew.ask(text, thread=f"t{number}")
        assert outcome.data.get("outcome") == "done", (text, outcome.answer)
        got = read(crew)
        if isinstance(wanted, dict) and read is labels:
            got = {k: v for k, v in got.items() if k != "app"}
        assert got == wanted, (text, outcome.answer)
        steps = outcome.data["steps"]
        assert any(s.startswith("policy store approved it") for s in steps), steps
        assert any(s.startswith("dry run of ") for s in steps), steps
    assert all(m.startswith("applied: ") for m in crew.mutations()), crew.mutations()
    assert len(crew.mutations()) == len(asked)  # one audited write per change, no more


def test_restart_and_annotate_and_roll_back(crew: Crew) -> None:
    assert restarted(crew) == ""
    assert crew.ask("can you bounce the web pods please").data["outcome"] == "done"
    first = restarted(crew)
    assert first
    assert crew.ask("restart wbe", thread="2").data["outcome"] == "done"
    assert restarted(crew) not in ("", first)

    crew.ask("annotate web owner=alice", thread="3")
    assert annotations(crew).get("owner") == "alice"

    crew.ask("set the image of web to nginx:1.26", thread="4")
    assert image(crew) == "nginx:1.26"
    outcome = crew.ask("roll back web", thread="5")
    assert outcome.data["outcome"] == "done", outcome.answer
    assert image(crew) == "nginx:1.27"
    crew.ask("set the image of web to nginx:1.26", thread="6")
    outcome = crew.ask("please roll the web deployment back", thread="7")
    assert outcome.data["outcome"] == "done", outcome.answer
    assert image(crew) == "nginx:1.27"


def test_pause_and_resume_a_rollout(crew: Crew) -> None:
    crew.ask("pause the rollout of web")
    assert crew.web()["spec"].get("paused") is True
    crew.ask("resume web", thread="2")
    assert not crew.web()["spec"].get("paused")


def test_scaling_to_zero_is_asked_back_and_done_only_after_yes(crew: Crew) -> None:
    asked = crew.ask("take web down", thread="z")
    assert asked.clarifying and "reply 'yes'" in asked.answer, asked.answer
    assert asked.data["confirm"]["replicas"] == 0
    assert replicas(crew) == 2 and crew.mutations() == []

    refused = crew.ask("no, leave it", thread="z")
    assert replicas(crew) == 2 and crew.mutations() == []
    assert refused.data.get("outcome") != "done"

    crew.ask("stop the web deployment", thread="z")
    done = crew.ask("yes", thread="z")
    assert done.data["outcome"] == "done", done.answer
    assert replicas(crew) == 0
    assert len(crew.mutations()) == 1


@pytest.mark.parametrize(
    "question",
    ["is web healthy?", "why did the scale of web fail?", "what's wrong with the rollout of web",
     "is web scaled?", "why does web keep restarting?"],
)  # fmt: skip
def test_a_question_never_changes_anything(crew: Crew, question: str) -> None:
    before = crew.web()["metadata"]["generation"]
    outcome = crew.ask(question)
    assert outcome.task != "change" and outcome.task != "heal", (question, outcome.task)
    assert crew.web()["metadata"]["generation"] == before
    assert crew.mutations() == []


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("set web memory to lots", "how much?"),
        ("scale web", "to how many replicas?"),
        ("scale frontend to 3", "I found nothing called 'frontend'"),
        ("set the image of web container sidecar to nginx:1.26", "has no container 'sidecar'"),
    ],
)
def test_a_change_that_is_not_precise_is_asked_about_and_nothing_changes(
    crew: Crew, text: str, said: str
) -> None:
    before = crew.web()["metadata"]["generation"]
    outcome = crew.ask(text)
    assert outcome.clarifying and said in outcome.answer, outcome.answer
    assert crew.web()["metadata"]["generation"] == before and crew.mutations() == []


def test_a_change_policy_refuses_is_refused_with_its_reasons(crew: Crew) -> None:
    crew.deploy_web("shop")  # the shipped CapacityPolicy keeps the shop's at 3 or more
    crew.kubectl("scale", "deploy/web", "-n", "shop", "--replicas=3")
    outcome = crew.ask("scale web in shop to 1")
    assert outcome.data["outcome"] == "refused", outcome.answer
    assert "CapacityPolicy shop-min-capacity" in outcome.answer
    assert crew.web("shop")["spec"]["replicas"] == 3 and crew.mutations() == []


def test_a_change_that_does_not_hold_is_put_back(crew: Crew) -> None:
    outcome = crew.ask("set the image of web to nginx:0.0.0-missing")
    assert outcome.data["outcome"] == "undone", outcome.answer
    assert image(crew) == "nginx:1.27"
    assert "rolled Deployment web in staging back to revision 1" in outcome.answer


def test_a_delete_is_asked_back_and_made_only_after_yes(crew: Crew) -> None:
    [pod] = crew.kubectl.json("get", "pods", "-n", "staging", "-l", "app=web")["items"][:1]
    name = pod["metadata"]["name"]
    asked = crew.ask(f"delete pod {name}", thread="d")
    assert asked.clarifying and "reply 'yes'" in asked.answer, asked.answer
    assert crew.kubectl.json("get", "pod", name, "-n", "staging")["metadata"]["name"] == name
    assert crew.mutations() == []
    done = crew.ask("yes", thread="d")
    assert done.data.get("outcome") == "done", done.answer
    left = crew.kubectl.run("get", "pod", name, "-n", "staging", "-o", "json", check=False)
    assert left.returncode != 0 or '"deletionTimestamp"' in left.stdout  # gone, or going
    assert crew.web()["spec"]["replicas"] == 2  # the Deployment makes another pod


def test_deletes_in_the_shop_go_as_its_policies_say(crew: Crew) -> None:
    crew.deploy_web("shop")
    crew.kubectl("scale", "deploy/web", "-n", "shop", "--replicas=3")
    crew.ask("delete the web deployment in shop", thread="d")
    refused = crew.ask("yes", thread="d")  # the shop keeps 3 replicas of each workload
    assert refused.data.get("outcome") == "refused", refused.answer
    assert "CapacityPolicy shop-min-capacity" in refused.answer
    crew.kubectl("create", "configmap", "old-flags", "-n", "shop", "--from-literal=a=b")
    crew.ask("delete the configmap old-flags in shop", thread="c")
    waiting = crew.ask("yes", thread="c")  # every other delete in the shop is shop-admins'
    assert waiting.data.get("outcome") == "escalated", waiting.answer
    assert "shop-admins" in waiting.answer
    assert crew.web("shop")["metadata"]["name"] == "web" and crew.mutations() == []
    assert crew.kubectl.json("get", "configmap", "old-flags", "-n", "shop")["data"] == {"a": "b"}


def test_a_namespace_delete_is_the_platforms(crew: Crew) -> None:
    outcome = crew.ask("delete the namespace staging now")
    assert outcome.clarifying and "Platform" in outcome.answer, outcome.answer
    assert crew.mutations() == []


def test_is_anything_broken_sweeps_the_namespace_and_changes_nothing(crew: Crew) -> None:
    crew.kubectl("set", "image", "deploy/web", "web=ngnix:1.27", "-n", "staging")
    eventually(
        lambda: "ngnix:1.27" in crew.ask("is anything broken in staging?").answer,
        what="the pull failure seen",
    )
    outcome = crew.ask("is anything broken in staging?")
    assert "problem(s) in staging" in outcome.answer, outcome.answer
    assert "Deployment web" in outcome.answer and "ngnix:1.27" in outcome.answer, outcome.answer
    assert crew.mutations() == []
