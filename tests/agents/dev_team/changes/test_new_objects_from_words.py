"""New things described in words (a Deployment, a pod, a Job that runs every night, a
ConfigMap), each in three phrasings, created through policy, a dry run, the gated apply and
validation, and read back from the API server; one that exists already is not made again."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.changes import Crew


def _get(crew: Crew, kind: str, name: str, namespace: str = "staging") -> dict[str, Any]:
    return dict(crew.kubectl.json("get", kind, name, "-n", namespace))


WORKLOADS = [
    pytest.param(
        "run redis:7 as cache with 2 replicas in staging", "deployment", "cache",
        {"image": "redis:7"}, {"replicas": 2}, id="run-deployment",
    ),
    pytest.param(
        "hey, could you create a deployment called api in staging with image nginx:1.27 and 3 "
        "replicas on port 80?", "deployment", "api",
        {"image": "nginx:1.27", "ports": [{"containerPort": 80, "protocol": "TCP"}]},
        {"replicas": 3},
        id="chatty-deployment",
    ),
    pytest.param(
        "create deploymnet worker --image=busybox:1.36 --replicas=1 -n staging -- sleep 3600",
        "deployment", "worker", {"image": "busybox:1.36", "command": ["sleep", "3600"]},
        {"replicas": 1}, id="kubectl-like-with-a-typo",
    ),
    pytest.param(
        "deploy redis:7 named sessions into staging with two replicas", "deployment", "sessions",
        {"image": "redis:7"}, {"replicas": 2}, id="deploy-without-a-gitops-repository",
    ),
    pytest.param(
        "Please create a nginx pod named web-server in the staging namespace", "pod",
        "web-server", {"image": "nginx"}, {}, id="pod",
    ),
    pytest.param(
        "a job that runs `echo report done` every night at 2 in staging", "cronjob", "echo-cron",
        {"image": "busybox:1.36", "command": ["echo", "report", "done"]},
        {"schedule": "0 2 * * *"}, id="nightly-job",
    ),
    pytest.param(
        "Create a CronJob named data-backup in the staging namespace that runs every day at "
        "midnight. It should run a busybox container that executes a simple command to echo "
        "'Backup completed' and then sleep for 5 seconds.", "cronjob", "data-backup",
        {"image": "busybox", "command": ["sh", "-c", "echo 'Backup completed'; sleep 5"]},
        {"schedule": "0 0 * * *"}, id="described-cronjob",
    ),
]  # fmt: skip


def _container(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj["spec"]
    if obj["kind"] == "CronJob":
        spec = spec["jobTemplate"]["spec"]
    template = spec.get("template", {}).get("spec") or spec
    return dict(template["containers"][0])


@pytest.mark.parametrize(("asked", "kind", "name", "container", "spec"), WORKLOADS)
def test_a_described_workload_is_created_and_comes_up(
    crew: Crew, asked: str, kind: str, name: str, container: dict[str, Any], spec: dict[str, Any]
) -> None:
    outcome = crew.ask(asked)
    assert outcome.data.get("outcome") == "done", outcome.answer
    made = _get(crew, kind, name)
    assert {k: v for k, v in _container(made).items() if k in container} == container
    assert {k: v for k, v in made["spec"].items() if k in spec} == spec
    again = crew.ask(asked, thread="again")
    assert again.clarifying and "already exists" in again.answer, again.answer


def test_configmaps_are_created_changed_and_trimmed(crew: Crew) -> None:
    done = crew.ask("create a configmap app-config with LOG_LEVEL=debug and MODE=fast in staging")
    assert done.data["outcome"] == "done", done.answer
    assert _get(crew, "configmap", "app-config")["data"] == {"LOG_LEVEL": "debug", "MODE": "fast"}
    done = crew.ask("please add key region=eu to the configmap app-config in staging", thread="2")
    assert done.data["outcome"] == "done", done.answer
    assert _get(crew, "configmap", "app-config")["data"]["region"] == "eu"
    done = crew.ask("remove key MODE from configmap app-config -n staging", thread="3")
    assert done.data["outcome"] == "done", done.answer
    assert _get(crew, "configmap", "app-config")["data"] == {"LOG_LEVEL": "debug", "region": "eu"}


def test_a_volume_claim_is_created_as_said(crew: Crew) -> None:
    done = crew.ask("create a 1Gi pvc named data in staging")
    assert done.data["outcome"] == "done", done.answer
    spec = _get(crew, "pvc", "data")["spec"]
    assert spec["resources"]["requests"]["storage"] == "1Gi"
    assert spec["accessModes"] == ["ReadWriteOnce"]
    done = crew.ask("make a shared 2Gi persistent volume claim called media -n staging", thread="2")
    assert done.data["outcome"] == "done", done.answer
    assert _get(crew, "pvc", "media")["spec"]["accessModes"] == ["ReadWriteMany"]

    again = crew.ask("create a 5Gi pvc named data in staging", thread="3")  # it exists
    asked = crew.ask("create a pvc named logs in staging", thread="4")  # how big?
    assert again.clarifying and "resize the data pvc" in again.answer, again.answer
    assert asked.clarifying and "how big" in asked.answer, asked.answer
    assert _get(crew, "pvc", "data")["spec"]["resources"]["requests"]["storage"] == "1Gi"


def test_a_secret_is_never_made_from_typed_values_and_one_made_by_hand_is_mounted(
    crew: Crew,
) -> None:
    refused = crew.ask("create a secret db-pass with password=s3cr3t-value in staging")
    assert refused.clarifying and "kubectl create secret generic" in refused.answer
    assert "s3cr3t-value" not in refused.answer
    assert crew.mutations() == []

    crew.kubectl("create", "secret", "generic", "creds", "--from-literal=token=abc", "-n",
                 "staging")  # fmt: skip
    done = crew.ask("mount secret creds into web at /etc/creds in staging", thread="2")
    assert done.data["outcome"] == "done", done.answer
    spec = _get(crew, "deployment", "web")["spec"]["template"]["spec"]
    [volume] = [v for v in spec["volumes"] if v.get("secret") == {"secretName": "creds"}]
    mounts = spec["containers"][0]["volumeMounts"]
    assert {"name": volume["name"], "mountPath": "/etc/creds"} in [
        {k: v for k, v in m.items() if k in ("name", "mountPath")} for m in mounts
    ], mounts


def test_a_workload_without_an_image_is_asked_about(crew: Crew) -> None:
    outcome = crew.ask("create a deployment called api in staging")
    assert outcome.clarifying and "image" in outcome.answer, outcome.answer
    assert crew.mutations() == []


def test_a_deploy_from_manifests_without_a_gitops_repository_says_what_it_needs(
    crew: Crew,
) -> None:
    outcome = crew.ask("deploy web to qa")
    assert "GitOps repository" in outcome.answer and "deploy nginx:1.27 as web" in outcome.answer
    assert crew.mutations() == []
