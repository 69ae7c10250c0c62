"""Every command that lists or shows takes `-o table|json|yaml`, kubectl's flag, and one thing
has the same fields wherever it is printed.

The rule is read from the command tree itself (`typer.main.get_command`), so a list or show
command added later without `-o` fails here: a command named `list`, `show`, `status`,
`explain` or `version` prints records, and so do the few named otherwise (`READERS_BY_PATH`).
The runs are the installed console script in subprocesses against one SQLite policy store
holding an escalated proposal, its approval request and their audit records.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
import yaml

from core.policy.proposals import ApprovalRequest
from kubecrew.cli.main import app
from tests.support.policies import POLICIES, escalated

KUBECREW = str(Path(sys.executable).parent / "kubecrew")
FORMATS = ["table", "json", "yaml"]
READER_NAMES = frozenset({"list", "show", "status", "explain", "version"})
READERS_BY_PATH = frozenset({("ask",), ("policy", "check"), ("audit", "verify")})
HIDDEN_JSON = frozenset({("ask",), ("status",)})  # `--json` came first: it stays, hidden


def _walk(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from _walk(command, (*path, name))
        else:
            yield (*path, name), command


COMMANDS = dict(_walk(typer.main.get_command(app)))
READERS = {p for p in COMMANDS if p[-1] in READER_NAMES or p in READERS_BY_PATH}
WITH_OUTPUT = {p for p, c in COMMANDS.items() if any("-o" in q.opts for q in c.params)}
CHECKED = sorted(READERS | WITH_OUTPUT)  # a reader must take -o; any -o must mean the same


def _ids(paths: list[tuple[str, ...]]) -> list[str]:
    return [" ".join(path) for path in paths]


def _output_option(path: tuple[str, ...]) -> tuple[list[str], object]:
    """The choices `-o` offers on the command at `path`, and its default."""
    command = COMMANDS[path]
    [option] = [q for q in command.params if "-o" in q.opts]
    assert option.opts == ["--output", "-o"]
    context = command.make_context(path[-1], [], resilient_parsing=True)
    return [item.value for item in option.shell_complete(context, "")], option.default


def test_the_rule_sees_every_known_list_and_show_command() -> None:
    assert {
        ("approvals", "list"), ("approvals", "show"), ("proposals", "list"),
        ("proposals", "show"), ("audit", "list"), ("audit", "verify"), ("policy", "list"),
        ("policy", "explain"), ("policy", "check"), ("sandbox", "status"),
        ("sandbox", "fault", "list"), ("status",), ("ask",), ("version",),
    } <= READERS  # fmt: skip


@pytest.mark.parametrize("path", CHECKED, ids=_ids(CHECKED))
def test_each_list_and_show_command_takes_output(path: tuple[str, ...]) -> None:
    choices, default = _output_option(path)
    assert choices == FORMATS and default == "table"


@pytest.mark.parametrize("path", sorted(HIDDEN_JSON), ids=_ids(sorted(HIDDEN_JSON)))
def test_the_older_json_flag_still_works_but_is_hidden(path: tuple[str, ...]) -> None:
    [flag] = [q for q in COMMANDS[path].params if "--json" in q.opts]
    assert flag.hidden


def environ(home: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KUBECREW_")}
    return clean | {"KUBECREW_HOME": str(home), "KUBECONFIG": str(home / "no-kubeconfig")}


def kubecrew(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBECREW, *args], capture_output=True, text=True, timeout=60, env=environ(home),
        cwd=POLICIES.parent,  # the checkout: ./policies are the defaults
    )  # fmt: skip


def data(home: Path, *args: str) -> Any:
    """The command's output read back: JSON with `-o json`, YAML with `-o yaml`."""
    done = kubecrew(home, *args)
    assert done.returncode == 0, done.stderr
    return yaml.safe_load(done.stdout) if args[-1] == "yaml" else json.loads(done.stdout)


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, ApprovalRequest]:
    path = tmp_path / "store.sqlite"
    return path, escalated(path)


def test_a_bad_format_is_one_line_and_a_usage_error(tmp_path: Path) -> None:
    done = kubecrew(tmp_path, "approvals", "list", "-o", "xml")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == ["error: -o xml: choose table, json or yaml"]


def test_an_approval_request_reads_the_same_in_every_command(
    store: tuple[Path, ApprovalRequest], tmp_path: Path
) -> None:
    path, request = store
    at = ("--store", str(path))
    shown = data(tmp_path, "approvals", "show", request.id, *at, "-o", "json")
    assert shown == request.model_dump(mode="json")
    assert data(tmp_path, "approvals", "list", *at, "-o", "json") == [shown]
    assert data(tmp_path, "approvals", "list", *at, "-o", "yaml") == [shown]
    assert data(tmp_path, "approvals", "show", request.id, *at, "-o", "yaml") == shown
    assert data(tmp_path, "proposals", "show", request.proposal, *at, "-o", "json")[
        "approvals"
    ] == [shown]
    status = data(tmp_path, "status", *at, "-o", "json")
    assert status["approvals"] == [shown]
    assert data(tmp_path, "status", *at, "--json")["approvals"] == [shown]


def test_proposals_show_is_the_listed_proposal_and_its_story(
    store: tuple[Path, ApprovalRequest], tmp_path: Path
) -> None:
    path, request = store
    at = ("--store", str(path))
    [listed] = data(tmp_path, "proposals", "list", *at, "-o", "json")
    shown = data(tmp_path, "proposals", "show", request.proposal, *at, "-o", "yaml")
    assert {key: shown[key] for key in listed} == listed
    assert listed["id"] == request.proposal and listed["state"] == "escalated"
    assert shown["decision"]["outcome"] == "escalated" and shown["transcript"]


def test_audit_list_and_verify_as_data(store: tuple[Path, ApprovalRequest], tmp_path: Path) -> None:
    path, request = store
    at = ("--store", str(path))
    records = data(tmp_path, "audit", "list", *at, "-o", "json")
    assert records == data(tmp_path, "audit", "list", *at, "-o", "yaml")
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    assert request.proposal in {r["subject"] for r in records}
    verified = data(tmp_path, "audit", "verify", *at, "-o", "yaml")
    assert verified["intact"] is True and verified["problems"] == []
    assert verified["records"] == len(records) and verified["head"]["seq"] == len(records)


def test_policy_explain_is_the_listed_document_and_its_meaning(tmp_path: Path) -> None:
    listed = data(tmp_path, "policy", "list", "--kind", "CapacityPolicy", "-o", "json")
    [document] = [d for d in listed if d["metadata"]["name"] == "shop-min-capacity"]
    explained = data(tmp_path, "policy", "explain", "shop-min-capacity", "-o", "yaml")
    assert {key: explained[key] for key in document} == document
    table = kubecrew(tmp_path, "policy", "explain", "shop-min-capacity")
    assert explained["explanation"] == table.stdout.splitlines()


def test_policy_check_as_yaml_is_its_json_and_text_is_still_the_table(tmp_path: Path) -> None:
    check = ("policy", "check", "scale", "deployment/web", "-n", "shop", "--from", "5",
             "--replicas", "1", "--metric", "cpu_utilization=0.1")  # fmt: skip
    as_json = data(tmp_path, *check, "-o", "json")
    assert data(tmp_path, *check, "-o", "yaml") == as_json
    assert as_json["verdict"]["outcome"] == "counter"
    table, text = kubecrew(tmp_path, *check), kubecrew(tmp_path, *check, "-o", "text")
    assert table.returncode == text.returncode == 0 and table.stdout == text.stdout
    assert table.stdout.startswith("Action: scale Deployment shop/web 5 -> 1 replicas")


def test_version_as_data(tmp_path: Path) -> None:
    found = data(tmp_path, "version", "-o", "json")
    assert set(found) == {"kubecrew", "sandbox_kubernetes"}
    assert kubecrew(tmp_path, "version").stdout.startswith(f"kubecrew {found['kubecrew']} ")
