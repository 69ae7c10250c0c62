"""The API server generates a Job's selector at creation, as Kubernetes' Job strategy does."""

from __future__ import annotations

from tests.support.simulation import Simulation

JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: report}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox:1.36, command: [sh, -c, "echo done"]}]
"""


def test_created_job_has_a_uid_selector_and_labelled_template_at_generation_one() -> None:
    sim = Simulation()
    (job,) = sim.apply(JOB)
    uid = job["metadata"]["uid"]
    assert job["metadata"]["generation"] == 1
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    labels = job["spec"]["template"]["metadata"]["labels"]
    assert labels["batch.kubernetes.io/job-name"] == "report" and labels["controller-uid"] == uid


def test_a_manual_selector_is_left_as_given() -> None:
    sim = Simulation()
    manual = JOB.replace(
        "spec:\n  template:",
        "spec:\n  manualSelector: true\n  selector: {matchLabels: {run: r1}}\n  template:",
    ).replace(
        "    spec:\n      restartPolicy",
        "    metadata: {labels: {run: r1}}\n    spec:\n      restartPolicy",
    )
    (job,) = sim.apply(manual)
    assert job["spec"]["selector"] == {"matchLabels": {"run": "r1"}}
    assert "controller-uid" not in job["spec"]["template"]["metadata"]["labels"]
