"""Concurrency: conflicting proposals are never both approved, and a proposal is decided once.

Two proposals on one target are run step by step (propose, deliberate on what was read, write)
in every order hypothesis picks, so a write can land on a read that is already stale; a lost
write re-reads through `negotiate`, as a real agent does. Then real processes race to decide the
same proposals in one SQLite file.
"""

from __future__ import annotations

import multiprocessing
import tempfile
from collections.abc import Iterator
from multiprocessing.synchronize import Barrier
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import Conflict
from core.policy.negotiation import deliberate, negotiate
from core.policy.proposals import Proposal, ProposalRecord
from core.policy.store.sqlite import SqliteStore
from tests.support.policies import NOON, defaults, downscale

POLICIES = defaults()
APPROVED = ("approved", "approved-as-countered")


def steps(store: SqliteStore, proposal: Proposal) -> Iterator[None]:
    """One agent's negotiation cut at its seams: propose, read and deliberate, write."""
    store.propose(proposal)
    yield
    record = store.get(proposal.id)
    target = store.target(proposal.action.target)
    outcome = deliberate(record.proposal, POLICIES, target, now=NOON)
    yield
    try:
        store.decide(
            proposal.id,
            version=record.version,
            events=outcome.events(after=len(record.transcript)),
            decision=outcome.decision,
            approval=outcome.approval,
        )
    except Conflict:
        negotiate(store, POLICIES, proposal.id, now=NOON)  # lost the race: read, decide again
    yield


def decided_once(record: ProposalRecord) -> bool:
    return [event.kind for event in record.transcript].count("decided") == 1


@settings(max_examples=60, deadline=None)
@given(
    order=st.permutations(["a", "a", "a", "b", "b", "b"]),
    targets=st.tuples(st.sampled_from([1, 3, 4]), st.sampled_from([1, 2, 3, 4])),
)
def test_no_interleaving_approves_two_conflicting_proposals(
    order: list[str], targets: tuple[int, int]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteStore(Path(folder) / "store.sqlite")
        proposals = {
            "a": downscale(targets[0], proposer="a"),
            "b": downscale(targets[1], proposer="b"),
        }
        agents = {name: steps(store, proposal) for name, proposal in proposals.items()}
        for name in order:
            next(agents[name])
        records = [store.get(proposal.id) for proposal in proposals.values()]
        target = store.target(proposals["a"].action.target)
        store.close()
    assert all(record.decision is not None and decided_once(record) for record in records)
    approved = [r for r in records if r.decision and r.decision.outcome in APPROVED]
    # Two approvals only when the second was proposed after the first was approved.
    assert len({record.proposal.basis for record in approved}) == len(approved)
    assert target.version == len(approved) >= 1


def race(path: Path, ids: list[str], barrier: Barrier, results: multiprocessing.Queue[str]) -> None:
    store = SqliteStore(path)
    for proposal_id in ids:
        barrier.wait()
        record = negotiate(store, POLICIES, proposal_id, now=NOON)
        assert record.decision is not None
        results.put(f"{proposal_id} {record.decision.model_dump_json()}")
    store.close()


def test_two_processes_deciding_the_same_proposal_decide_it_once(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    store = SqliteStore(path)
    proposals = [downscale(to) for to in (1, 3, 2, 4, 1, 3)]
    for proposal in proposals:
        store.propose(proposal)
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(2), context.Queue()
    ids = [proposal.id for proposal in proposals]
    workers = [context.Process(target=race, args=(path, ids, barrier, results)) for _ in "ab"]
    for worker in workers:
        worker.start()
    answers = [results.get(timeout=60) for _ in range(2 * len(ids))]
    for worker in workers:
        worker.join(timeout=30)
        assert worker.exitcode == 0
    for proposal_id in ids:
        seen = {answer for answer in answers if answer.startswith(f"{proposal_id} ")}
        assert len(seen) == 1, seen  # both processes got the one decision
        assert decided_once(store.get(proposal_id))
    approved = [p for p in proposals if (d := store.get(p.id).decision) and d.outcome in APPROVED]
    assert [p.id for p in approved] == [ids[0]]  # the rest were superseded by the first
    store.close()
