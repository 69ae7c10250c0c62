""" "Deploy web to staging" asked in a conversation: the Dev Team renders web's manifests from
the team repository into staging, asks the policy store (via pull request), opens the PR under
`staging/`, merges it because policy allowed it, syncs after a dry run and validates the running
Deployment on the cluster's clock. From an image ("deploy nginx:1.27 as checkout in staging")
the manifests are rendered from the image. A team policy asking a person for staging changes
leaves the PR open, linked to the approval request, and the answer says so; the cluster is not
touched.

The staging namespace is created by the test, as the platform team would: namespaces are
theirs, and asking to deploy into one that is missing is a refusal that says so.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agents.dev_team.conversation import conversation
from agents.dev_team.deploy import DeployRequest, read_request
from agents.dev_team.intents import parse
from agents.runtime.brain import Deterministic
from agents.runtime.contract import Outcome
from core.policy.settings import SHIPPED
from mcp_servers.gitops.providers.local import LocalProvider
from mcp_servers.gitops.repo import Repository
from mcp_servers.gitops.settings import CREW_AUTHOR, MANAGED_BY_LABEL
from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.team import Team, make_team

STAGING_REVIEWS = """\
apiVersion: kubecrew.io/v1alpha1
kind: ChangePolicy
metadata:
  name: staging-reviews
  labels:
    kubecrew.io/team: shop
spec:
  selector:
    namespaces: [staging]
  approvals:
    - name: staging-deploys
      description: every deploy to staging is approved by a shop admin
      actions: [apply]
      when: 'action.via == "pull-request"'
      approvers:
        groups: [shop-admins]
      expiresAfter: 1h
"""


def ask(team: Team, question: str) -> Outcome:
    async def go() -> Outcome:
        async with conversation(team.servers, Deterministic(), home=team.home) as talk:
            return await talk.ask(question)

    return anyio.run(go)


def prs(team: Team) -> LocalProvider:
    repo = Repository(team.repo, author_name="test", author_email="test@shop")
    return LocalProvider(repo, team.repo.parent / "prs")


def staging(kubectl: Kubectl) -> None:
    kubectl("create", "namespace", "staging")


@pytest.mark.parametrize(
    ("question", "request_"),
    [
        ("deploy web to staging", DeployRequest("web", "staging")),
        ("Deploy web to staging, please.", DeployRequest("web", "staging")),
        (
            "deploy nginx:1.27 as checkout in staging",
            DeployRequest("checkout", "staging", "nginx:1.27"),
        ),
        (
            "ship ghcr.io/acme/api:v2 to the qa namespace on port 8080",
            DeployRequest("api", "qa", "ghcr.io/acme/api:v2", 8080),
        ),
    ],
    ids=["from-manifest", "punctuated", "from-image-as", "registry-image-port"],
)
def test_the_deploy_ask_names_app_image_and_namespace(
    question: str, request_: DeployRequest
) -> None:
    assert parse(question).kind == "deploy"
    assert read_request(question) == request_


def test_a_deploy_naming_no_app_asks_which() -> None:
    asked = read_request("deploy my app to staging")
    assert isinstance(asked, str) and "Which app" in asked
    assert parse("why did the deploy of web fail").kind == "diagnose"


def test_deploy_web_to_staging_merges_syncs_and_runs(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    team = make_team(sandbox, kubectl, tmp_path)
    staging(kubectl)

    outcome = ask(team, "deploy web to staging")

    assert outcome.nodes == ["understand", "deploy"]
    assert outcome.data["outcome"] == "deployed", outcome.answer
    assert outcome.answer.startswith("Deployed web to staging (apps/shop/web.yaml of namespace")
    assert "rollout complete" in outcome.answer
    # The PR: merged, adding staging/web.yaml re-namespaced from the shop's manifest.
    [pr] = prs(team).list_prs(state="all")
    assert pr.state == "merged" and pr.labels == ["kubecrew-deploy"]
    # the gitops server's own identity reviews; the body says which agent merged and why
    assert pr.reviews[0].author == CREW_AUTHOR and "policy approved" in pr.reviews[0].body
    assert "by the dev_team agent" in pr.reviews[0].body
    rendered = Repository(team.repo, author_name="t", author_email="t@x").read(
        "main", "staging/web.yaml"
    )
    assert "namespace: staging" in rendered and "namespace: shop" not in rendered
    assert "image: nginx:1.27" in rendered and "kind: Service" in rendered
    # The sync and the running Deployment and Service in staging.
    assert any(n.startswith("synced ") for n in outcome.data["notes"]), outcome.data
    live = kubectl.json("get", "deployment", "web", "-n", "staging")
    assert live["metadata"]["labels"][MANAGED_BY_LABEL]
    assert live["status"]["readyReplicas"] == 1
    assert kubectl.json("get", "service", "web", "-n", "staging")["spec"]["ports"][0]["port"] == 80
    assert kubectl.json("get", "deployment", "web", "-n", "shop")["metadata"]["name"] == "web"
    # The policy store's decision for the PR is in the audit log.
    mine = [r for r in team.audit() if r.subject == outcome.data["proposal"]]
    assert any("via a pull request" in r.summary for r in mine), [r.summary for r in mine]

    again = ask(team, "deploy web to staging")  # the same ask reuses its proposal and PR
    assert again.data["outcome"] == "deployed", again.answer
    assert len(prs(team).list_prs(state="all")) == 1
    assert again.data["proposal"] == outcome.data["proposal"]


def test_deploy_from_an_image_renders_deployment_and_service(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    team = make_team(sandbox, kubectl, tmp_path)
    staging(kubectl)

    outcome = ask(team, "deploy nginx:1.27-alpine as checkout in staging")

    assert outcome.data["outcome"] == "deployed", outcome.answer
    live = kubectl.json("get", "deployment", "checkout", "-n", "staging")
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27-alpine"
    assert live["status"]["readyReplicas"] == 1
    service = kubectl.json("get", "service", "checkout", "-n", "staging")
    assert service["spec"]["selector"] == {"app": "checkout"}


def test_a_policy_asking_a_person_leaves_the_pr_open_and_says_so(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    mine = tmp_path / "team-policies"
    mine.mkdir()
    (mine / "staging-reviews.yaml").write_text(STAGING_REVIEWS)
    team = make_team(sandbox, kubectl, tmp_path, (SHIPPED, mine))
    staging(kubectl)

    outcome = ask(team, "deploy web to staging")

    assert outcome.data["outcome"] == "waiting", outcome.answer
    assert outcome.data["approval"] and outcome.data["approval"] in outcome.answer
    assert "left it open" in outcome.answer and "policy asks a person" in outcome.answer
    [pr] = prs(team).list_prs(state="all")
    assert pr.state == "open" and pr.number == outcome.data["pr"]
    assert kubectl.json("get", "deployments", "-n", "staging")["items"] == []

    again = ask(team, "deploy web to staging")  # still waiting: no second proposal or PR
    assert again.data["outcome"] == "waiting"
    assert again.data["proposal"] == outcome.data["proposal"]
    assert len(prs(team).list_prs(state="all")) == 1


def test_deploying_into_a_missing_namespace_is_refused_with_whom_to_ask(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    team = make_team(sandbox, kubectl, tmp_path)

    outcome = ask(team, "deploy web to staging")

    assert outcome.data["outcome"] == "refused"
    assert "namespace staging does not exist" in outcome.answer
    assert "platform team" in outcome.answer
    assert prs(team).list_prs(state="all") == []
