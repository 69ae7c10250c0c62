"""The Kubernetes backend's safety: least-privilege RBAC, tamper evidence, repair after a crash.

The store's identity and the agents reach the store as ServiceAccounts the sandbox issues tokens
for, bound to the Roles of `deploy/rbac/policy-store.yaml`, exactly as on a real cluster. A
crash between two of a write's object writes is made real by RBAC: an identity that may commit
a write's first object but not the next stops there with the API's 403, as a killed process
would; another store then reads and must finish the write once.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.errors import PermissionDenied, Unavailable
from core.policy import audit
from core.policy.negotiation import negotiate
from core.policy.store.kubernetes import KubernetesStore
from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.policies import NOON, defaults, downscale

NS = ["-n", "kubecrew-system"]
DEPLOY = Path(__file__).parents[3] / "deploy"
POLICIES = defaults()
pytestmark = pytest.mark.kubectl


def account(admin: Kubectl, name: str, home: Path, *, create: bool = True) -> Kubectl:
    """A ServiceAccount of kubecrew-system with a kubeconfig of its own (bind it yourself)."""
    if create:
        admin("create", "serviceaccount", name, *NS)
    token = admin("create", "token", name, *NS).strip()
    config = home / f"{name}-kubeconfig"
    shutil.copy(admin.kubeconfig, config)
    own = Kubectl(config, home / f"{name}-cache")
    cluster = own("config", "view", "-o", "jsonpath={.clusters[0].name}")
    own("config", "set-credentials", name, f"--token={token}")
    own(
        "config",
        "set-context",
        name,
        f"--cluster={cluster}",
        f"--user={name}",
        "--namespace=kubecrew-system",
    )
    own("config", "use-context", name)
    return own


@pytest.fixture
def admin(sandbox: Sandbox, tmp_path: Path) -> Kubectl:
    kubectl = Kubectl(sandbox.kubeconfig, tmp_path / "admin-cache")
    kubectl("apply", "-f", str(DEPLOY / "crds" / "policy-store.yaml"))
    kubectl("apply", "-f", str(DEPLOY / "rbac" / "policy-store.yaml"))
    return kubectl


def test_the_store_identity_works_the_store_and_an_agent_only_reads_and_proposes(
    admin: Kubectl, tmp_path: Path
) -> None:
    writer = account(admin, "policy-store", tmp_path, create=False)  # made by deploy/rbac
    agent = account(admin, "agent", tmp_path)
    admin(
        "create", "rolebinding", "agent", "--role=kubecrew-policy-store",
        "--serviceaccount=kubecrew-system:agent", *NS,
    )  # fmt: skip
    store = KubernetesStore(kubeconfig=writer.kubeconfig)
    assert store.identity().name == "system:serviceaccount:kubecrew-system:policy-store"
    store.propose(downscale(id="p-agent"))
    decision = negotiate(store, POLICIES, "p-agent", now=NOON).decision
    assert decision is not None and decision.outcome == "approved-as-countered"
    assert store.verify_audit().problems == []
    for verb in (["delete"], ["label", "--overwrite"]):
        args = [*verb, "auditrecord", "000000000001", *(["x=y"] if "label" in verb else [])]
        refused = agent.run(*args, *NS, check=False)
        assert refused.returncode != 0 and "Forbidden" in refused.stderr, refused.stderr
    assert agent.run("delete", "proposal", "p-agent", *NS, check=False).returncode != 0
    status = ["patch", "proposal", "p-agent", "--subresource=status", "--type=merge"]
    refused = agent.run(*status, "-p", '{"status": {"state": "open"}}', *NS, check=False)
    assert refused.returncode != 0 and "Forbidden" in refused.stderr, refused.stderr
    key = agent.run("get", "secret", "kubecrew-policy-store-key", *NS, check=False)
    assert key.returncode != 0 and "Forbidden" in key.stderr, key.stderr
    table = agent("get", "proposals", *NS).splitlines()
    assert table[0].split() == ["NAME", "STATE", "TARGET", "OUTCOME", "VERSION", "AGE"]
    assert table[1].split()[:5] == [
        "p-agent", "decided", "Deployment/shop/web", "approved-as-countered", "2",
    ]  # fmt: skip
    store.close()


def test_without_the_crds_or_the_rights_to_install_them_the_store_says_what_to_run(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    admin = Kubectl(sandbox.kubeconfig, tmp_path / "admin-cache")
    admin("create", "namespace", "kubecrew-system")
    nobody = account(admin, "nobody", tmp_path)
    with pytest.raises(Unavailable, match=r"kubectl apply -f deploy/crds/policy-store\.yaml"):
        KubernetesStore(kubeconfig=nobody.kubeconfig)
    KubernetesStore(kubeconfig=sandbox.kubeconfig).close()  # an admin's store installs them
    assert "proposals.kubecrew.io" in admin("get", "crds", "-o", "name")
    KubernetesStore(kubeconfig=nobody.kubeconfig).close()  # and now anyone may open it


def test_a_record_edited_or_deleted_with_kubectl_is_named_by_verify(
    admin: Kubectl, sandbox: Sandbox
) -> None:
    store = KubernetesStore(kubeconfig=sandbox.kubeconfig)
    store.propose(downscale(id="p-tamper"))
    negotiate(store, POLICIES, "p-tamper", now=NOON)
    assert audit.verify(store.audit(), store.audit_head()) == []
    patch = '{"spec": {"result": "rejected"}}'
    admin("patch", "auditrecord", "000000000003", "--type=merge", "-p", patch, *NS)
    problems = audit.verify(store.audit(), store.audit_head())
    assert problems == [
        "record 3 (evaluation p-tamper) was modified: its fields no longer match its hash"
    ]
    admin("delete", "auditrecord", "000000000002", *NS)
    problems = audit.verify(store.audit(), store.audit_head())
    assert problems[0] == "record 2 is missing (deleted?) before record 3"
    store.close()


def test_a_write_cut_off_after_its_commit_is_finished_once_by_the_next_reader(
    admin: Kubectl, sandbox: Sandbox, tmp_path: Path
) -> None:
    """`crashy` may create proposals and claim targets but not write a proposal's status: its
    propose stops before the store opens the proposal, its decide right after the claim."""
    healthy = KubernetesStore(kubeconfig=sandbox.kubeconfig)  # installs, makes the head
    crashy = account(admin, "crashy", tmp_path)
    admin(
        "create", "role", "crashy", "--verb=get,list,create", "--verb=update",
        "--resource=policytargets.kubecrew.io", *NS,
    )  # fmt: skip
    rules = ["--verb=get,list,create", "--resource=proposals.kubecrew.io"]
    admin("create", "role", "crashy-proposals", *rules, *NS)
    reads = ["--verb=get,list", "--resource=auditheads.kubecrew.io,auditrecords.kubecrew.io"]
    admin("create", "role", "crashy-audit", *reads, *NS)
    for role in ("crashy", "crashy-proposals", "crashy-audit"):
        who = "--serviceaccount=kubecrew-system:crashy"
        admin("create", "rolebinding", role, f"--role={role}", who, *NS)
    cut = KubernetesStore(kubeconfig=crashy.kubeconfig)
    with pytest.raises(PermissionDenied):
        cut.propose(downscale(id="p-crash"))  # the object is made; the store has not opened it
    assert healthy.get("p-crash").proposal.state == "open"  # opened by the next reader
    with pytest.raises(PermissionDenied):
        negotiate(cut, POLICIES, "p-crash", now=NOON)  # claimed the target, then stopped

    record = healthy.get("p-crash")  # finishes the claimed decision
    assert record.proposal.state == "decided" and record.decision is not None
    assert record.decision.outcome == "approved-as-countered"
    assert [e.kind for e in record.transcript].count("decided") == 1
    assert negotiate(healthy, POLICIES, "p-crash", now=NOON) == record
    assert healthy.target(record.proposal.action.target).version == 1
    kinds = [r.kind for r in healthy.audit(subject="p-crash")]
    assert kinds[0] == "proposal" and kinds.count("proposal") == 1
    assert kinds.count("decision") == 1
    assert healthy.verify_audit().problems == []
    cut.close()
    healthy.close()
