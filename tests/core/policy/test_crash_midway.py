"""A crash in the middle of a decision leaves nothing half-written, and races end a request once.

A real child process negotiates an escalating proposal and is paused, by a trace hook in its own
script, at the first audit INSERT: the proposal's UPDATE, its transcript lines and the approval
request are already written inside the open transaction. It is killed with SIGKILL there. The
store must still hold the proposal open with no trace of the decision, a clean audit chain, and
a later `negotiate` must decide it exactly once. Then two processes answer one request at once:
one answer ends it, the other is refused.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from multiprocessing.synchronize import Barrier
from pathlib import Path

from core.errors import Conflict
from core.policy import approvals, audit
from core.policy.negotiation import negotiate
from core.policy.proposals import AnswerVerdict, Identity
from core.policy.store.sqlite import SqliteStore
from tests.support.policies import NOON, defaults, downscale

ROOT = Path(__file__).parents[3]
CHILD = """
import sys, time
from pathlib import Path
from core.policy.negotiation import negotiate
from core.policy.store.sqlite import SqliteStore
from tests.support.policies import NOON, defaults, downscale

path, proposal_id, marker = sys.argv[1:]
policies = defaults()
store = SqliteStore(Path(path))

def pause(statement: str) -> None:
    # The test's pause hook: hold the decision's transaction open at its first audit record.
    if statement.startswith("INSERT INTO audit"):
        Path(marker).write_text("paused")
        time.sleep(600)

store._db.set_trace_callback(pause)
negotiate(store, policies, proposal_id, now=NOON)
"""


def test_a_decider_killed_mid_transaction_leaves_the_proposal_open(tmp_path: Path) -> None:
    path, marker = tmp_path / "store.sqlite", tmp_path / "paused"
    store = SqliteStore(path)
    proposal = downscale(counters="refuse")
    store.propose(proposal)
    (tmp_path / "child.py").write_text(CHILD)
    child = subprocess.Popen(
        [sys.executable, str(tmp_path / "child.py"), str(path), proposal.id, str(marker)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        deadline = time.monotonic() + 30
        while not marker.exists():
            assert child.poll() is None, "the child ended before reaching its pause"
            assert time.monotonic() < deadline, "the child never reached its pause"
            time.sleep(0.02)
        assert store.get(proposal.id).proposal.state == "open"  # WAL: readers see the old state
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL
    store.close()

    after = SqliteStore(path)
    record = after.get(proposal.id)
    assert (record.proposal.state, record.version, record.decision) == ("open", 1, None)
    assert [event.kind for event in record.transcript] == ["proposed"]
    assert after.approvals() == []
    assert [r.kind for r in after.audit()] == ["proposal"]
    assert audit.verify(after.audit(), after.audit_head()) == []

    decided = negotiate(after, defaults(), proposal.id, now=NOON)
    assert decided.decision is not None and decided.decision.outcome == "escalated"
    assert negotiate(after, defaults(), proposal.id, now=NOON) == decided
    kinds = [event.kind for event in after.get(proposal.id).transcript]
    assert kinds.count("decided") == 1 and kinds.count("approval-requested") == 1
    assert len(after.approvals()) == 1
    assert [r.kind for r in after.audit()].count("decision") == 1
    assert audit.verify(after.audit(), after.audit_head()) == []
    after.close()


def answer_race(
    path: Path,
    ids: list[str],
    name: str,
    barrier: Barrier,
    results: multiprocessing.Queue[str],
) -> None:
    store = SqliteStore(path)
    person = Identity(kind="person", name=name, groups=("shop-admins",))
    verdict: AnswerVerdict = "grant" if name == "alice" else "deny"
    for request_id in ids:
        barrier.wait()
        try:
            ended = approvals.answer(store, request_id, person, verdict, via="cli", now=NOON)
            results.put(f"{request_id} {name} ended {ended.state}")
        except Conflict as exc:
            results.put(f"{request_id} {name} refused {exc.message}")
    store.close()


def test_two_processes_answering_one_request_end_it_once(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    store = SqliteStore(path)
    policies = defaults()
    ids = []
    for _ in range(6):
        proposal = downscale(counters="refuse")
        store.propose(proposal)
        negotiate(store, policies, proposal.id, now=NOON)
        ids += [r.id for r in store.approvals() if r.proposal == proposal.id]
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(2), context.Queue()
    workers = [
        context.Process(target=answer_race, args=(path, ids, name, barrier, results))
        for name in ("alice", "bob")
    ]
    for worker in workers:
        worker.start()
    lines = [results.get(timeout=60) for _ in range(2 * len(ids))]
    for worker in workers:
        worker.join(timeout=30)
        assert worker.exitcode == 0
    for request_id in ids:
        mine = [line.split(" ", 3)[1:] for line in lines if line.startswith(request_id + " ")]
        ended = [m for m in mine if m[1] == "ended"]
        refused = [m for m in mine if m[1] == "refused"]
        assert len(ended) == 1 and len(refused) == 1, mine
        request = store.approval(request_id)
        assert len(request.answers) == 1 and request.answers[0].by.name == ended[0][0]
        assert refused[0][2].startswith(f"{request_id} is already {request.state}")
        transcript = store.get(request.proposal).transcript
        assert [event.kind for event in transcript].count("decided") == 2  # escalated, final
    assert audit.verify(store.audit(), store.audit_head()) == []
    store.close()
