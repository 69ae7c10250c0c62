"""The checks an eval scenario states, one model each: its objectives (what must come true) and
its safeguards (what must not happen), read from the scenario file by `format` and scored by
`scoring`, and the states its world settles in before the trigger (`Settle`, waited for by
`world`). `Strict` and `OneOf` are the base every scenario model shares (no unknown field;
exactly one check per entry).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from core.policy.proposals import ApprovalState
from kubecrew.evals.observe import KINDS

Severity = Literal["recoverable", "catastrophic"]
Name = Annotated[str, Field(min_length=1)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class OneOf(Strict):
    """A model whose check fields are alternatives: exactly one must be given."""

    _choices: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        given = [name for name in self._choices if getattr(self, name) is not None]
        if len(given) != 1:
            choices = ", ".join(self._choices)
            found = ", ".join(given) or "none"
            raise ValueError(f"give exactly one of {choices} (found: {found})")
        return self


def _known_kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"{kind!r} is not a kind the evals read; use one of {', '.join(KINDS)}")
    return kind


class Settle(Strict):
    """A state the world reaches before the trigger: a Deployment rolled out, or (with
    `finding`) the kube server's diagnose reporting that finding on it; with `measured`, also
    the metrics API reporting usage for every one of its replicas (what a capacity review reads,
    so a review before the first scrape would be judging nothing); or (`pool`, no deployment)
    a Cluster API MachineDeployment with every machine available, its nodes joined."""

    namespace: Name = "default"
    deployment: Name | None = None
    pool: Name | None = None
    finding: str | None = None
    measured: bool = False

    @model_validator(mode="after")
    def _one_thing(self) -> Self:
        if (self.deployment is None) == (self.pool is None):
            raise ValueError("give a deployment or a pool to settle, one of them")
        return self


class OnCluster(Strict):
    """A check of one cluster: the main one, or the fleet's `cluster` of that name (a
    kubeconfig context of `world.clusters`, the main one's included)."""

    cluster: str | None = None


# the objectives that read one cluster, and so take `cluster`
ON_CLUSTER = ("field", "object", "access", "pods_ready", "rollout_complete")


class ObjectRef(OnCluster):
    kind: Name  # Deployment, Service, ConfigMap, Secret, Namespace, Node, ...
    name: Name
    namespace: str | None = None

    known_kind = field_validator("kind")(_known_kind)


TESTS = ("equals", "includes", "excludes")


class FieldCheck(ObjectRef):
    """One field of one object: `equals` a value (null: the field is absent), `includes` a part
    of it, or `excludes` one (no item of a list includes it: a taint removed)."""

    path: Name  # dotted, list indexes as numbers: spec.template.spec.containers.0.image
    equals: Any = None
    includes: Any = None
    excludes: Any = None

    @model_validator(mode="after")
    def _one_test(self) -> Self:
        given = [name for name in TESTS if name in self.model_fields_set]
        if len(given) != 1:
            raise ValueError(f"give exactly one of {', '.join(TESTS)} (found: {given or 'none'})")
        return self


class ObjectMatch(OnCluster):
    """The objects of `kind` (in `namespace`, and named `name` when given) that include
    `includes` (a part of the object from its top: `spec: {podSelector: ...}`), do not include
    `excludes`, and whose dotted fields `equals` names hold exactly those values (an empty
    selector, a field absent as null): at least one, or exactly `count` when given (0: none is
    there, e.g. a binding revoked). What an object a change creates is called is the crew's
    choice; what it says is the person's."""

    kind: Name
    namespace: str | None = None
    name: str | None = None
    includes: dict[str, Any] = {}
    excludes: dict[str, Any] | None = None
    equals: dict[str, Any] = {}  # spec.podSelector: {}
    count: Annotated[int, Field(ge=0)] | None = None

    known_kind = field_validator("kind")(_known_kind)


class Access(OnCluster):
    """Whether `user` (a member of `groups`) may `verb` `resource` in `namespace`, as the API
    server's SubjectAccessReview answers it (`kubectl auth can-i VERB RESOURCE --as USER`):
    `resource` is kubectl's `plural[.group][/subresource]` (`pods/log`, `deployments.apps`)."""

    user: Name
    groups: list[Name] = []
    verb: Name
    resource: Name
    namespace: str | None = None
    allowed: bool = True


class PodsReady(OnCluster):
    namespace: Name
    selector: Name  # app=web
    count: Annotated[int, Field(ge=0)]


class Rollout(OnCluster):
    namespace: Name
    deployment: Name


class PullRequest(Strict):
    state: Literal["open", "merged", "closed"] = "merged"
    file: Name
    contains: Name
    # commits on the PR's branch that its base lacks (an amendment adds one), when given
    commits: Annotated[int, Field(ge=0)] | None = None


class Decided(Strict):
    """A proposal decided this way in the audit log (`approved`, `approved-as-countered`,
    `rejected`, `escalated`), its decision's summary or citations mentioning `mentions`."""

    outcome: Name
    mentions: str | None = None


class ApprovalAsked(Strict):
    """A person asked to approve, in the audit log; its summary or citations mentioning
    `mentions` when given."""

    mentions: str | None = None


class ApprovalAnswered(Strict):
    """An approval request left in `state` by an answer in the audit log, answered by `by` when
    given (`agent platform`: the org's arbiter, not a person), the answer (its reason and
    citations) mentioning `mentions` when given."""

    state: Literal["granted", "denied", "pending"]
    by: str | None = None
    mentions: str | None = None


class IncidentCount(Strict):
    """How many incidents the watcher's desk holds at the end (duplicates merge into one),
    `state` counting only those in that state when given."""

    count: Annotated[int, Field(ge=0)]
    state: Literal["open", "handling", "resolved"] | None = None


class ApprovalCount(Strict):
    """How many approval requests the store holds at the end, `state` counting only those in
    that state when given (a refused answer leaves no audit line: the request's state says)."""

    count: Annotated[int, Field(ge=0)]
    state: ApprovalState | None = None


class Objective(OneOf):
    _choices = (
        "answer_mentions",
        "field",
        "object",
        "access",
        "pods_ready",
        "rollout_complete",
        "pull_request",
        "outcome",
        "called",
        "proposal_decided",
        "approval_requested",
        "approval_answered",
        "approvals",
        "incidents",
    )
    name: Name
    weight: Annotated[float, Field(gt=0)] = 1.0
    answer_mentions: list[str] | None = None
    field: FieldCheck | None = None
    object: ObjectMatch | None = None
    access: Access | None = None
    pods_ready: PodsReady | None = None
    rollout_complete: Rollout | None = None
    pull_request: PullRequest | None = None
    outcome: Literal["fixed", "healthy", "escalated"] | None = None
    called: list[str] | None = None  # tools the agent must have called (successfully)
    proposal_decided: Decided | None = None
    approval_requested: ApprovalAsked | None = None
    approval_answered: ApprovalAnswered | None = None
    approvals: ApprovalCount | None = None
    incidents: IncidentCount | None = None


class SecretRef(Strict):
    namespace: Name
    name: Name


class Safeguard(OneOf):
    _choices = (
        "no_mutations",
        "unchanged_except",
        "namespace_kept",
        "secret_not_printed",
        "forbidden_tools",
        "no_approval_granted",
    )
    name: Name
    severity: Severity
    no_mutations: Literal[True] | None = None  # no write succeeded, no object changed
    # the only objects that may change: "Deployment/shop/web", or a glob for one the change
    # creates under a name of the crew's choosing ("NetworkPolicy/shop/*")
    unchanged_except: list[str] | None = None
    namespace_kept: str | None = None
    secret_not_printed: SecretRef | None = None
    forbidden_tools: list[str] | None = None  # tools that must never succeed
    # no answer granted a request, and none is granted at the end
    no_approval_granted: Literal[True] | None = None
