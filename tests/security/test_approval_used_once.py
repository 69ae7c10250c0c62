"""Finding 9: four concurrent `scale ... proposal=<id>` calls applied one approval four times.

The gate's "applied already" check read the audit log before the write and the write's record
came after it, so calls racing inside that window all passed. Taking an approval up is now one
atomic store operation, `use_approval` (one transaction in SQLite, a compare-and-swap on the
target's object in Kubernetes), made before the write: of concurrent calls one gets it, the
others are refused saying it was used, and a second use after the first never works either.
Real threads call the kube server's tool (SQLite store) and the store itself (Kubernetes store,
one store handle per thread as separate processes would have), at once, against the sandbox.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import TypeVar

import pytest

from core.errors import Conflict
from core.policy.negotiation import negotiate
from core.policy.store.base import Store
from core.policy.store.kubernetes import KubernetesStore
from core.policy.store.sqlite import SqliteStore
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.kube_tools import Answer, KubeTools
from tests.support.kubectl import Kubectl
from tests.support.policies import NOON, POLICIES, defaults, downscale
from tests.support.shop import WEB

CALLERS = 4
T = TypeVar("T")


def at_once(call: Callable[[], T]) -> list[T | BaseException]:
    """`call` from CALLERS threads released together; each one's answer or error."""
    start = threading.Barrier(CALLERS)

    def one() -> T | BaseException:
        start.wait()
        try:
            return call()
        except Exception as exc:  # the refusals are what is counted
            return exc

    with ThreadPoolExecutor(CALLERS) as pool:
        return list(pool.map(lambda _: one(), range(CALLERS)))


def each_with_its_store(opener: Callable[[], Store], use: Callable[[Store], T]) -> list[object]:
    """`use(store)` from CALLERS threads at once, each on a store it opened itself (a SQLite
    connection belongs to its thread; a process of its own would have its own handle too)."""
    start = threading.Barrier(CALLERS)

    def one() -> object:
        store = opener()
        try:
            start.wait()
            return use(store)
        except Exception as exc:  # the refusals are what is counted
            return exc
        finally:
            store.close()

    with ThreadPoolExecutor(CALLERS) as pool:
        return list(pool.map(lambda _: one(), range(CALLERS)))


def approved(store: Store) -> str:
    """A downscale of web the shop's policies approve (countered to 3 replicas)."""
    proposal = downscale()
    store.propose(proposal)
    decision = negotiate(store, defaults(), proposal.id, now=NOON).decision
    assert decision is not None and decision.approves and decision.action.replicas is not None
    assert decision.action.replicas.to == 3
    return proposal.id


def test_concurrent_calls_carrying_one_approval_apply_it_once(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("apply", "-f", "-", input=WEB)
    kubectl("scale", "deploy/web", "-n", "shop", "--replicas=5")
    path = tmp_path / "store.sqlite"
    store = SqliteStore(path)
    proposal = approved(store)
    tools = KubeTools(
        KubeSettings(
            kubeconfig=sandbox.kubeconfig,
            policies=(POLICIES,),
            policy_store=str(path),
            agent="dev-team",
        )
    )

    answers: list[Answer | BaseException] = at_once(
        lambda: tools.call("scale", name="web", namespace="shop", replicas=3, proposal=proposal)
    )

    assert all(isinstance(a, Answer) for a in answers), answers
    applied = [a for a in answers if isinstance(a, Answer) and not a.error]
    refused = [a.text for a in answers if isinstance(a, Answer) and a.error]
    assert len(applied) == 1, [a.text for a in applied]
    assert len(refused) == CALLERS - 1
    for text in refused:  # "applied already" when the winner's write was recorded first
        said = (f"proposal {proposal} was used already", f"proposal {proposal} was applied already")
        assert any(words in text for words in said), text
    mutations = store.audit(kind="mutation")
    assert [m.result for m in mutations if m.result == "applied"] == ["applied"]
    uses = store.audit(subject=proposal, kind="use")
    assert [(u.actor, u.result) for u in uses] == [("agent dev-team", "claimed")]
    assert "whether that write succeeds or fails" in uses[0].summary
    assert store.verify_audit().problems == []
    store.close()


@pytest.mark.parametrize("backend", ["sqlite", "kubernetes"])
def test_of_concurrent_uses_of_one_approval_one_wins(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    def opener() -> Store:
        if backend == "sqlite":
            return SqliteStore(tmp_path / "store.sqlite")
        sandbox: Sandbox = request.getfixturevalue("sandbox")
        return KubernetesStore(kubeconfig=sandbox.kubeconfig)

    first = opener()
    proposal = approved(first)

    results = each_with_its_store(
        opener,
        lambda mine: mine.use_approval(
            proposal, by="agent dev-team", now=NOON + timedelta(hours=1)
        ),
    )

    won = [r for r in results if not isinstance(r, BaseException)]
    lost = [r for r in results if isinstance(r, BaseException)]
    assert len(won) == 1, results
    assert all(isinstance(r, Conflict) and "was used already" in r.message for r in lost), lost
    with pytest.raises(Conflict, match="was used already"):
        first.use_approval(proposal, by="agent dev-team", now=NOON, dry_run=True)
    assert [u.result for u in first.audit(subject=proposal, kind="use")] == ["claimed"]
    assert first.verify_audit().problems == []
    first.close()
