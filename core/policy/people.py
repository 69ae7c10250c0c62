"""Who a channel's account is: Slack users and forge logins mapped to the identities policy names.

A ChangePolicy names approvers by user and group (`approvers: {groups: [shop-admins]}`); Slack
knows `U024BE7LH`, GitHub knows `octocat`. The people file says which person each account is
and which groups that person is in, so an answer from any channel is authorised the same way
(`approvals.authorized`). An account that is not in the file is nobody: it may not answer.

    apiVersion: kubecrew.io/v1alpha1
    kind: People
    people:
      - name: alice
        groups: [shop-admins]
        slack: U024BE7LH          # Slack user id (not the display name, which anyone can change)
        github: alice-gh          # forge login (GitHub, or the local provider's review author)
      - name: bob
        groups: [developers]
        slack: U0G9QF9C6

Default location: `$KUBECREW_HOME/people.yaml` (else ~/.kubecrew/people.yaml); the front doors
take `--people FILE`. The file is configuration an operator writes, not something a channel can
change, which is why a Slack user id or login here is enough to vouch for the groups.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from core.errors import InvalidArgument
from core.home import kubecrew_home
from core.policy.proposals import Identity

Account = Literal["slack", "github"]
PEOPLE_ENV = "KUBECREW_PEOPLE"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Person(_Strict):
    name: Annotated[str, Field(min_length=1)]
    groups: list[Annotated[str, Field(min_length=1)]] = []
    slack: str | None = None
    github: str | None = None

    def identity(self) -> Identity:
        return Identity(kind="person", name=self.name, groups=tuple(self.groups))


class People(_Strict):
    apiVersion: Literal["kubecrew.io/v1alpha1"] = "kubecrew.io/v1alpha1"
    kind: Literal["People"] = "People"
    people: list[Person] = []

    @model_validator(mode="after")
    def _unique(self) -> People:
        for key in ("name", "slack", "github"):
            seen: set[str] = set()
            for person in self.people:
                value = getattr(person, key)
                if value is not None and value in seen:
                    raise ValueError(f"{key} {value!r} is given to two people")
                if value is not None:
                    seen.add(value)
        return self

    def by_account(self, account: Account, value: str) -> Identity | None:
        """The person whose `account` is `value`, or None: an unknown account is nobody."""
        found = next((p for p in self.people if getattr(p, account) == value), None)
        return None if found is None else found.identity()


def default_path(environ: Mapping[str, str] = os.environ) -> Path:
    if environ.get(PEOPLE_ENV):
        return Path(environ[PEOPLE_ENV]).expanduser()
    return kubecrew_home(environ) / "people.yaml"


def load_people(path: Path | None = None, environ: Mapping[str, str] = os.environ) -> People:
    """The people file, or nobody when the default file does not exist; precise errors else."""
    chosen = path or default_path(environ)
    if not chosen.exists():
        if path is not None:
            raise InvalidArgument(f"no people file at {chosen}; see `kubecrew approvals --help`")
        return People()
    try:
        return People.model_validate(yaml.safe_load(chosen.read_text()) or {})
    except yaml.YAMLError as exc:
        raise InvalidArgument(f"{chosen}: not YAML: {exc}") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top)"
        raise InvalidArgument(f"{chosen}: {where}: {first['msg']}") from exc
