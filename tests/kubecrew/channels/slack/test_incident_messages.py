"""One incident, one Slack message: posted to the owners' channel when the incident opens, then
edited as the handling passes the loop's nodes and when it ends; a restart posts nothing new,
and an incident that was resolved and came back gets a message of its own.

The desk is the watcher's own (`Desk`, with the incidents store on disk) fed signals directly,
the Slack Web API is the local fake server, and `kubecrew watch --slack-channel`'s factory
(`open_messages`, with its auth.test) builds the messages. The handler reports the remediation
loop's node names as `heal(..., on_node=...)` does, and holds until the test lets it go, so
signals arrive while the incident is being handled, as they do in production.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import anyio
import pytest

from agents.runtime.notify.desk import Desk, HandlerResult
from agents.runtime.notify.incidents import Incident, Incidents
from agents.runtime.notify.signals import Signal
from core.policy.settings import SHIPPED
from kubecrew.channels.slack.incidents import (
    IncidentMessages,
    OnNode,
    Stepped,
    healing,
    open_messages,
)
from sandbox.server import Sandbox
from tests.support.diagnosis import Doctor, deployment
from tests.support.kubectl import Kubectl
from tests.support.mcp_hosts import KUBECREW
from tests.support.slack import FakeSlack, running_slack
from tests.support.team import FAST, make_team
from tests.support.waiting import eventually

OWNERS = "C05H0PADM1"  # policies/ownership.yaml: the shop's channel
ELSEWHERE = "C0DEFAULT1"  # `--slack-channel`: for targets nobody owns
TOKEN = "xoxb-1234-5678-incident-test-token"
LOOP = ("learn", "recommend", "plan", "decide", "mutate", "validate", "done")


def crashing(n: int = 0, *, namespace: str = "shop", summary: str = "") -> Signal:
    return Signal(
        source="watch",
        kind="Deployment",
        namespace=namespace,
        name="web",
        finding="CrashLoopBackOff",
        summary=summary or f"BackOff on Pod/web-{n}: Back-off restarting failed container",
    )


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with running_slack(bot_token=TOKEN, channels={OWNERS, ELSEWHERE}) as fake:
        yield fake


def messages(slack: FakeSlack, home: Path) -> IncidentMessages:
    return open_messages(
        ELSEWHERE,
        api_url=slack.url,
        incidents=home / "incidents.sqlite",
        policies=(SHIPPED,),
        environ={"SLACK_BOT_TOKEN": TOKEN},
    )


def handling(
    nodes: tuple[str, ...], *, release: anyio.Event, resolved: bool, answer: str = "done"
) -> Stepped:
    async def handle(incident: Incident, on_node: OnNode) -> HandlerResult:
        await release.wait()
        for node in nodes:
            on_node(node)
            await anyio.sleep(0)  # let the message follow, as the loop's awaits do
        return HandlerResult(answer, resolved=resolved)

    return handle


def run_desk(
    home: Path,
    slack: FakeSlack,
    signals: list[Signal],
    *,
    nodes: tuple[str, ...] = LOOP,
    resolved: bool = True,
    answer: str = "fixed: the image is back to busybox:1.36",
) -> None:
    """A watcher's life: a desk on the incidents file takes `signals`, then lets the handler go
    and waits for every handling to end."""

    async def go() -> None:
        release = anyio.Event()
        store = Incidents(home / "incidents.sqlite")
        try:
            posting = messages(slack, home)
            step = handling(nodes, release=release, resolved=resolved, answer=answer)
            async with anyio.create_task_group() as tasks:
                desk = Desk(store, posting.handler(step), tasks, say=lambda line: None)
                for signal in signals:
                    await desk.take(signal)
                release.set()
        finally:
            store.close()

    anyio.run(go)


def shown(slack: FakeSlack) -> list[str]:
    """Each message's stages as it went: the text of its post, then of each update."""
    sent = [c.args for c in slack.log if c.method in ("chat.postMessage", "chat.update")]
    return [str(args["text"]).split(":", 1)[0] for args in sent]


def test_ten_signals_are_one_message_updated_through_the_loop(
    slack: FakeSlack, tmp_path: Path
) -> None:
    run_desk(tmp_path, slack, [crashing(n) for n in range(10)])

    (post,) = slack.calls("chat.postMessage")
    assert post["channel"] == OWNERS
    updates = slack.calls("chat.update")
    assert {u["ts"] for u in updates} == {slack_ts(slack)}
    assert shown(slack) == [
        "opened",
        "learning",
        "recommending",
        "changing",
        "validating",
        "healed",
    ]
    (final,) = slack.messages.values()
    assert final["text"] == "healed: CrashLoopBackOff on Deployment web in shop"
    body = json.dumps(final["blocks"], ensure_ascii=False)
    assert "Deployment/shop/web" in body and "fixed: the image is back" in body
    assert "opened → learning → recommending → changing → validating → healed" in body


def test_a_restart_posts_no_new_message(slack: FakeSlack, tmp_path: Path) -> None:
    # Still failing after its handling (diagnosed), so the restarted desk merges, not opens.
    run_desk(tmp_path, slack, [crashing(n) for n in range(3)], nodes=(), resolved=False)
    run_desk(tmp_path, slack, [crashing(n) for n in range(3, 6)], nodes=(), resolved=False)
    assert len(slack.calls("chat.postMessage")) == 1

    # A watcher that died while handling re-handles that same opening: the ledger's message.
    store = Incidents(tmp_path / "incidents.sqlite")
    try:
        incident = store.get("Deployment/shop/web")
    finally:
        store.close()
    assert incident is not None and incident.count == 6
    again = messages(slack, tmp_path).handler(
        handling(("learn", "escalate"), release=_set(), resolved=False, answer="escalated")
    )
    anyio.run(again, incident)
    assert len(slack.calls("chat.postMessage")) == 1
    assert slack.calls("chat.update")[-1]["ts"] == slack_ts(slack)
    assert shown(slack)[-1] == "escalated"
    assert "6 signals" in json.dumps(next(iter(slack.messages.values()))["blocks"])


def test_a_resolved_incident_that_comes_back_gets_a_second_message(
    slack: FakeSlack, tmp_path: Path
) -> None:
    gone = replace(crashing(), source="alertmanager", firing=False)
    run_desk(tmp_path, slack, [crashing(1), crashing(2)], nodes=(), resolved=False)
    run_desk(tmp_path, slack, [gone], nodes=())  # nothing open: no handling, no message
    assert len(slack.calls("chat.postMessage")) == 1
    store = Incidents(tmp_path / "incidents.sqlite")
    try:
        store.resolve("Deployment/shop/web")  # the patrol found it healthy
    finally:
        store.close()
    run_desk(tmp_path, slack, [crashing(3), crashing(4)])

    first, second = slack.calls("chat.postMessage")
    assert first["channel"] == second["channel"] == OWNERS
    assert "opened 2 times" in second["text"]
    texts = sorted(str(m["text"]) for m in slack.messages.values())
    assert texts == [
        "diagnosed: CrashLoopBackOff on Deployment web in shop",
        "healed: CrashLoopBackOff on Deployment web in shop (opened 2 times)",
    ]


def test_an_incident_resolved_elsewhere_says_so_on_its_message(
    slack: FakeSlack, tmp_path: Path
) -> None:
    """Diagnosed by the watcher, then fixed by someone else (`kubecrew heal`, a person): the
    patrol finds it healthy and the desk resolves it; the one message says so, and why."""
    run_desk(tmp_path, slack, [crashing(1)], nodes=(), resolved=False)
    assert shown(slack) == ["opened", "diagnosed"]

    async def patrol_finds_it_healthy() -> None:
        store = Incidents(tmp_path / "incidents.sqlite")
        try:
            posting = messages(slack, tmp_path)
            step = handling((), release=_set(), resolved=False)
            async with anyio.create_task_group() as tasks:
                desk = Desk(store, posting.handler(step), tasks, say=lambda line: None)
                desk.resolve("Deployment/shop/web", why="the patrol finds nothing wrong now")
                desk.resolve("Deployment/shop/web", why="said twice")  # already resolved
        finally:
            store.close()

    anyio.run(patrol_finds_it_healthy)
    assert len(slack.calls("chat.postMessage")) == 1
    assert shown(slack) == ["opened", "diagnosed", "resolved"]
    (final,) = slack.messages.values()
    assert final["text"] == "resolved: CrashLoopBackOff on Deployment web in shop"
    body = json.dumps(final["blocks"], ensure_ascii=False)
    assert "Resolved: the patrol finds nothing wrong now" in body
    assert "1 signals · from watch · diagnosed → resolved" in body

    # A handling of that same opening that ends late leaves the last word to the resolution.
    store = Incidents(tmp_path / "incidents.sqlite")
    try:
        incident = store.get("Deployment/shop/web")
    finally:
        store.close()
    assert incident is not None
    late = messages(slack, tmp_path).handler(handling((), release=_set(), resolved=False))
    anyio.run(late, incident)
    assert shown(slack)[-1] == "resolved" and len(slack.calls("chat.update")) == 2


def test_no_secret_reaches_slack_and_unowned_targets_go_to_the_given_channel(
    slack: FakeSlack, tmp_path: Path
) -> None:
    leaky = crashing(summary="env SLACK_BOT_TOKEN=xoxb-9999-leaked; Authorization: Bearer s3cr3t")
    run_desk(
        tmp_path,
        slack,
        [replace(leaky, namespace="unowned-team")],
        answer=f"the app logged its token {TOKEN} and xapp-1-A0-secret",
    )

    (post,) = slack.calls("chat.postMessage")
    assert post["channel"] == ELSEWHERE
    sent = json.dumps([call.args for call in slack.log])
    for secret in (TOKEN, "xoxb-9999-leaked", "s3cr3t", "xapp-1-A0-secret"):
        assert secret not in sent
    assert "[token]" in json.dumps(next(iter(slack.messages.values()))["blocks"])


def test_slack_refusing_the_message_does_not_stop_the_handling(
    slack: FakeSlack, tmp_path: Path
) -> None:
    slack.channels.discard(OWNERS)  # the bot was removed from the owners' channel
    run_desk(tmp_path, slack, [crashing()])
    tried = slack.calls("chat.postMessage")  # each step tries again to post its message
    assert [c["channel"] for c in tried] == [OWNERS] * 6
    assert slack.messages == {} and slack.calls("chat.update") == []
    store = Incidents(tmp_path / "incidents.sqlite")
    try:
        incident = store.get("Deployment/shop/web")
    finally:
        store.close()
    assert incident is not None and incident.state == "resolved"  # the handler ran and fixed it


def slack_ts(slack: FakeSlack) -> str:
    (ts,) = {ts for _, ts in slack.messages}
    return ts


def _set() -> anyio.Event:
    event = anyio.Event()
    event.set()
    return event


def test_kubecrew_watch_posts_the_diagnosis_of_a_crash_loop_to_the_owners(
    sandbox: Sandbox, kubectl: Kubectl, slack: FakeSlack, tmp_path: Path
) -> None:
    kubectl("create", "namespace", "shop")
    bad = {"image": "busybox:1.36", "command": ["sh", "-c", "echo config is broken; exit 3"]}
    kubectl("apply", "-f", "-", input=deployment("web", bad))
    env = {**os.environ, "KUBECREW_HOME": str(tmp_path / "home"), "KUBECREW_MODEL_GUARD": "1"}
    env.pop("KUBECREW_MODEL", None)
    env["SLACK_BOT_TOKEN"] = TOKEN
    log = tmp_path / "watch.log"
    with log.open("w") as sink:
        process = subprocess.Popen(
            [KUBECREW, "watch", "--kubeconfig", str(sandbox.kubeconfig), "-n", "shop",
             "--every", "0", "--slack-channel", ELSEWHERE, "--slack-api-url", slack.url],
            stdout=subprocess.PIPE, stderr=sink, text=True, env=env,
        )  # fmt: skip
        try:
            eventually(lambda: "diagnosed" in shown(slack), timeout=45, what="the diagnosis shown")
            process.send_signal(signal.SIGINT)
            process.communicate(timeout=20)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert process.returncode == 0, log.read_text()
    (post,) = slack.calls("chat.postMessage")
    assert post["channel"] == OWNERS
    assert shown(slack) == ["opened", "diagnosed"]
    (final,) = slack.messages.values()
    assert "exit" in json.dumps(final["blocks"])  # the Dev Team's answer: the container exits
    assert TOKEN not in log.read_text()


def test_kubecrew_watch_without_a_bot_token_says_what_to_set(tmp_path: Path) -> None:
    env = {**os.environ, "KUBECREW_HOME": str(tmp_path / "home")}
    env.pop("SLACK_BOT_TOKEN", None)
    done = subprocess.run(
        [KUBECREW, "watch", "--kubeconfig", str(tmp_path / "none"), "--slack-channel", OWNERS],
        capture_output=True, text=True, env=env, timeout=30,
    )  # fmt: skip
    assert done.returncode == 1
    assert "$SLACK_BOT_TOKEN" in done.stderr and "xoxb-" in done.stderr


def test_a_healed_image_typo_shows_each_step_of_the_loop(
    sandbox: Sandbox, kubectl: Kubectl, slack: FakeSlack, tmp_path: Path
) -> None:
    (tmp_path / "team").mkdir()
    team = make_team(sandbox, kubectl, tmp_path / "team")
    team.commit("web: move to alpine", "nginx:1.27-alpinee")
    team.sync()
    Doctor(sandbox).finding("ImagePullBackOff", namespace="shop", kind="deployment", name="web")
    typo = replace(crashing(), finding="ImagePullBackOff", summary="Failed to pull image")

    async def go() -> None:
        store = Incidents(tmp_path / "incidents.sqlite")
        try:
            posting = messages(slack, tmp_path)
            loop = healing(team.servers, home=team.home, settings=FAST)
            async with anyio.create_task_group() as tasks:
                await Desk(store, posting.handler(loop), tasks, say=lambda line: None).take(typo)
        finally:
            store.close()

    anyio.run(go)
    (post,) = slack.calls("chat.postMessage")
    assert post["channel"] == OWNERS
    assert shown(slack) == [
        "opened",
        "learning",
        "recommending",
        "changing",
        "validating",
        "healed",
    ]
    final = json.dumps(next(iter(slack.messages.values()))["blocks"])
    assert "set image of container web to nginx:1.27" in final
