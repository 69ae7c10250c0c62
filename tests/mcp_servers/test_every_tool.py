"""Every tool of every server, called as MCP hosts call them: over stdio and over streamable HTTP
with the official client, and as LangChain tools through langchain-mcp-adapters.

One sandbox serves the module, with a real Prometheus scraping it; each gitops server gets a
fresh git repository of its own, and each policy server (acting as a shop admin) a fresh SQLite
store with the default policies. Each server is started as a host starts it (`kubecrew mcp
<name> --transport stdio|http`), once per transport. A table per server names every tool with
arguments that must work and what its answer must hold, in an order that works (apply before
scale, propose before merge, ...). Before running its table, each test lists the server's tools
and fails naming any tool without an entry and any entry for a tool the server no longer has, so
a new tool cannot ship untested over the real transports. Adding a tool is adding one `Step`.

Each run works in namespaces of its own (`kube-stdio`, `gitops-http`, ...), so the runs do not
see each other's objects; node-wide steps (cordon, taint, drain) are undone within the run.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.sessions import StreamableHttpConnection

from sandbox.server import Sandbox
from tests.support import shop
from tests.support.kubectl import Kubectl
from tests.support.mcp_hosts import (
    KUBECREW,
    Invoke,
    Json,
    Step,
    World,
    assert_covered,
    child_env,
    free_port,
    http_server,
    http_session,
    langchain_client,
    official_client,
    run,
    run_table,
    stdio_session,
)
from tests.support.prometheus import PROMETHEUS, running_prometheus
from tests.support.waiting import eventually

pytestmark = pytest.mark.skipif(
    PROMETHEUS is None and not os.environ.get("CI"),
    reason="no `prometheus` binary on PATH; `make install` installs it (required in CI)",
)

SERVERS = ("kube", "metrics", "gitops", "policy")
TOKEN = "every-tool-token-0123456789abcdefghijklmnopqrstuvwxyz"  # 32 bytes' worth


# --- the tables ----------------------------------------------------------------------------------

NS = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n"
WORKLOAD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.27"}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {mode: calm}
"""


def ns(**arguments: Any) -> Callable[[World], Json]:
    """`arguments` plus this run's namespace."""
    return lambda world: {**arguments, "namespace": world.namespace}


def on_node(**arguments: Any) -> Callable[[World], Json]:
    """`arguments` for the node that runs one of this run's pods (saved as `node`)."""
    return lambda world: {**arguments, "node": world.saved["node"]}


def pr(saved: str = "pr", **arguments: Any) -> Callable[[World], Json]:
    """`arguments` for the pull request an earlier step opened (saved as `saved`)."""
    return lambda world: {**arguments, "number": world.saved[saved]}


def has(key: str, value: object) -> Callable[[Json, World], bool]:
    return lambda answer, world: bool(answer[key] == value)


def holds(key: str) -> Callable[[Json, World], bool]:
    return lambda answer, world: bool(answer[key])


def changed(path: str) -> Callable[[Json, World], bool]:
    """A write that was applied and changed a field whose path mentions `path`."""
    return lambda answer, world: answer["applied"] and path in str(answer["changes"])


def first_pod(answer: Json) -> Json:
    return {"pod": answer["items"][0]["name"], "node": answer["items"][0]["node"]}


def drained_with_progress(answer: Json, world: World) -> bool:
    """Complete, and one progress notification per evicted pod reached the client."""
    return bool(answer["complete"]) and len(world.progress) == len(answer["evicted"]) > 0


RUNNING = {"kind": "pods", "field_selector": "status.phase=Running"}
ROLLED_OUT = Step("rollout_status", ns(name="web"), ("done",), holds("done"), settle=True)
SAVE_POD = Step("list_resources", ns(**RUNNING), ("items",), holds("items"), save=first_pod)
TAINT = {"key": "every-tool", "value": "x", "effect": "NoSchedule"}
CONFIG = {"kind": "configmap", "name": "settings"}

KUBE = [
    Step("apply", lambda w: {"manifest": NS.format(name=w.namespace)}, ("objects",)),
    Step("apply", ns(manifest=WORKLOAD), ("objects",), lambda a, w: len(a["objects"]) == 2),
    ROLLED_OUT,
    SAVE_POD,
    Step(
        "get_resource", ns(kind="deploy", name="web"), ("yaml",), lambda a, w: "nginx" in a["yaml"]
    ),
    Step("describe", ns(kind="deployment", name="web"), ("conditions", "images")),
    Step("events", ns(), ("items", "total"), holds("total")),
    Step("watch_events", ns(type=""), ("resource_version", "items"), holds("items")),
    Step("logs", lambda w: {"pod": w.saved["pod"], "namespace": w.namespace}, ("log",)),
    Step("top", {"what": "nodes"}, ("items",), lambda a, w: len(a["items"]) == 3),
    Step("can_i", ns(verb="create", resource="deployments"), ("allowed",), holds("allowed")),
    Step("access_review", ns(verb="delete", resource="pods"), ("subjects",), holds("subjects")),
    Step("overview", {}, ("nodes", "node_count"), has("node_count", 3)),
    Step(
        "apiserver_metrics",
        {"name": "apiserver_requested_deprecated_apis"},
        ("metric", "found", "samples"),
    ),
    Step(
        "image_tags",
        {"image": "nginx:1.27", "limit": 1000},  # nginx has more tags than the default 200
        ("repository", "tags", "source"),
        lambda a, w: a["repository"] == "docker.io/library/nginx" and "1.27" in a["tags"],
    ),
    Step(
        "set_image",
        ns(name="web", container="web", image="nginx:1.28"),
        ("changes",),
        changed("image"),
    ),
    ROLLED_OUT,
    Step("rollout_history", ns(name="web"), ("revisions",), lambda a, w: len(a["revisions"]) > 1),
    Step("rollout_undo", ns(name="web"), ("changes",), changed("image")),
    Step("rollout_restart", ns(name="web"), ("changes",), changed("restartedAt")),
    Step("set_resources", ns(name="web", container="web", cpu="50m"), ("changes",), changed("cpu")),
    Step("scale", ns(name="web", replicas=3), ("changes",), changed("spec.replicas")),
    Step(
        "patch", ns(**CONFIG, patch={"data": {"mode": "busy"}}), ("changes",), changed("data.mode")
    ),
    Step("diagnose", ns(), ("findings", "scope")),
    Step("recommend", ns(), ("fixes", "findings_without_fix")),
    ROLLED_OUT,
    SAVE_POD,
    Step("drain_plan", on_node(), ("pods", "order"), holds("pods")),
    Step("cordon", on_node(), ("changes",), changed("unschedulable")),
    Step("uncordon", on_node(), ("changes",), changed("unschedulable")),
    Step("taint", on_node(**TAINT), ("changes",), changed("every-tool")),
    Step("taint", on_node(key="every-tool", remove=True), (), changed("taints")),
    Step("drain", on_node(timeout_seconds=20), ("evicted",), drained_with_progress),
    Step("uncordon", on_node(), ("changes",), changed("unschedulable")),
    Step("delete", ns(**CONFIG), ("note",), holds("applied")),
    Step(
        "delete",
        lambda w: {"kind": "ns", "name": w.namespace, "confirm": f"namespace/{w.namespace}"},
        ("note",),
    ),
]

UP = 'up{job="sandbox"}'
METRICS = [
    Step("sources", {}, ("source", "available"), has("source", "prometheus")),
    Step("query", {"promql": UP}, ("resultType", "result"), has("resultType", "vector")),
    Step("query_range", {"promql": UP, "since": "30s"}, ("result",), has("resultType", "matrix")),
    Step("golden_signals", ns(service="web", window="30s"), (), holds("requests_per_second")),
    Step("workload_utilization", ns(window="1m"), (), holds("workloads"), settle=True),
    Step("node_pressure", {"window": "30s"}, ("nodes", "total"), has("total", 3)),
    Step("slo_burn_rate", ns(service="web", objective=0.999, windows=["30s"]), ("alerting",)),
]

POLICIES = str(Path(__file__).parents[2] / "policies")
WEB = "apps/web.yaml"
PROPOSAL = {"title": "Scale web to 2", "path": WEB, "kind": "Deployment", "name": "web"}
GITOPS = [
    Step("repo_status", {}, ("base_branch", "branches"), has("base_branch", "main")),
    Step("list_manifests", {}, ("objects", "total"), has("total", 2)),
    Step("read_manifest", {"path": WEB}, ("text",), lambda a, w: "replicas: 1" in a["text"]),
    Step("find_manifest", ns(kind="Deployment", name="web"), ("found",), holds("found")),
    Step("manifest_history", ns(kind="Deployment", name="web"), ("commits",), holds("commits")),
    Step("sync", {"dry_run": False}, ("objects", "summary"), holds("ok")),
    Step("drift", ns(), ("checked", "out_of_sync"), has("out_of_sync", [])),
    Step(
        "propose_change",
        {**PROPOSAL, "edits": [{"path": "spec.replicas", "value": 2}]},
        ("branch",),
        save=lambda a: {"pr": a["number"]},
    ),
    Step("comment_pr", pr(body="for the sale"), ("comments",), has("comments", 1)),
    Step("review_pr", pr(verdict="approve"), ("approved",), holds("approved")),
    Step("get_pr", pr(), ("diff", "checks"), lambda a, w: "+  replicas: 2" in a["diff"]),
    Step("merge_pr", pr(), ("merge_commit",), has("state", "merged")),
    Step("drift", ns(), ("out_of_sync",), lambda a, w: a["out_of_sync"][0]["state"] == "drifted"),
    Step("adopt_live", ns(kind="Deployment", name="web"), ("number",), holds("adopted")),
    Step(
        "list_prs",
        {"state": "merged"},
        ("prs",),
        lambda a, w: a["prs"][0]["number"] == w.saved["pr"],
    ),
    Step(
        "sync", {}, ("objects", "summary"), lambda a, w: a["dry_run"] and "1 update" in a["summary"]
    ),
    Step("sync", {"dry_run": False}, ("objects", "summary"), holds("ok")),
    Step("revert_pr", pr(), ("reverts", "files"), save=lambda a: {"revert": a["number"]}),
    Step("close_pr", pr("revert"), ("number",), has("state", "closed")),
]

DOWNSCALE = {
    "action": "scale",
    "target": "deployment/web",
    "namespace": "shop",
    "from_replicas": 5,
    "replicas": 1,
    "metrics": {"cpu_utilization": 0.1},
}
DELETE = {"action": "delete", "target": "configmap/settings", "namespace": "shop"}


def proposal(saved: str, **arguments: Any) -> Callable[[World], Json]:
    """`arguments` for the proposal an earlier step made (saved as `saved`)."""
    return lambda world: {**arguments, "proposal_id": world.saved[saved]}


def outcome(value: str) -> Callable[[Json, World], bool]:
    return lambda answer, world: bool(answer["decision"]["outcome"] == value)


# The server acts as alice of shop-admins (server_command), so she proposes and answers.
POLICY = [
    Step("list_policies", {}, ("policies", "total"), lambda a, w: a["total"] >= 9),
    Step(
        "get_policy",
        {"name": "shop-min-capacity"},
        ("yaml",),
        lambda a, w: "minReplicas" in a["yaml"],
    ),
    Step("explain_policy", {"name": "shop-changes"}, ("explanation",), holds("explanation")),
    Step("evaluate_action", DOWNSCALE, ("verdict", "fired"), has("verdict", "counter")),
    Step(
        "propose",
        {**DOWNSCALE, "rationale": "idle"},
        ("decision",),
        outcome("approved-as-countered"),
        save=lambda a: {"scaled": a["proposal"]},
    ),
    Step(
        "evaluate_proposal", proposal("scaled", team="shop"), ("verdict",), has("verdict", "accept")
    ),
    Step(
        "propose",
        {**DELETE, "rationale": "retired"},
        ("approval",),
        has("state", "escalated"),
        save=lambda a: {"deleted": a["proposal"], "request": a["approval"]["id"]},
    ),
    Step("list_proposals", {}, ("proposals",), has("total", 2)),
    Step("list_approvals", {}, ("approvals",), lambda a, w: a["approvals"][0]["may_answer"]),
    Step(
        "answer_approval",
        lambda w: {"request_id": w.saved["request"], "verdict": "grant"},
        ("state", "decision"),
        has("state", "granted"),
    ),
    Step(
        "claim_approval",
        lambda w: {"request_id": w.saved["request"], "waiter": "run-1"},
        ("claimed", "decision"),
        lambda a, w: a["claimed"] and a["claimed_by"] == "person alice run-1",
    ),
    Step("get_proposal", proposal("deleted"), ("transcript",), outcome("approved")),
    Step("audit_query", lambda w: {"subject": w.saved["request"]}, ("records",), holds("records")),
    Step("audit_verify", {}, ("intact", "problems"), holds("intact")),
]

TABLES = {"kube": KUBE, "metrics": METRICS, "gitops": GITOPS, "policy": POLICY}


def world_for(server: str, run: str) -> World:
    """kube and gitops runs work in a namespace of their own; metrics ones read `shop`."""
    return World(namespace="shop" if server == "metrics" else f"{server}-{run}")


# --- servers and what they serve -----------------------------------------------------------------

GITOPS_WEB = """\
# The web front end.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: {namespace}
spec:
  replicas: 1  # raised for the sale
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      containers:
        - name: web
          image: nginx:1.27
"""


@dataclass(frozen=True)
class Backends:
    """What the servers are pointed at: the module's sandbox and the Prometheus scraping it."""

    kubeconfig: Path
    prometheus_url: str


@pytest.fixture(scope="module")
def backends(
    shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Backends]:
    workdir = tmp_path_factory.mktemp("every-tool")
    kubectl = Kubectl(shared_sandbox.kubeconfig, workdir / "kube-cache")
    kubectl.run("apply", "-f", "-", input=shop.WEB)
    with running_prometheus(shared_sandbox.kubeconfig, workdir / "prometheus") as prom:
        rate = 'sum(rate(http_requests_total{namespace="shop",service="web"}[30s]))'
        eventually(lambda: (prom.value(rate) or 0) > 0, timeout=60, what="web's traffic scraped")
        yield Backends(shared_sandbox.kubeconfig, prom.url)


def manifests_repo(parent: Path, namespace: str) -> Path:
    """A fresh git repository of manifests for `namespace`, named after it so that no two
    repositories label (and prune) the same objects."""
    repo = parent / namespace
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (repo / "apps").mkdir()
    (repo / WEB).write_text(GITOPS_WEB.format(namespace=namespace))
    (repo / "namespace.yaml").write_text(NS.format(name=namespace))
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "initial")
    return repo


def server_command(server: str, backends: Backends, workdir: Path, run: str) -> list[str]:
    """`kubecrew mcp <server> ...` as a host's configuration would spell it (stdio default)."""
    if server == "policy":  # a store of each run's own, no cluster
        store = workdir / f"policy-{run}.sqlite"
        identity = ["--as", "alice", "--group", "shop-admins"]
        return [KUBECREW, "mcp", "policy", "--store", str(store), "--policies", POLICIES, *identity]
    options = ["--kubeconfig", str(backends.kubeconfig)]
    if server == "kube":  # the sandbox's registries, on its own server
        options += ["--registry", "*=/registries/{host}"]
    if server == "metrics":
        options += ["--prometheus-url", backends.prometheus_url]
    if server == "gitops":
        options += ["--repo", str(manifests_repo(workdir, world_for(server, run).namespace))]
    return [KUBECREW, "mcp", server, *options]


@pytest.fixture(scope="module")
def http_urls(backends: Backends, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Json]:
    """Each server started once with `--transport http` on its own port; their MCP URLs."""
    workdir = tmp_path_factory.mktemp("http-servers")
    env = child_env(KUBECREW_MCP_TOKEN=TOKEN)
    urls: Json = {}
    with contextlib.ExitStack() as running:
        for server in SERVERS:
            port = free_port()
            command = server_command(server, backends, workdir, "http")
            command += ["--transport", "http", "--port", str(port)]
            running.enter_context(http_server(command, port, workdir / f"{server}.log", env))
            urls[server] = f"http://127.0.0.1:{port}/mcp"
        yield urls


# --- the tests -----------------------------------------------------------------------------------


async def covered_run(server: str, world: World, client: tuple[set[str], Invoke]) -> None:
    """Fail if the server's tools and its table differ, else run the table."""
    listed, invoke = client
    assert_covered(server.upper(), listed, TABLES[server])
    await run_table(TABLES[server], world, invoke)


@pytest.mark.parametrize("server", SERVERS)
def test_every_tool_answers_over_stdio(server: str, backends: Backends, tmp_path: Path) -> None:
    command = [*server_command(server, backends, tmp_path, "stdio"), "--transport", "stdio"]
    world = world_for(server, "stdio")

    async def go() -> None:
        async with stdio_session(command, tmp_path / "stderr.log") as session:
            await covered_run(server, world, await official_client(session, world))

    run(go)


@pytest.mark.parametrize("server", SERVERS)
def test_every_tool_answers_over_streamable_http(server: str, http_urls: Json) -> None:
    world = world_for(server, "http")

    async def go() -> None:
        async with http_session(http_urls[server], TOKEN) as session:
            await covered_run(server, world, await official_client(session, world))

    run(go)


def test_every_tool_answers_as_a_langchain_tool(
    backends: Backends, http_urls: Json, tmp_path: Path
) -> None:
    """One MultiServerMCPClient with every server: kube and metrics over the module's HTTP
    servers, gitops and policy spawned over stdio with a repository or store of their own. One
    session per server (a stdio server spawned per call would be a process per call)."""
    gitops, *gitops_args = server_command("gitops", backends, tmp_path, "langchain")
    policy, *policy_args = server_command("policy", backends, tmp_path, "langchain")
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    kube: StreamableHttpConnection = {
        "transport": "streamable_http",
        "url": http_urls["kube"],
        "headers": bearer,
    }
    metrics: StreamableHttpConnection = {**kube, "url": http_urls["metrics"]}
    client = MultiServerMCPClient(
        {
            "kube": kube,
            "metrics": metrics,
            "gitops": {"transport": "stdio", "command": gitops, "args": gitops_args},
            "policy": {"transport": "stdio", "command": policy, "args": policy_args},
        }
    )

    async def go() -> None:
        for server in SERVERS:
            world = world_for(server, "langchain")
            async with client.session(server) as session:
                await covered_run(server, world, await langchain_client(session, server, world))

    run(go)


def test_the_table_check_names_missing_and_stale_tools() -> None:
    table = [Step("scale", {}, ()), Step("retired", {}, ())]
    with pytest.raises(pytest.fail.Exception) as failed:
        assert_covered("KUBE", {"scale", "brand_new"}, table)
    assert str(failed.value) == (
        "tools with no Step in KUBE: brand_new; Steps in KUBE for tools the server lacks: retired"
    )
