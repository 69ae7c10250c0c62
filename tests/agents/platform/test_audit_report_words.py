"""The audit's summary counts what was fixed, not what was tried, and never ends a line on a
path it does not have."""

from __future__ import annotations

from agents.platform.audits import Audit, Fixed
from agents.platform.report import audit


def fix(delivered: str, path: str = "") -> Fixed:
    return Fixed(
        object="Deployment shop/web", check="no-pdb", delivered=delivered, proposal="", pr=0,
        path=path, why="", steps=[], values=[],
    )  # fmt: skip


def summary(*fixes: Fixed) -> str:
    done = Audit(
        scope="shop", namespaces=["shop"], findings=[], fixes=list(fixes), remaining=[], notes=[]
    )
    return audit(done)


def test_nothing_carried_out_is_not_called_a_fix() -> None:
    text = summary(fix("no-repo"), fix("refused", "apps/shop/pdb.yaml"))
    assert "after 2 fix(es) tried, 0 carried out." in text
    assert "its repository is not reachable\n" in text + "\n"  # no dangling "writing "
    assert "refused by policy, writing apps/shop/pdb.yaml" in text


def test_fixes_that_went_through_are_counted_as_fixes() -> None:
    assert "after 1 fix(es)." in summary(fix("merged", "apps/shop/pdb.yaml"))
    assert "with no fix tried." in summary()
