"""A Secret that is both in git and live keeps its values hidden in drift, sync and git reads.

Reproductions from an attacker's review: `drift` printed the git value and the live one side by
side, and `sync` (dry run or real) printed them as its changes. Found by the canary: the git
file itself (`read_manifest`) and its history (`manifest_history`, a pull request's diff) print
the value as committed. Drift still says that a Secret differs, and where, with markers.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from mcp_servers.gitops.server import build
from sandbox.server import Sandbox
from tests.support.gitops import Call, git, session, settings_for
from tests.support.kubectl import Kubectl
from tests.support.secret_forms import canary, leaks

GIT_VALUE = canary("git")
LIVE_VALUE = canary("live")
OLD_VALUE = canary("old")
TOKEN = canary("token")
PATH = "secrets/db.yaml"


def secret_file(namespace: str, password: str) -> str:
    """The Secret as git holds it: one key in `data` (base64), one in `stringData` (plain)."""
    document = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "db", "namespace": namespace},
        "data": {"password": base64.b64encode(password.encode()).decode()},
        "stringData": {"token": TOKEN},
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


@pytest.fixture
def repo(tmp_path: Path, namespace: str) -> Path:
    """A repository whose Secret was OLD_VALUE in its first commit and GIT_VALUE now."""
    repo = tmp_path / "manifests"
    (repo / "secrets").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    for password in (OLD_VALUE, GIT_VALUE):
        (repo / PATH).write_text(secret_file(namespace, password))
        git(repo, "add", ".")
        git(repo, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", password[:3])
    return repo


@pytest.fixture
def live(shared_kubectl: Kubectl, namespace: str) -> str:
    shared_kubectl(
        "create", "secret", "generic", "db", "-n", namespace,
        f"--from-literal=password={LIVE_VALUE}", f"--from-literal=token={TOKEN}",
    )  # fmt: skip
    return namespace


def calls(repo: Path, shared_sandbox: Sandbox, script: list[tuple[str, dict[str, Any]]]) -> str:
    """Everything the calls of `script` answered (results and error texts), as one text."""
    server = build(settings_for(repo, shared_sandbox.kubeconfig))
    seen: list[str] = []

    async def run(call: Call) -> None:
        for tool, arguments in script:
            try:
                seen.append(json.dumps(await call(tool, **arguments), ensure_ascii=False))
            except AssertionError as failed:
                seen.append(str(failed))

    session(server, run)
    return "\n".join(seen)


VALUES = (GIT_VALUE, LIVE_VALUE, OLD_VALUE, TOKEN)


def test_drift_of_a_secret_shows_no_value(
    repo: Path, live: str, shared_sandbox: Sandbox, shared_kubectl: Kubectl
) -> None:
    server = build(settings_for(repo, shared_sandbox.kubeconfig))
    found: dict[str, Any] = {}

    async def run(call: Call) -> None:
        found.update(await call("drift", namespace=live))

    session(server, run)
    assert leaks(json.dumps(found, ensure_ascii=False), *VALUES) == [], found
    (entry,) = found["out_of_sync"]
    assert entry["state"] == "drifted"
    # The token is the same in git (stringData) and live (data): only the password differs.
    assert [d["path"] for d in entry["diffs"]] == ["data.password"], entry
    assert "redacted" in entry["diffs"][0]["git"] and "redacted" in entry["diffs"][0]["live"]


def test_sync_dry_run_of_a_secret_shows_no_value(
    repo: Path, live: str, shared_sandbox: Sandbox, shared_kubectl: Kubectl
) -> None:
    text = calls(repo, shared_sandbox, [("sync", {"dry_run": True})])
    assert leaks(text, *VALUES) == [], text
    assert '"update"' in text


def test_sync_of_a_secret_shows_no_value_and_applies_git(
    repo: Path, live: str, shared_sandbox: Sandbox, shared_kubectl: Kubectl
) -> None:
    text = calls(repo, shared_sandbox, [("sync", {"dry_run": False}), ("drift", {})])
    assert leaks(text, *VALUES) == [], text
    data = shared_kubectl.json("get", "secret", "db", "-n", live)["data"]
    assert base64.b64decode(data["password"]).decode() == GIT_VALUE
    assert '"out_of_sync": []' in text


def test_reading_a_secret_from_git_shows_no_value(
    repo: Path, live: str, shared_sandbox: Sandbox
) -> None:
    script = [
        ("read_manifest", {"path": PATH}),
        ("manifest_history", {"kind": "Secret", "name": "db", "namespace": live}),
        ("list_manifests", {}),
        ("find_manifest", {"kind": "Secret", "name": "db"}),
    ]
    text = calls(repo, shared_sandbox, script)
    assert leaks(text, *VALUES) == [], text
    assert PATH in text and "redacted" in text


LITERAL = canary("literal").replace('"', "").replace("\\", "")
FILE_VALUE = canary("file").replace('"', "").replace("\\", "")
ENV_VALUE = canary("env").replace('"', "").replace("\\", "")


def test_a_generated_secret_shows_no_value(
    tmp_path: Path, namespace: str, shared_sandbox: Sandbox
) -> None:
    """A kustomization's secretGenerator holds values in itself (literals) and in the files it
    names (files, envs): reading, diffing or rendering them shows none."""
    repo = tmp_path / "generated"
    (repo / "app").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "namespace": namespace,
        "secretGenerator": [
            {
                "name": "generated",
                "literals": [f"literal={LITERAL}"],
                "files": ["key=key.txt"],
                "envs": ["app.env"],
            }
        ],
    }
    (repo / "app" / "kustomization.yaml").write_text(json.dumps(kustomization))
    (repo / "app" / "key.txt").write_text(FILE_VALUE + "\n")
    (repo / "app" / "app.env").write_text(f"PASSWORD={ENV_VALUE}\n")
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "generated")
    script = [
        ("read_manifest", {"path": "app/kustomization.yaml"}),
        ("read_manifest", {"path": "app/key.txt"}),
        ("read_manifest", {"path": "app/app.env"}),
        ("sync", {"dry_run": True}),
        ("drift", {}),
        ("propose_change", {"title": "rotate", "path": "app/key.txt", "content": "rotated\n"}),
        ("get_pr", {"number": 1}),
    ]
    text = calls(repo, shared_sandbox, script)
    assert leaks(text, LITERAL, FILE_VALUE, ENV_VALUE) == [], text
    assert '"create"' in text and "-<redacted Secret value>" in text
