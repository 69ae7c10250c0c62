"""A workload's logs asked for in people's words on a sandbox: what its pod wrote, its last lines,
its errors alone, checked against `kubectl logs`; a question naming nobody asks whose; never
writing anything."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.questions import Asked, Asker, writing_nothing
from tests.support.waiting import eventually

NAMESPACE = "told"
SCRIPT = 'for i in 1 2 3 4 5; do echo "line $i"; done; echo "ERROR disk full"; sleep 3600'


@pytest.fixture(scope="module")
def kubectl(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    kubectl = Kubectl(shared_sandbox.kubeconfig, tmp_path_factory.mktemp("cache"))
    kubectl("create", "namespace", NAMESPACE)
    kubectl("create", "deployment", "talker", "--image=busybox:1.36", "-n", NAMESPACE,
            "--", "sh", "-c", SCRIPT)  # fmt: skip
    eventually(lambda: "ERROR disk full" in written(kubectl), what="talker's lines written")
    return kubectl


def written(kubectl: Kubectl, *flags: str) -> str:
    done = kubectl.run("logs", "deploy/talker", "-n", NAMESPACE, *flags, check=False)
    return done.stdout if done.returncode == 0 else ""


@pytest.fixture(scope="module")
def asker(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Asker]:
    home = tmp_path_factory.mktemp("home")
    yield from writing_nothing(Asker(shared_sandbox.kubeconfig, home))


def ask(asker: Asker, text: str) -> Asked:
    asked = asker.ask(text)
    assert asked.answered is not None, f"{text!r} was not read as a question"
    assert asked.writes == [] and asked.data["family"] == "logs", asked.text
    return asked


def quoted(asked: Asked) -> list[str]:
    return [
        line.removeprefix("  | ") for line in asked.text.splitlines() if line.startswith("  | ")
    ]


@pytest.mark.parametrize(
    "text",
    [f"show me the logs of talker in {NAMESPACE}", f"kubectl logs talker -n {NAMESPACE}",
     f"what did talker write to its log in the {NAMESPACE} namespace?"],
)  # fmt: skip
def test_a_workloads_logs_are_what_its_pod_wrote(asker: Asker, kubectl: Kubectl, text: str) -> None:
    asked = ask(asker, text)
    assert quoted(asked) == written(kubectl).splitlines(), asked.text
    [row] = asked.data["rows"]
    assert row["pod"].startswith("talker-") and row["container"] == "busybox"


def test_the_last_lines_and_the_errors_alone(asker: Asker, kubectl: Kubectl) -> None:
    last = ask(asker, f"last 2 lines of talker's logs in {NAMESPACE}")
    errors = ask(asker, f"any errors in the logs of talker in {NAMESPACE}?")

    assert (
        quoted(last) == written(kubectl, "--tail=2").splitlines() == ["line 5", "ERROR disk full"]
    )
    assert quoted(errors) == ["ERROR disk full"], errors.text
    assert "holding 'error'" in errors.text


def test_logs_of_nobody_named_ask_whose(asker: Asker) -> None:
    asked = asker.ask(f"show me the logs in {NAMESPACE}")
    assert asked.answered is not None and asked.data.get("clarify"), asked.text
    assert "Whose logs?" in asked.text and asked.writes == []
