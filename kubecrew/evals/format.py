"""The eval scenario format: one YAML file = a world, a trigger, what must come true, what must
not happen, and a budget.

    name: image-typo-answer          # the file's stem
    domain: workload-debugging
    intent: diagnose                 # optional: the kind of request, for the pass rate per kind
    description: why an image typo keeps web down
    world:      {rate, seed, start, nodes, namespaces, images, profiles, manifests, faults,
                 gitops, policies, people, settle, cluster_name, clusters}
                gitops.commits[]: {message, files, settle, faults, edits}
                clusters[]: {name, nodes, rate, manifests, settle}   the fleet's other clusters
    trigger:    {ask: "why is web failing?"} | {heal: web} | {alert: {alerts: [...]}}
                | {schedule: {agent: cluster_operator, task: patrol, ticks: 1}}
                | {chat: {as: {name: bob, groups: [developers]}, text: "approve {pending}"}}
                | {pr_comment: {comments: [{login: alice-gh, body: "@kubecrew ..."}]}}
    then:       [<trigger>, ...]   more triggers, run in order after `trigger`, each its agent's
    objectives: [{name, weight, <one check>}]         scored, weighted
    safeguards: [{name, severity, <one guard>}]       recoverable | catastrophic
    budget:     {sandbox_seconds, wall_seconds, tool_calls}

Objectives read the cluster as it ends the run: `field` one object's field (`equals` a value,
null for absent; `includes` a part of it; `excludes` one), `object` the objects of a kind that
include a part, lack another and hold exact fields (at least one, or exactly `count`: 0 says
none is left), `access` what a person may do (the API server's own SubjectAccessReview),
`pods_ready`, `rollout_complete`, each in the main cluster or the fleet's `cluster` it names;
the others read the run's record (answer, tool calls, audit log, approvals, PRs, incidents).
"Includes" is the one partial match: a map includes every key given with a value it includes, a
list includes each item given in one of its own items, a scalar is equal. Safeguards say what
must not happen: `unchanged_except` lists the only objects that may change (globs for those the
change creates under names of the crew's choosing; `west:Kind/ns/name` in the fleet's cluster
west), `no_mutations` says nothing may, in any cluster. The check models live in `checks`.

`intent` names the kind of request a scenario is (`scale-to`, `expose`, `network-policy`,
`question-inventory`): the report gives the pass rate per kind. The corpus of everyday requests
is named for it, and `load` holds it to that: a change is `change-<intent>-<phrasing>`, a
question `question-<kind>-<phrasing>` with intent `question-<kind>`, and a request that must
change nothing (a question worded as a command, an imprecise one) `change-none-<what>` with
intent `no-change`; the phrasing is terse, chatty, typo (a misspelt object name) or another
word saying how it is asked.

The world's cluster part is the sandbox's own scenario format (sandbox.scenario), so the sandbox
validates it; faults are the sandbox's fault specs, injected through its admin endpoint at their
`at` (sandbox seconds after start). A fleet (`clusters`, `kubecrew.evals.fleet`) is the main
sandbox, the kubeconfig context `cluster_name` (default east), and a sandbox per other cluster.
`load` reports every problem at once, one line each, `file: field.path: reason`, as the policy
loader does: whoever fixes a scenario wants them all.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, Any, Literal, Self, get_args

import yaml
from pydantic import (
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from core.policy.people import People, Person
from kubecrew.evals.checks import Name, Objective, OneOf, Safeguard, Settle, Strict
from kubecrew.evals.fleet import MAIN_CLUSTER, ClusterName, Member, naming_problem, unknown_clusters
from sandbox import scenario as sandbox_scenario
from sandbox.faults import FaultSpecError, parse_spec

Domain = Literal[
    "workload-debugging",
    "networking",
    "rollout",
    "scaling",
    "availability",
    "scheduling",
    "configuration",
    "storage",
    "workloads",
    "self-heal",
    "gitops",
    "governance",
    "access",
    "cost",
    "nodes",
    "security",
    "questions",
    "no-op",
]
DOMAINS: tuple[str, ...] = get_args(Domain)
# a kind of request: lower-case words joined by hyphens (`scale-to`, `question-inventory`)
Intent = Annotated[str, Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")]


class Edit(Strict):
    """A person's edit of a live object once its commit settled (`kubectl edit`: the object read,
    these dotted fields set, written back under field manager `by`), so that the cluster and git
    disagree the way they do after a hand fix."""

    kind: Literal["Deployment", "StatefulSet", "DaemonSet", "Service", "ConfigMap"]
    name: Name
    namespace: Name
    set: Annotated[dict[str, Any], Field(min_length=1)]  # spec.replicas: 2
    by: Name = "kubectl-edit"


class Commit(Strict):
    message: Name
    files: dict[str, str]  # path in the repository -> its whole text
    settle: list[Settle] = []  # reached after this commit is synced
    faults: list[dict[str, Any]] = []  # injected once it is settled (trouble that comes later)
    edits: list[Edit] = []  # hand edits once it is settled (drift from git)


class Gitops(Strict):
    """A GitOps repository built commit by commit, each synced to the cluster in turn."""

    commits: Annotated[list[Commit], Field(min_length=1)]


class World(Strict):
    rate: Annotated[float, Field(gt=0, le=100)] = 10.0  # sandbox seconds per real second
    seed: int = 0
    # the cluster clock's first instant (ISO 8601); default the real now, so a scenario whose
    # CronJob must not fire during the run says where the day starts
    start: str | None = None
    nodes: int | list[dict[str, Any]] | None = None
    namespaces: list[str] = []
    images: list[dict[str, Any]] = []
    profiles: list[dict[str, Any]] = []
    manifests: list[dict[str, Any]] = []
    faults: list[dict[str, Any]] = []
    gitops: Gitops | None = None
    policies: str | None = None  # a policy directory, relative to the repository root
    # the people file (`kind: People`'s entries): who each forge login is, for `pr_comment`
    people: list[Person] = []
    settle: list[Settle] = []
    cluster_name: ClusterName | None = None  # the main sandbox's context in a fleet
    clusters: list[Member] = []  # the fleet's other clusters; none: one cluster, no contexts

    @field_validator("people")
    @classmethod
    def _one_person_per_account(cls, people: list[Person]) -> list[Person]:
        People(people=people)  # the people file's own rules: a name or login names one person
        return people

    @model_validator(mode="after")
    def _one_name_per_cluster(self) -> Self:
        if (problem := naming_problem(self.cluster_name, self.clusters)) is not None:
            raise ValueError(problem)
        return self

    @property
    def fleet(self) -> tuple[str, ...]:
        """Every cluster's context name, the main one first; () for a world of one cluster."""
        if not self.clusters:
            return ()
        return (self.cluster_name or MAIN_CLUSTER, *(member.name for member in self.clusters))

    def sandbox_document(self, name: str, member: Member | None = None) -> dict[str, Any]:
        """The cluster part as a sandbox scenario document: the main cluster's, or `member`'s
        (its nodes and manifests on the world's clock, at its own rate when it has one)."""
        rate = member.rate if member is not None and member.rate is not None else self.rate
        clock: dict[str, Any] = {"rate": rate, "seed": self.seed}
        if self.start is not None:
            clock["start"] = self.start
        spec: dict[str, Any] = {"clock": clock}
        source: World | Member = self if member is None else member
        if source.nodes is not None:
            spec["nodes"] = source.nodes
        keys = (
            ("namespaces", "images", "profiles", "manifests") if member is None else ("manifests",)
        )
        for key in keys:
            if getattr(source, key):
                spec[key] = getattr(source, key)
        return {
            "apiVersion": sandbox_scenario.API_VERSION,
            "kind": "Scenario",
            "metadata": {"name": name},
            "spec": spec,
        }


class Alert(Strict):
    """One alert of an Alertmanager webhook payload: its labels name the rule (`alertname`) and
    the workload (`namespace` + `deployment`, `pod`, ... as kube-state-metrics labels them)."""

    labels: dict[str, str]
    annotations: dict[str, str] = {}
    status: Literal["firing", "resolved"] = "firing"

    @model_validator(mode="after")
    def _named(self) -> Self:
        if not self.labels.get("alertname"):
            raise ValueError("labels need an alertname, as every Alertmanager alert has")
        return self


class AlertTrigger(Strict):
    """A webhook payload (version 4) of these alerts POSTed to the watcher's Alertmanager
    receiver `deliveries` times (Alertmanager resends a group every repeat_interval); each
    new incident is handled as `kubecrew watch --heal` handles it."""

    alerts: Annotated[list[Alert], Field(min_length=1)]
    deliveries: Annotated[int, Field(ge=1, le=10)] = 1


# agent -> the scheduled procedures it runs (the Dev Team's is the watcher's patrol: diagnose
# the scope, one incident per failing workload, each healed as `kubecrew watch --heal` does;
# the Cluster Operator's patrol also keeps node readiness taints and carries out maintenance in
# its window, and its fleet run surveys the world's clusters and carries out a decided move;
# the Platform agent's audit and blueprints cover the fleet, fixing by PR, and its escalations
# answer the approval requests that name it as the org's arbiter)
SCHEDULED: dict[str, tuple[str, ...]] = {
    "dev_team": ("patrol",),
    "cluster_operator": ("patrol", "capacity", "fleet"),
    "platform": ("propagate", "audit", "blueprints", "escalations"),
}


class Schedule(Strict):
    """`ticks` runs of an agent's scheduled procedure in a row, each a conversation of its own
    on the same agent home (what a tick remembers, the next reads)."""

    agent: Literal["dev_team", "cluster_operator", "platform"]
    task: Literal["patrol", "capacity", "fleet", "propagate", "audit", "blueprints", "escalations"]
    ticks: Annotated[int, Field(ge=1, le=10)] = 1

    @model_validator(mode="after")
    def _known(self) -> Self:
        if self.task not in SCHEDULED[self.agent]:
            runs = ", ".join(SCHEDULED[self.agent])
            raise ValueError(f"{self.agent} has no scheduled {self.task!r}; it runs: {runs}")
        return self


class Speaker(Strict):
    """A person as a chat channel vouches for them (Slack through the people file): a name and
    the groups approval rules name."""

    name: Name
    groups: list[Name] = []


class Chat(Strict):
    """One message said by a person to the front door
    (`kubecrew.channels.frontdoor.FrontDoor.handle`), in conversation `thread` of channel `via`.
    `{pending}` in the text stands for the id of the one approval request pending when it is said
    (ids are random; a run where not exactly one is pending is an error)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    speaker: Speaker = Field(alias="as")
    text: Name
    via: Literal["slack", "cli"] = "slack"
    thread: Name = "C0EVALS:1700000000.000100"  # the conversation key (a Slack thread here)


class ForgeComment(Strict):
    login: Name  # the forge login that comments (the people file maps it to a person)
    body: Name


class PrComment(Strict):
    """Comments on the crew's one open PR, then one pass of `kubecrew approvals sync-prs`
    (comments, then reviews) with the world's `people` file."""

    comments: Annotated[list[ForgeComment], Field(min_length=1)]


class Trigger(OneOf):
    """Who is asked to do what: `ask` and `heal` go to the Dev Team, as a person types them;
    `alert` comes from Alertmanager; `schedule` is an agent's own timer; `chat` is a person at
    the front door (routed to whichever agent it is for, or answered there); `pr_comment` is
    people commenting on the crew's PR."""

    _choices = ("ask", "heal", "alert", "schedule", "chat", "pr_comment")
    ask: str | None = None  # a request as `kubecrew ask` takes it, to the agent it is for
    heal: str | None = None  # a workload the Dev Team heals, as `kubecrew heal NAME`
    alert: AlertTrigger | None = None
    schedule: Schedule | None = None
    chat: Chat | None = None
    pr_comment: PrComment | None = None
    namespace: str | None = None
    # whether the Cluster Operator takes a stakeholder's counter-offer or leaves it to a person
    counters: Literal["accept", "refuse"] = "accept"

    @property
    def agent(self) -> str:
        """The role of the agent that answers this trigger (the Dev Team's name for the front
        doors, which act as themselves or pick the agent)."""
        return self.schedule.agent if self.schedule is not None else "dev_team"

    @property
    def roles(self) -> tuple[str, ...]:
        """Every role whose tools this trigger may call: any of the crew behind the front door
        (a chat, or a request routed as `kubecrew ask` routes it)."""
        routed = self.chat is not None or self.ask is not None
        return tuple(SCHEDULED) if routed else (self.agent,)


class Budget(Strict):
    """Enforced, not only reported: the run is stopped at the first tool call over `tool_calls`
    or when its sandbox time (at the world's rate) or wall time runs out, and then fails."""

    sandbox_seconds: Annotated[float, Field(gt=0)] = 600.0
    wall_seconds: Annotated[float, Field(gt=0)] = 120.0
    tool_calls: Annotated[int, Field(ge=0)] = 50


class Scenario(Strict):
    name: Name
    domain: Domain
    intent: Intent | None = None  # the kind of request, for the report's pass rate per kind
    description: Name
    world: World
    trigger: Trigger
    # what happens next, in order, in the same world and under the same budget: another agent
    # taking up what the first left (an escalation the Platform answers), each under its own name
    then: list[Trigger] = []
    objectives: Annotated[list[Objective], Field(min_length=1)]
    safeguards: list[Safeguard] = []
    budget: Budget = Budget()

    @property
    def triggers(self) -> list[Trigger]:
        return [self.trigger, *self.then]


class ScenarioInvalid(ValueError):
    """A scenario file is wrong; `problems` holds every `file: field: reason` line."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


def load(path: Path) -> Scenario:
    """The validated scenario in `path`, or ScenarioInvalid listing every problem found."""
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ScenarioInvalid([f"{path}: cannot read the file: {exc.strerror or exc}"]) from exc
    except yaml.YAMLError as exc:
        raise ScenarioInvalid([f"{path}: not valid YAML: {exc}"]) from exc
    try:
        found = Scenario.model_validate(doc)
    except ValidationError as exc:
        raise ScenarioInvalid([f"{path}: {_line(error)}" for error in exc.errors()]) from exc
    problems = _world_problems(path, found)
    problems += [
        f"{path}: {line}" for line in unknown_clusters(found.world.fleet, found.objectives)
    ]
    if (misnamed := _intent_problem(found)) is not None:
        problems.insert(0, f"{path}: intent: {misnamed}")
    if found.name != path.stem:
        problems.insert(0, f"{path}: name: {found.name!r} must be the file's stem {path.stem!r}")
    if problems:
        raise ScenarioInvalid(problems)
    return found


def _intent_problem(found: Scenario) -> str | None:
    """What is wrong with a change or question scenario's intent for its name, if anything."""
    name, intent = found.name, found.intent
    if not name.startswith(("change-", "question-")):
        return None
    if intent is None:
        return f"a change or question scenario names its kind of request ({name!r} has none)"
    if name.startswith("change-none-"):
        wanted = "'no-change'"
        fits = intent == "no-change"
    elif name.startswith("change-"):
        wanted = f"the word(s) after 'change-' in {name!r}"
        fits = name.startswith(f"change-{intent}-")
    else:
        wanted = f"'question-' and the word(s) after it in {name!r}"
        fits = intent.startswith("question-") and name.startswith(f"{intent}-")
    return None if fits else f"{intent!r} does not fit the name: want {wanted}"


def _line(error: Any) -> str:
    where = ""
    for part in error["loc"]:
        if isinstance(part, int):
            where += f"[{part}]"
        elif not str(part).startswith(("function-", "literal[")):
            where += f".{part}" if where else str(part)
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{where or '(document)'}: {message}"


def _world_problems(path: Path, found: Scenario) -> list[str]:
    """What the sandbox itself refuses in the world (each cluster's): its scenario reader and
    its fault specs."""
    problems = []
    members = [
        ("world", None),
        *((f"world.clusters[{i}]", member) for i, member in enumerate(found.world.clusters)),
    ]
    for where, member in members:
        with tempfile.TemporaryDirectory() as scratch:
            draft = Path(scratch) / "world.yaml"
            draft.write_text(yaml.safe_dump(found.world.sandbox_document(found.name, member)))
            try:
                sandbox_scenario.load(draft)
            except sandbox_scenario.ScenarioError as exc:
                field = exc.field.replace("spec.", f"{where}.", 1) if exc.field else where
                problems.append(f"{path}: {field}: {exc.reason}")
    faults = [(f"world.faults[{i}]", fault) for i, fault in enumerate(found.world.faults)]
    for c, commit in enumerate(found.world.gitops.commits if found.world.gitops else []):
        faults += [
            (f"world.gitops.commits[{c}].faults[{i}]", f) for i, f in enumerate(commit.faults)
        ]
    for where, fault in faults:
        try:
            parse_spec(fault)
        except FaultSpecError as exc:
            problems.append(f"{path}: {where}: {exc}")
    return problems


def discover(directory: Path, pattern: str = "*") -> list[Path]:
    """Scenario files in `directory` whose stem matches the glob `pattern`, by name."""
    return sorted(p for p in directory.glob("*.yaml") if p.match(f"{pattern}.yaml"))
