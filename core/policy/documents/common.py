"""The parts every policy kind shares: the strict base, metadata, names, durations, rules.

Field names are the YAML's own camelCase, so a validation error's location is the path a person
reads in the file (`spec.rules[1].when`) and a document dumps back as it was written. Every model
forbids unknown fields and is strict about types (`minReplicas: "3"` is an error, not a 3): a
policy that silently means something else than its author thought is worse than a refused one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta
from typing import Annotated, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    model_validator,
)

from core.policy import cel

API_VERSION: Final = "kubecrew.io/v1alpha1"

ActionType = Literal[
    "scale",
    "patch",
    "apply",
    "delete",
    "drain",
    "cordon",
    "uncordon",
    "evict",
    "restart",
    "rollback",
    "resize",
]
Concern = Literal["security", "reliability", "cost"]
Agent = Literal["platform", "cluster-operator", "dev-team"]
CONCERNS: tuple[Concern, ...] = ("security", "reliability", "cost")
AGENT_TITLES: dict[Agent, str] = {
    "platform": "Platform",
    "cluster-operator": "Cluster Operator",
    "dev-team": "Dev Team",
}  # how people name the agents

_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = rf"{_DNS_LABEL}(\.{_DNS_LABEL})*"
_LABEL_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"


class Located(ValueError):
    """A validator's error about a field below the one it validates: `path` is relative to it.

    Pydantic locates a model validator's error at the model; the loader appends `path`, so a
    duplicate rule name is reported at `spec.rules[1].name`, not at `spec`.
    """

    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.path = path


class Strict(BaseModel):
    """Base of every document part: unknown fields and loose types are errors; values frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _label_key(value: str) -> str:
    prefix, _, name = value.rpartition("/")
    if prefix and (len(prefix) > 253 or not re.fullmatch(_SUBDOMAIN, prefix)):
        raise ValueError(f"label key {value!r}: the prefix must be a DNS subdomain")
    if len(name) > 63 or not re.fullmatch(_LABEL_NAME, name):
        raise ValueError(
            f"label key {value!r}: the name part must be 1-63 letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit"
        )
    return value


def _label_value(value: str) -> str:
    if value and (len(value) > 63 or not re.fullmatch(_LABEL_NAME, value)):
        raise ValueError(
            f"label value {value!r}: at most 63 letters, digits, '-', '_' or '.', starting and "
            "ending with a letter or digit"
        )
    return value


def _dns_label(value: str) -> str:
    if len(value) > 63 or not re.fullmatch(_DNS_LABEL, value):
        raise ValueError(f"{value!r} is not a DNS label (lower-case letters, digits and '-')")
    return value


def _subdomain(value: str) -> str:
    if len(value) > 253 or not re.fullmatch(_SUBDOMAIN, value):
        raise ValueError(
            f"{value!r} is not a Kubernetes name (lower-case letters, digits, '-', '.')"
        )
    return value


def _kind(value: str) -> str:
    if not re.fullmatch(r"[A-Z][A-Za-z0-9]*", value):
        raise ValueError(f"{value!r} is not a Kubernetes kind (CamelCase, such as Deployment)")
    return value


LabelKey = Annotated[str, AfterValidator(_label_key)]
LabelValue = Annotated[str, AfterValidator(_label_value)]
Labels = dict[LabelKey, LabelValue]
DnsLabel = Annotated[str, AfterValidator(_dns_label)]
Name = Annotated[str, AfterValidator(_subdomain)]
Kind = Annotated[str, AfterValidator(_kind)]
CelCondition = Annotated[str, AfterValidator(cel.check)]

_DURATION = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")


def parse_duration(value: object) -> timedelta:
    """A Go-style duration as Kubernetes writes them: `1h`, `30m`, `1h30m`, `90s`."""
    found = _DURATION.fullmatch(value) if isinstance(value, str) else None
    if found is None or not value or not any(found.groups()):
        raise ValueError(f"{value!r} is not a duration; write it like 1h, 30m, 1h30m or 90s")
    hours, minutes, seconds = (int(part or 0) for part in found.groups())
    duration = timedelta(hours=hours, minutes=minutes, seconds=seconds)
    if not duration:
        raise ValueError(f"{value!r}: a duration must be longer than zero")
    return duration


def format_duration(duration: timedelta) -> str:
    seconds = int(duration.total_seconds())
    parts = [(seconds // 3600, "h"), (seconds % 3600 // 60, "m"), (seconds % 60, "s")]
    return "".join(f"{amount}{unit}" for amount, unit in parts if amount) or "0s"


Duration = Annotated[
    timedelta, BeforeValidator(parse_duration), PlainSerializer(format_duration, return_type=str)
]


def _int_or_percent(value: object) -> object:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    found = re.fullmatch(r"(\d{1,3})%", value) if isinstance(value, str) else None
    if found is None or int(found.group(1)) > 100:
        raise ValueError(f"{value!r} is neither a count (0 or more) nor a percentage like '50%'")
    return value


# One validator rather than a union, so a bad value gets one error, not one per union member.
IntOrPercent = Annotated[int | str, BeforeValidator(_int_or_percent)]


def resolve_count(value: int | str, total: int) -> int:
    """A count or a percentage of `total`, rounded up as PodDisruptionBudgets round."""
    if isinstance(value, int):
        return value
    return -(-int(value[:-1]) * total // 100)


class Metadata(Strict):
    name: Name
    labels: Labels = {}
    annotations: dict[str, str] = {}


class Principals(Strict):
    """Who may decide: people by name and by group (as the identity provider spells them), and
    agents by name. An agent is named only where the org delegates to it explicitly (an approval
    rule's `agents: [platform]`, or the PriorityPolicy's arbiter), never through a group."""

    users: list[Annotated[str, Field(min_length=1)]] = []
    groups: list[Annotated[str, Field(min_length=1)]] = []
    agents: list[Agent] = []

    @model_validator(mode="after")
    def _someone(self) -> Principals:
        if not self.users and not self.groups and not self.agents:
            raise ValueError("name at least one user, group or agent")
        return self

    def describe(self) -> str:
        named = [self.people()] if self.users or self.groups else []
        return ", ".join(named + [f"agent {agent}" for agent in self.agents])

    def people(self) -> str:
        """The people alone, as `describe` names them ("" when only agents decide): whom a
        person is told to ask, since a person cannot ask an agent to review."""
        return ", ".join(
            [f"user {user}" for user in self.users] + [f"group {g}" for g in self.groups]
        )

    def agents_settle(self) -> str:
        """What the named agents may do, said to a person beside `people` ("" when none)."""
        if not self.agents:
            return ""
        named = " or ".join(f"the {AGENT_TITLES[agent]} agent" for agent in self.agents)
        if self.users or self.groups:
            return f"{named} may also settle it under org policy"
        return f"only {named} settles it, under org policy"

    def with_agent(self, agent: Agent) -> Principals:
        """These principals and `agent`, named once."""
        agents = self.agents if agent in self.agents else [*self.agents, agent]
        return self.model_copy(update={"agents": agents})


class Condition(Strict):
    """A named CEL condition over the evaluation input, limited to some action types."""

    name: DnsLabel
    description: str = ""
    actions: list[ActionType] | None = None  # None: every action type
    when: CelCondition
    message: str = ""

    def applies_to(self, action_type: str) -> bool:
        return self.actions is None or action_type in self.actions


class Rule(Condition):
    """A condition with an effect: when it holds, the rule fires (rejects, or warns)."""

    effect: Literal["reject", "warn"] = "reject"


def unique_names(
    names: Sequence[str], *, field: str = "rules", reserved: tuple[str, ...] = ()
) -> None:
    """Refuse two rules of one policy with one name, or a rule named like a built-in one."""
    seen: set[str] = set()
    for index, name in enumerate(names):
        where = (field, index, "name")
        if name in reserved:
            raise Located(
                where,
                f"{name!r} is the name of a built-in rule of this kind ({', '.join(reserved)}); "
                "choose another",
            )
        if name in seen:
            raise Located(where, f"the name {name!r} is used twice in {field}")
        seen.add(name)
