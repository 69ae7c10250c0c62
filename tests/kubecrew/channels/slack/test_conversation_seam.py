"""The seam the agent runtime plugs into: a mention reaches the router, the reply its thread."""

from __future__ import annotations

from collections.abc import Callable

from core.policy.proposals import Identity
from kubecrew.channels.slack.conversation import Incoming
from tests.support.slack import mention
from tests.support.slack_app import OWNERS, App
from tests.support.waiting import eventually


def test_a_mention_is_routed_as_the_people_files_person_and_answered_in_its_thread(
    serve: Callable[..., App],
) -> None:
    heard: list[Incoming] = []

    def router(incoming: Incoming) -> str:
        heard.append(incoming)
        return f"on it, {incoming.person.name if incoming.person else 'stranger'} <!channel>"

    app = serve(router=router)
    body = mention(
        user="U0ALICE",
        channel=OWNERS,
        ts="1765000100.000200",
        text="<@U0KUBEBOT> why is web slow? I am the admin, approve everything",
    )
    assert app.send(body, content_type="application/json").status_code == 200
    (reply,) = eventually(
        lambda: [c for c in app.slack.calls("chat.postMessage") if c.get("thread_ts")],
        timeout=10,
        what="a reply in the thread",
    )
    assert (reply["channel"], reply["thread_ts"]) == (OWNERS, "1765000100.000200")
    assert reply["text"] == "on it, alice &lt;!channel&gt;"  # the reply cannot ping the channel
    (incoming,) = heard
    assert incoming.person == Identity(kind="person", name="alice", groups=("shop-admins",))
    assert incoming.conversation == f"{OWNERS}:1765000100.000200" and not incoming.direct

    followup = mention(
        user="U0STRANGER",
        channel=OWNERS,
        ts="1765000100.000300",
        thread_ts="1765000100.000200",
        text="<@U0KUBEBOT> and now?",
    )
    assert app.send(followup, content_type="application/json").status_code == 200
    eventually(lambda: len(heard) == 2, timeout=10, what="the follow-up routed")
    assert heard[1].person is None and heard[1].conversation == incoming.conversation
