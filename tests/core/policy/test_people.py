"""The people file: which person a Slack user or forge login is, and the groups they answer for."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import InvalidArgument
from core.policy.approvals import authorized
from core.policy.documents.common import Principals
from core.policy.people import load_people

PEOPLE = """\
apiVersion: kubecrew.io/v1alpha1
kind: People
people:
  - {name: alice, groups: [shop-admins], slack: U024BE7LH, github: alice-gh}
  - {name: bob, groups: [developers], slack: U0G9QF9C6}
"""
ADMINS = Principals(groups=["shop-admins"])


def test_an_account_is_the_person_the_file_names_with_their_groups(tmp_path: Path) -> None:
    (tmp_path / "people.yaml").write_text(PEOPLE)
    people = load_people(tmp_path / "people.yaml")
    alice = people.by_account("github", "alice-gh")
    assert alice is not None and (alice.name, alice.groups) == ("alice", ("shop-admins",))
    assert people.by_account("slack", "U024BE7LH") == alice
    bob = people.by_account("slack", "U0G9QF9C6")
    assert bob is not None and not authorized(ADMINS, bob)
    assert authorized(ADMINS, alice)


def test_an_unknown_account_is_nobody(tmp_path: Path) -> None:
    (tmp_path / "people.yaml").write_text(PEOPLE)
    people = load_people(tmp_path / "people.yaml")
    assert people.by_account("slack", "U999") is None
    assert people.by_account("github", "bob") is None  # bob has no forge login here


def test_no_default_file_means_nobody_but_a_missing_given_file_is_an_error(
    tmp_path: Path,
) -> None:
    assert load_people(environ={"KUBECREW_HOME": str(tmp_path)}).people == []
    with pytest.raises(InvalidArgument, match="no people file at"):
        load_people(tmp_path / "absent.yaml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("people:\n  - {name: a, slack: U1}\n  - {name: b, slack: U1}\n", "slack 'U1' is given"),
        ("people:\n  - {name: a, github: x}\n  - {name: a}\n", "name 'a' is given to two"),
        ("people:\n  - {name: a, email: a@x}\n", r"people\.0\.email: Extra inputs"),
        ("people: [\n", "not YAML"),
    ],
)
def test_a_bad_people_file_is_refused_naming_the_field(
    tmp_path: Path, text: str, message: str
) -> None:
    (tmp_path / "people.yaml").write_text(text)
    with pytest.raises(InvalidArgument, match=message):
        load_people(tmp_path / "people.yaml")
