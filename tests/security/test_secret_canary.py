"""The canary: a Secret with random values lives in the sandbox cluster and in the git repository,
and no tool of any server, called any way, answers with one of them.

The tools are listed from the servers themselves over MCP (in-memory transport, one session per
server held open), so a new tool is called without anyone adding it here. Arguments are drawn
from each tool's input schema (`schema_arguments`), and mostly from values aimed at the Secrets:
their names, keys and JSON pointers into them, patches that copy, move or test them, manifests
of them (valid or broken), their files and history in git (a Secret manifest, and the files a
kustomize secretGenerator reads); for the tools that send documents (patch, apply, propose),
often as whole calls, and four times as often as the others. Writes are dry runs (dry_run=True
wherever a tool has it); the tools without one change only throwaway copies (the repository's
branches and pull requests, the policy store), never the Secret. The result, the structured
content and the error text of every call are searched for the values in plain, base64 and
JSON-escaped forms (`secret_forms`).

`test_each_tool_keeps_the_canary` calls every tool once with the most pointed arguments;
`test_no_tool_shows_the_canary` then draws EXAMPLES calls per server, at least 500 each.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.types import Tool

from core.policy.settings import PolicySettings
from mcp_servers.gitops.server import build as gitops_server
from mcp_servers.kube.server import build as kube_server
from mcp_servers.kube.settings import KubeSettings
from mcp_servers.metrics.server import build as metrics_server
from mcp_servers.metrics.settings import MetricsSettings
from mcp_servers.policy.server import build as policy_server
from sandbox.server import Sandbox
from tests.support.gitops import git, settings_for
from tests.support.kubectl import Kubectl
from tests.support.open_sessions import OpenSessions, Result, open_sessions
from tests.support.schema_arguments import arguments
from tests.support.secret_forms import canary, leaks
from tests.support.waiting import eventually

NS = "canary"
PASSWORD = canary("password")
TOKEN = canary("token")
# A secretGenerator's values (a literal, a file, an env file), plain: kustomize reads them raw.
GENERATED = [canary(name).replace('"', "").replace("\\", "") for name in ("literal", "file", "env")]
VALUES = (PASSWORD, TOKEN, *GENERATED)
EXAMPLES = {"kube": 600, "gitops": 500, "policy": 500, "metrics": 500}
POLICIES = Path(__file__).parents[2] / "policies"
SECRET_FILE = "secrets/db.yaml"

LIVE = f"""\
apiVersion: v1
kind: Namespace
metadata: {{name: {NS}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {NS}}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        env:
        - name: PASSWORD
          valueFrom: {{secretKeyRef: {{name: db, key: password}}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: settings, namespace: {NS}}}
data: {{mode: calm}}
"""


def secret_manifest(**extra: Any) -> dict[str, Any]:
    """The Secret as git and the cluster hold it (kubectl apply: with the last-applied copy)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "db", "namespace": NS},
        "stringData": {"password": PASSWORD},
        "data": {"token": base64.b64encode(TOKEN.encode()).decode()},
        **extra,
    }


# -- aimed arguments --------------------------------------------------------------------------

DATA_POINTERS = [
    "/data/password",
    "/data/token",
    "/data",
    "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration",
]
POINTERS = st.sampled_from(
    [
        *DATA_POINTERS,
        "/stringData/password",
        "/metadata/annotations",
        "/metadata/annotations/copied",
        "/metadata/labels",
        "/metadata/labels/copied",
        "/metadata/name",
        "/metadata/generateName",
        "/metadata/namespace",
        "/metadata/finalizers",
        "/type",
        "/kind",
        "/apiVersion",
        "/immutable",
        "/spec",
    ]
)
# Where a value comes from: mostly the Secret's data (the leak is in what moves).
SOURCES = st.one_of(st.sampled_from(DATA_POINTERS), POINTERS)
TEXT = st.one_of(st.text(max_size=12), st.sampled_from(["", "x", "db", "password", "token"]))
KEYS = st.sampled_from(["password", "token", "copied", "x"])


@st.composite
def json_patch_op(draw: st.DrawFn) -> dict[str, Any]:
    op = draw(
        st.sampled_from(
            ["copy", "move", "test", "copy", "move", "test", "add", "replace", "remove"]
        )
    )
    out: dict[str, Any] = {"op": op, "path": draw(SOURCES if op == "test" else POINTERS)}
    if op in ("copy", "move"):
        out["from"] = draw(SOURCES)
    if op in ("test", "add", "replace"):
        out["value"] = draw(st.one_of(TEXT, st.just({}), st.dictionaries(KEYS, TEXT, max_size=2)))
    return out


MERGE_PATCHES = st.one_of(
    st.fixed_dictionaries({"data": st.dictionaries(KEYS, TEXT, max_size=2)}),
    st.fixed_dictionaries({"stringData": st.dictionaries(KEYS, TEXT, max_size=2)}),
    st.fixed_dictionaries(
        {
            "metadata": st.fixed_dictionaries(
                {"annotations": st.dictionaries(KEYS, TEXT, max_size=2)}
            )
        }
    ),
    st.fixed_dictionaries({"type": TEXT}),
)


def broken(text: str, cut: int) -> str:
    """`text` cut short: a manifest or patch that no longer parses."""
    return text[: max(1, len(text) * cut // 10)]


@st.composite
def secret_manifests(draw: st.DrawFn) -> str:
    metadata: dict[str, Any] = {"name": draw(st.sampled_from(["db", "db2"]))}
    if draw(st.booleans()):
        metadata["namespace"] = NS
    if draw(st.booleans()):
        metadata[draw(st.sampled_from(["labels", "annotations"]))] = draw(
            st.dictionaries(KEYS, TEXT, max_size=2)
        )
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Secret", "metadata": metadata}
    doc[draw(st.sampled_from(["data", "stringData"]))] = draw(
        st.dictionaries(KEYS, TEXT, max_size=2)
    )
    if draw(st.booleans()):
        doc["type"] = draw(st.sampled_from(["Opaque", "kubernetes.io/tls", "x"]))
    text = yaml.safe_dump(doc) if draw(st.booleans()) else json.dumps(doc)
    return broken(text, draw(st.integers(1, 9))) if draw(st.integers(0, 3)) == 0 else text


PATCHES = st.one_of(
    st.lists(json_patch_op(), min_size=1, max_size=3),
    MERGE_PATCHES,
    st.lists(json_patch_op(), min_size=1, max_size=3).map(json.dumps),
    st.builds(broken, MERGE_PATCHES.map(json.dumps), st.integers(1, 9)),
)
EDITS = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {
                "path": st.sampled_from(
                    [
                        "data.password",
                        "data.token",
                        "stringData.password",
                        "metadata.annotations.copied",
                        "metadata.labels.x",
                        "spec.replicas",
                    ]
                ),
                "value": TEXT,
            }
        ),
        st.fixed_dictionaries(
            {"path": st.sampled_from(["data.password", "stringData"]), "delete": st.just(True)}
        ),
    ),
    min_size=1,
    max_size=2,
)
FIELDS = st.lists(
    st.sampled_from(
        ["data", "data.password", "stringData", "metadata", "metadata.annotations", "type"]
    ),
    min_size=1,
    max_size=3,
)


def aimed(nodes: list[str], pods: list[str]) -> dict[str, st.SearchStrategy[Any]]:
    """Values aimed at the Secret, by argument name, for every server's tools."""
    return {
        "kind": st.sampled_from(
            ["secret", "secrets", "Secret", "v1/Secret", "configmap", "deployment", "pods"]
        ),
        "name": st.sampled_from(["db", "db2", "web", "settings"]),
        "namespace": st.sampled_from([NS, NS, "default", ""]),
        "patch": PATCHES,
        "patch_type": st.sampled_from(["json", "json", "merge", "strategic"]),
        "manifest": secret_manifests(),
        "content": secret_manifests(),
        "new_files": st.dictionaries(
            st.sampled_from(["secrets/copy.yaml", SECRET_FILE]), secret_manifests(), max_size=1
        ),
        "output": st.sampled_from(["yaml", "fields", "summary"]),
        "fields": FIELDS,
        "grep": st.sampled_from(["password", "db", "PASSWORD", ""]),
        "label_selector": st.sampled_from(["", "app=web", "x in (a)"]),
        "node": st.sampled_from(nodes),
        "pod": st.sampled_from(pods),
        "container": st.sampled_from(["web"]),
        "image": st.sampled_from(["nginx:1.27", "nginx:1.28"]),
        "verb": st.sampled_from(["get", "list", "patch"]),
        "resource": st.sampled_from(["secrets", "pods", "secrets/db"]),
        "subject": st.sampled_from([f"{NS}/default", "alice", "group:system:masters"]),
        "path": st.sampled_from(
            [
                SECRET_FILE,
                "apps/web.yaml",
                "secrets",
                "x.yaml",
                "generated/key.txt",
                "generated/app.env",
                "generated/kustomization.yaml",
            ]
        ),
        "ref": st.sampled_from(["main", "main~1", ""]),
        "under": st.sampled_from(["", "secrets", "apps", "generated"]),
        "edits": EDITS,
        "document": st.sampled_from([-1, 0, 1]),
        "number": st.integers(1, 8),
        "verdict": st.sampled_from(["approve", "request_changes", "comment", "grant", "deny"]),
        "wait_seconds": st.sampled_from([0, -1, 10_000]),
        "target": st.sampled_from(
            ["secret/db", "secrets/db", "deployment/web", "configmap/settings"]
        ),
        "action": st.sampled_from(["scale", "delete", "patch", "apply", "restart"]),
        "promql": st.sampled_from(
            ["up", f'kube_secret_info{{namespace="{NS}"}}', "sum(rate(x[1m]))"]
        ),
        "service": st.sampled_from(["web", "db"]),
        "workload": st.sampled_from(["web", "db"]),
        "context": st.sampled_from([None, "kubecrew-sandbox", "elsewhere"]),
        "type": st.sampled_from(["Warning", "Normal", ""]),
    }


SECRET = {"kind": st.sampled_from(["secret", "secrets", "Secret"]), "name": st.just("db")}
IN_NS = {"namespace": st.just(NS)}
CALLS: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "patch": st.one_of(
        st.fixed_dictionaries(
            {**SECRET, **IN_NS, "patch_type": st.just("json"),
             "patch": st.lists(json_patch_op(), min_size=1, max_size=3)}
        ),
        st.fixed_dictionaries(
            {**SECRET, **IN_NS, "patch_type": st.sampled_from(["merge", "strategic"]),
             "patch": MERGE_PATCHES}
        ),
    ),
    "apply": st.fixed_dictionaries({"manifest": secret_manifests(), **IN_NS}),
    "get_resource": st.fixed_dictionaries(
        {**SECRET, **IN_NS, "output": st.sampled_from(["yaml", "fields", "summary"]),
         "fields": FIELDS}
    ),
    "list_resources": st.fixed_dictionaries(
        {"kind": st.just("secrets"), "output": st.sampled_from(["yaml", "fields"]),
         "fields": FIELDS}
    ),
    "propose_change": st.one_of(
        st.fixed_dictionaries(
            {"title": TEXT.map(lambda t: f"canary {t}"), "path": st.just(SECRET_FILE),
             "edits": EDITS}
        ),
        st.fixed_dictionaries(
            {"title": TEXT.map(lambda t: f"canary {t}"),
             "path": st.sampled_from([SECRET_FILE, "secrets/other.yaml"]),
             "content": secret_manifests()}
        ),
    ),
    "review_pr": st.fixed_dictionaries(
        {"number": st.integers(1, 8), "verdict": st.just("approve")}
    ),
}  # fmt: skip


# Writes are dry runs; a watch waits one second at most.
FIXED = {"dry_run": True, "timeout_seconds": 1}


# -- the world --------------------------------------------------------------------------------


@dataclass(frozen=True)
class World:
    sessions: OpenSessions
    aimed: dict[str, st.SearchStrategy[Any]]
    pointed: dict[str, Any]  # one value per argument name, for the sweep

    def call(self, server: str, tool: str, args: dict[str, Any]) -> Result:
        result = self.sessions.call(server, tool, args)
        assert leaks(result.everything, *VALUES) == [], (server, tool, args, result)
        return result


GENERATOR = {
    "apiVersion": "kustomize.config.k8s.io/v1beta1",
    "kind": "Kustomization",
    "namespace": NS,
    "secretGenerator": [
        {
            "name": "generated",
            "literals": [f"literal={GENERATED[0]}"],
            "files": ["key=key.txt"],
            "envs": ["app.env"],
        }
    ],
}


def manifests_repo(parent: Path) -> Path:
    """The repository: the canary Secret (committed twice, so it is in the history too), the
    Deployment, the namespace, and a kustomization generating a Secret of its own."""
    repo = parent / "manifests"
    (repo / "secrets").mkdir(parents=True)
    (repo / "apps").mkdir()
    (repo / "generated").mkdir()
    (repo / "generated" / "kustomization.yaml").write_text(yaml.safe_dump(GENERATOR))
    (repo / "generated" / "key.txt").write_text(GENERATED[1])
    (repo / "generated" / "app.env").write_text(f"PASSWORD={GENERATED[2]}\n")
    git(repo, "init", "-q", "-b", "main")
    documents = yaml.safe_load_all(LIVE)
    namespace, deployment, _config = documents
    (repo / "namespace.yaml").write_text(yaml.safe_dump(namespace))
    (repo / "apps" / "web.yaml").write_text(yaml.safe_dump(deployment))
    for labels in ({"version": "1"}, {"version": "2"}):
        manifest = secret_manifest()
        manifest["metadata"]["labels"] = labels
        (repo / SECRET_FILE).write_text(yaml.safe_dump(manifest, allow_unicode=True))
        git(repo, "add", ".")
        git(repo, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "v")
    return repo


@pytest.fixture(scope="module")
def world(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    home = tmp_path_factory.mktemp("canary")
    kubectl = Kubectl(shared_sandbox.kubeconfig, home / "kube-cache")
    kubectl("apply", "-f", "-", input=LIVE)
    kubectl("apply", "-f", "-", input=json.dumps(secret_manifest()))
    pods = eventually(
        lambda: kubectl("get", "pods", "-n", NS, "-o", "name").split(), what="web's pod"
    )
    nodes = kubectl("get", "nodes", "-o", "name").split()
    config = shared_sandbox.kubeconfig
    servers = {
        "kube": kube_server(KubeSettings(kubeconfig=config)),
        "gitops": gitops_server(settings_for(manifests_repo(home), config)),
        "metrics": metrics_server(MetricsSettings(kubeconfig=config)),
        "policy": policy_server(
            PolicySettings(
                policies=(POLICIES,),
                store=str(home / "policy.sqlite"),
                person="alice",
                groups=("shop-admins",),
            ),
            environ={},
        ),
    }
    nodes, pods = [n.split("/")[-1] for n in nodes], [p.split("/")[-1] for p in pods]
    names = {"node": nodes[0], "pod": pods[0]}
    pointed = {
        "kind": "secret", "name": "db", "namespace": NS, "patch_type": "json",
        "patch": [{"op": "copy", "from": "/data/password", "path": "/metadata/annotations/copied"}],
        "manifest": json.dumps(secret_manifest(metadata={"name": "db", "labels": {"x": "a b"}})),
        "content": yaml.safe_dump(secret_manifest()), "path": SECRET_FILE, "ref": "main",
        "edits": [{"path": "data.token", "value": "eA=="}], "fields": ["data", "metadata"],
        "output": "yaml", "verb": "get", "resource": "secrets", "container": "web",
        "image": "nginx:1.28", "key": "canary", "target": "secret/db", "action": "patch",
        "number": 1, "title": "canary", "rationale": "canary", "service": "web", "promql": "up",
        **names,
    }  # fmt: skip
    with open_sessions(servers) as sessions:
        yield World(sessions, aimed(nodes, pods), pointed)


# -- the tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("server", EXAMPLES)
def test_each_tool_keeps_the_canary(world: World, server: str) -> None:
    tools = world.sessions.tools(server)
    assert tools, server
    for tool in tools:
        properties = tool.inputSchema.get("properties") or {}
        required = tool.inputSchema.get("required") or []
        args = {k: v for k, v in world.pointed.items() if k in properties}
        args |= {k: _plain(properties[k]) for k in required if k not in args}
        world.call(server, tool.name, args | {k: v for k, v in FIXED.items() if k in properties})


def _plain(schema: dict[str, Any]) -> Any:
    kind = schema.get("type") or next(
        (s.get("type") for s in schema.get("anyOf", []) if s.get("type") != "null"), "string"
    )
    if "enum" in schema:
        return schema["enum"][0]
    return {
        "string": "db",
        "integer": 1,
        "number": 1.0,
        "boolean": False,
        "array": [],
        "object": {},
    }.get(kind, "db")


def _sends_documents(tool: Tool) -> bool:
    return bool(
        {"patch", "manifest", "content", "edits"} & set(tool.inputSchema.get("properties") or {})
    )


@pytest.mark.parametrize("server", EXAMPLES)
def test_no_tool_shows_the_canary(world: World, server: str) -> None:
    tools = world.sessions.tools(server)
    called: list[str] = []
    # Tools that send documents (a patch, a manifest, file contents, edits) are where a value
    # moves: each is drawn four times as often.
    weighted = [t for t in tools for _ in range(4 if _sends_documents(t) else 1)]

    @settings(
        max_examples=EXAMPLES[server],
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=st.data())
    def property_(data: st.DataObject) -> None:
        tool = data.draw(st.sampled_from(weighted), label="tool")
        args = data.draw(
            arguments(tool, targeted=world.aimed, calls=CALLS, fixed=FIXED), label="arguments"
        )
        world.call(server, tool.name, args)
        called.append(tool.name)

    property_()
    assert len(called) >= EXAMPLES[server]
