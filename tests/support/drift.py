"""Drift of the team's web (tests/support/team.py) as a person makes it: `edit_by_hand` is a
`kubectl edit` of web's image (to `HOTFIX_IMAGE`) and replicas, as a person on call does;
`IMAGE` is the field path a drift report names that image by, and `live` web as the cluster
holds it.
"""

from __future__ import annotations

import subprocess
from typing import Any

from tests.support.kubectl import KUBECTL, KubectlError
from tests.support.team import Team

HOTFIX_IMAGE = "nginx:1.26"
IMAGE = "spec.template.spec.containers[name=web].image"


def edit_by_hand(team: Team) -> None:
    """`kubectl edit` of web, as a person on call does: the image and the replica count."""
    image = f"-e 's/image: nginx:1.27$/image: {HOTFIX_IMAGE}/'"
    script = f"sed -i {image} -e 's/^  replicas: 1$/  replicas: 2/'"
    done = subprocess.run(
        [KUBECTL, "edit", "deployment", "web", "-n", "shop"],
        env={**team.kubectl.env(), "KUBE_EDITOR": script},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        raise KubectlError(f"kubectl edit failed: {done.stdout}{done.stderr}")
    assert (team.image(), live(team)["spec"]["replicas"]) == (HOTFIX_IMAGE, 2)


def live(team: Team) -> dict[str, Any]:
    found: dict[str, Any] = team.kubectl.json("get", "deployment", "web", "-n", "shop")
    return found
