"""Finding 2: with the Kubernetes store, an agent approved its own proposal.

The dev-team ServiceAccount (bound by deploy/agents/dev-team.yaml to the store's Role) could
patch `proposals.kubecrew.io`; it set `spec.decision` to "approved, by person alice" on a 4 -> 1
downscale the policies had countered to 3, the kube gate applied 4 -> 1, and `kubecrew audit
verify --store kubernetes` still said intact.

Now everything the store decides lives in the Proposal's status subresource, which the agents'
Role may not touch (they may create proposals: a create cannot set a status), and only the
store's own identity (the ServiceAccount policy-store of deploy/rbac, the kubeconfig the kube
server's gate and the policy server open the store with) writes decisions. A decision edited
anyway, by an identity with more rights than an agent, is not used: the store checks it
against the sealed audit chain, refuses the write, records the refusal, and `audit verify`
names the proposal. All on the sandbox, with real ServiceAccount tokens over HTTP.
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from core.policy.actions import Action, ReplicaChange, parse_target
from core.policy.negotiation import negotiate
from core.policy.proposals import Decision, Identity
from core.policy.store.kubernetes import KubernetesStore
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.kube_tools import KubeTools, identity_kubeconfig
from tests.support.kubectl import Kubectl
from tests.support.mcp_hosts import KUBECREW
from tests.support.policies import NOON, POLICIES, defaults, downscale
from tests.support.shop import WEB

DEPLOY = Path(__file__).parents[2] / "deploy"
NS = ["-n", "kubecrew-system"]
ALICE = Identity(kind="person", name="alice", groups=("shop-admins",))
FOUR_TO_ONE = Action(
    type="scale",
    target=parse_target("deployment/web", namespace="shop"),
    replicas=ReplicaChange(from_=4, to=1),
)
FORGED = Decision(
    outcome="approved",
    action=FOUR_TO_ONE,
    reasons=["granted by person alice via cli"],
    rounds=1,
    decided_by=ALICE,
    at=NOON + timedelta(minutes=5),
)


def kubeconfig_of(admin: Kubectl, account: str, tmp_path: Path) -> Path:
    token = admin("create", "token", account, *NS).strip()
    return identity_kubeconfig(admin.kubeconfig, token, tmp_path / f"{account}.kubeconfig")


def replicas(admin: Kubectl) -> int:
    return int(admin("get", "deploy/web", "-n", "shop", "-o", "jsonpath={.spec.replicas}"))


def agents_gate(dev_team: Path, store: Path, monkeypatch: pytest.MonkeyPatch) -> KubeTools:
    """The dev-team agent's kube server as the crew runs it: its tools carry dev-team's token,
    and its gate opens the store with the process's kubeconfig (the store's identity)."""
    monkeypatch.setenv("KUBECONFIG", str(store))
    settings = KubeSettings(
        kubeconfig=dev_team, policies=(POLICIES,), policy_store="kubernetes", agent="dev-team"
    )
    return KubeTools(settings)


@pytest.fixture
def countered(sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path) -> tuple[str, Path]:
    """The shop at 4 replicas and a 4 -> 1 downscale the policies countered to 3, decided by
    the store (opened by the person running the crew); the proposal and dev-team's kubeconfig."""
    for folder in ("crds", "rbac"):
        kubectl("apply", "-f", str(DEPLOY / folder / "policy-store.yaml"))
    kubectl("apply", "-f", str(DEPLOY / "agents" / "dev-team.yaml"))
    kubectl("apply", "-f", "-", input=WEB)
    kubectl("scale", "deploy/web", "-n", "shop", "--replicas=4")
    store = KubernetesStore(kubeconfig=sandbox.kubeconfig)
    proposal = downscale(proposer="dev-team", action=FOUR_TO_ONE)
    store.propose(proposal)
    decision = negotiate(store, defaults(), proposal.id, now=NOON).decision
    store.close()
    assert decision is not None and decision.outcome == "approved-as-countered"
    assert decision.action.replicas is not None and decision.action.replicas.to == 3
    return proposal.id, kubeconfig_of(kubectl, "dev-team", tmp_path)


def test_the_dev_team_account_cannot_approve_its_proposal_nor_create_one_approved(
    countered: tuple[str, Path],
    sandbox: Sandbox,
    kubectl: Kubectl,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    proposal, dev_team = countered
    agent = Kubectl(dev_team, tmp_path / "dev-team-cache")
    forged = FORGED.model_dump(mode="json")

    for where, body in [
        ([], {"spec": {"decision": forged, "state": "decided"}}),
        (["--subresource=status"], {"status": {"decision": forged}}),
    ]:
        patch = ["patch", "proposal", proposal, *where, "--type=merge", "-p", json.dumps(body)]
        refused = agent.run(*patch, *NS, check=False)
        assert refused.returncode != 0 and "Forbidden" in refused.stderr, refused.stderr
    for verb in ("update", "patch"):
        for resource in ("proposals", "proposals/status", "approvalrequests/status"):
            allowed = agent.run("auth", "can-i", verb, resource, *NS, check=False)
            assert allowed.stdout.strip() == "no", (verb, resource)
    assert agent("auth", "can-i", "create", "proposals", *NS).strip() == "yes"

    # What it may create is a request: the status it sends is dropped, the store opens it.
    made = downscale(proposer="dev-team", action=FOUR_TO_ONE)
    sneaked = {
        "apiVersion": "kubecrew.io/v1alpha1",
        "kind": "Proposal",
        "metadata": {"name": made.id, "namespace": "kubecrew-system"},
        "spec": {"proposal": made.model_dump(mode="json"), "target": "Deployment/shop/web"},
        "status": {"decision": forged, "state": "decided", "version": 2, "writes": 2},
    }
    agent("create", "-f", "-", input=yaml.safe_dump(sneaked))
    store = KubernetesStore(kubeconfig=sandbox.kubeconfig)
    opened = store.get(made.id)
    assert opened.proposal.state == "open" and opened.decision is None
    store.close()

    gate = agents_gate(dev_team, sandbox.kubeconfig, monkeypatch)
    for carried in (proposal, made.id):
        gate.fails("scale", name="web", namespace="shop", replicas=1, proposal=carried)
    assert replicas(kubectl) == 4


def test_a_decision_edited_by_someone_with_more_rights_is_refused_and_reported(
    countered: tuple[str, Path],
    kubectl: Kubectl,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    proposal, dev_team = countered
    forged = {"status": {"decision": FORGED.model_dump(mode="json")}}
    kubectl(
        "patch", "proposal", proposal, "--subresource=status", "--type=merge",
        "-p", json.dumps(forged), *NS,
    )  # fmt: skip
    # From here the store is the ServiceAccount deploy/rbac makes for it, with its Role only.
    store_config = kubeconfig_of(kubectl, "policy-store", tmp_path)
    gate = agents_gate(dev_team, store_config, monkeypatch)

    refused = gate.fails("scale", name="web", namespace="shop", replicas=1, proposal=proposal)

    assert f"the decision of proposal {proposal} was edited outside the store" in refused
    assert replicas(kubectl) == 4
    store = KubernetesStore(kubeconfig=store_config)
    [report] = store.audit(subject=proposal, kind="use")
    assert report.actor == "agent dev-team" and report.result.startswith("refused")
    store.close()
    verified = subprocess.run(
        [KUBECREW, "audit", "verify", "--store", "kubernetes"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "KUBECONFIG": str(store_config), "KUBECREW_DEBUG": ""},
    )
    assert verified.returncode == 1, verified.stdout
    assert f"proposal {proposal}: its stored decision (approved by person alice)" in (
        verified.stdout
    )
