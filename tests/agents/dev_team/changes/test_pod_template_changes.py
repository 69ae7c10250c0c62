"""Changes of a workload's pod template asked in words (probes, where its pods run, how they
spread, what they mount), each in three phrasings, carried out as a rollout that is validated
(the pods Ready with the new template) and checked on the Deployment afterwards; a template
that cannot run (no node matches) is rolled back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.support.changes import Crew

Check = Callable[[Crew, int], None]


def _pod_spec(crew: Crew) -> dict[str, Any]:
    return dict(crew.web()["spec"]["template"]["spec"])


def _probes(crew: Crew, number: int) -> None:
    container = crew.container()
    if number == 0:
        assert container["readinessProbe"]["httpGet"] == {"path": "/", "port": 80,
                                                          "scheme": "HTTP"}  # fmt: skip
    elif number == 1:
        probe = container["livenessProbe"]
        assert probe["tcpSocket"] == {"port": 80}
        assert (probe["periodSeconds"], probe["initialDelaySeconds"]) == (5, 10)
        assert container["readinessProbe"]["httpGet"]["path"] == "/"
    else:
        assert "readinessProbe" not in container and "livenessProbe" in container


def _placement(crew: Crew, number: int) -> None:
    spec = _pod_spec(crew)
    if number == 0:
        assert spec["nodeSelector"] == {"disktype": "ssd"}
    elif number == 1:
        assert spec["tolerations"] == [{"key": "dedicated", "operator": "Equal", "value": "gpu",
                                        "effect": "NoSchedule"}]  # fmt: skip
    else:
        [constraint] = spec["topologySpreadConstraints"]
        assert constraint["topologyKey"] == "topology.kubernetes.io/zone"
        assert constraint["labelSelector"] == {"matchLabels": {"app": "web"}}
    pods = crew.kubectl.json("get", "pods", "-n", "staging", "-l", "app=web")["items"]
    if number == 0:
        nodes = {
            p["spec"].get("nodeName") for p in pods if not p["metadata"].get("deletionTimestamp")
        }
        assert nodes == {"node-2"}, nodes


def _mounts(crew: Crew, number: int) -> None:
    container, spec = crew.container(), _pod_spec(crew)
    if number == 0:
        assert {"name": "settings-vol", "mountPath": "/etc/settings"} in container["volumeMounts"]
        assert {"name": "settings-vol", "configMap": {"name": "settings"}} in spec["volumes"]
    elif number == 1:
        assert {"configMapRef": {"name": "settings"}} in container["envFrom"]
    else:
        reference = {"configMapKeyRef": {"name": "settings", "key": "mode"}}
        assert {"name": "MODE", "valueFrom": reference} in container["env"]


CASES = [
    pytest.param(
        ["add a readiness probe to web on / port 80",
         "hey, could you give the web deployment a tcp liveness probe on port 80 every 5s after "
         "10 seconds?",
         "please remove the readiness probe from wbe"],
        _probes, id="probes",
    ),
    pytest.param(
        ["run web only on nodes with disktype=ssd",
         "could you let the web pods tolerate dedicated=gpu:NoSchedule?",
         "spread wbe across zones"],
        _placement, id="placement",
    ),
    pytest.param(
        ["mount configmap settings into web at /etc/settings",
         "please load every key of configmap settings into the web environment",
         "set MODE in wbe from key mode of configmap settings"],
        _mounts, id="mounts",
    ),
]  # fmt: skip

SETTINGS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: staging}
data: {mode: fast}
"""


@pytest.mark.parametrize(("asked", "check"), CASES)
def test_a_pod_template_change_rolls_out_as_asked(
    crew: Crew, asked: list[str], check: Check
) -> None:
    crew.kubectl("apply", "-f", "-", input=SETTINGS)
    crew.kubectl("label", "node", "node-2", "disktype=ssd")
    crew.kubectl("taint", "node", "node-3", "dedicated=gpu:NoSchedule")
    for number, text in enumerate(asked):
        outcome = crew.ask(text, thread=f"t{number}")
        assert outcome.data.get("outcome") == "done", (text, outcome.answer)
        assert any("Ready" in s for s in outcome.data["steps"]), outcome.data["steps"]
        check(crew, number)


def test_a_probe_that_fails_is_rolled_back(crew: Crew) -> None:
    outcome = crew.ask("set web's readiness probe to GET /missing-page on port 81")
    assert outcome.data["outcome"] == "undone", outcome.answer
    assert "readinessProbe" not in crew.container()
    assert "rolled Deployment web in staging back to revision 1" in outcome.answer


def test_pods_that_no_node_can_run_are_rolled_back(crew: Crew) -> None:
    outcome = crew.ask("pin web to nodes with gpu=a100")
    assert outcome.data["outcome"] == "undone", outcome.answer
    assert "nodeSelector" not in _pod_spec(crew)
