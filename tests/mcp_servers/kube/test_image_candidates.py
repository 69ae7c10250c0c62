"""Which images `recommend` offers for a container that cannot pull, on a living sandbox: never
an image known to fail (the typo itself, found in the rollout history; an image the registry no
longer holds), never another container's image, and, with the sandbox's registries as mirrors,
the image the registry really has nearest to the one written, with the evidence for it. A
registry that does not answer leaves the answer as it is offline, and says so."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_servers.kube.diagnosis.playbooks.nearest import nearest_tags
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.diagnosis import NS, deployment, rollout
from tests.support.kube_tools import KubeTools
from tests.support.kubectl import Kubectl
from tests.support.registries import kube_settings
from tests.support.waiting import eventually

Fix = dict[str, Any]


@pytest.fixture
def shop(kubectl: Kubectl) -> Kubectl:
    kubectl("create", "namespace", NS)
    return kubectl


def offline(sandbox: Sandbox) -> KubeTools:
    return KubeTools(KubeSettings(kubeconfig=sandbox.kubeconfig))


def pulls_fail(sandbox: Sandbox, image: str) -> None:
    """Wait until diagnose says web's pods cannot pull `image`."""

    def found() -> bool:
        findings = offline(sandbox).ok("diagnose", namespace=NS, kind="deployment", name="web")
        return any(
            f["code"] == "ImagePullBackOff" and repr(image) in f["summary"]
            for f in findings["findings"]
        )

    eventually(found, what=f"diagnose finds web cannot pull {image}")


def image_fixes(tools: KubeTools) -> tuple[list[Fix], list[str]]:
    """The ImagePullBackOff fixes for web, and the answer's `partial` notes."""
    answer = tools.ok("recommend", namespace=NS, kind="deployment", name="web")
    return [f for f in answer["fixes"] if f["finding"] == "ImagePullBackOff"], answer["partial"]


def images_set(fixes: list[Fix], container: str = "main") -> list[str]:
    """The image each patch fix sets on `container`, in rank order."""
    found = []
    for fix in fixes:
        spec = fix["patch"].get("spec", {}).get("template", {}).get("spec", {})
        found += [c["image"] for c in spec.get("containers", []) if c["name"] == container]
    return found


def rollbacks(fixes: list[Fix]) -> list[int]:
    return [
        s["arguments"]["to_revision"]
        for f in fixes
        for s in f["steps"]
        if s["tool"] == "rollout_undo"
    ]


def test_the_typo_found_in_the_rollout_history_is_never_offered(
    shop: Kubectl, sandbox: Sandbox
) -> None:
    web = json.loads(deployment("web", {"image": "ngnix:1.27"}, replicas=2))
    web["spec"]["strategy"] = {"type": "Recreate"}  # revision 1's pods go: its events stay
    shop("apply", "-f", "-", input=json.dumps(web))
    pulls_fail(sandbox, "ngnix:1.27")
    shop("set", "image", "deployment/web", "main=nginx:1.277", "-n", NS)  # another typo
    pulls_fail(sandbox, "nginx:1.277")

    cluster_only, _ = image_fixes(offline(sandbox))
    assert "ngnix:1.27" not in images_set(cluster_only)  # revision 1 failed to pull it
    assert rollbacks(cluster_only) == []  # nor is revision 1 a place to go back to

    fixes, partial = image_fixes(KubeTools(kube_settings(sandbox)))
    assert images_set(fixes)[0] == "nginx:1.27" and "ngnix:1.27" not in images_set(fixes)
    held = sandbox.call(lambda c: len(c.world.images.tags("nginx")))
    listed, typo = fixes[0]["evidence"][:2]
    assert listed.startswith("the registry lists tags 1.27, 1.27-alpine, ")
    assert listed.endswith(f" for docker.io/library/nginx ({held} tags)")
    assert typo == "'1.277' is one character longer than '1.27'"
    assert (
        fixes[0]["expected_effect"] == "pods pull nginx:1.27, which the registry lists, and start"
    )
    assert partial == []


WEB_AND_SIDECAR = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": NS},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {"name": "main", "image": "docker.io/library/nginx:1.277"},
                    {"name": "sidecar", "image": "docker.io/library/nginx:1.27"},
                ]
            },
        },
    },
}


def test_another_containers_image_is_never_offered_another_workloads_may_be(
    shop: Kubectl, sandbox: Sandbox
) -> None:
    shop("apply", "-f", "-", input=json.dumps(WEB_AND_SIDECAR))
    pulls_fail(sandbox, "docker.io/library/nginx:1.277")

    def sidecar_pulled() -> bool:
        pods = shop.json("get", "pods", "-n", NS, "-l", "app=web")["items"]
        return any(
            s["name"] == "sidecar" and s.get("imageID")
            for p in pods
            for s in p["status"].get("containerStatuses", [])
        )

    eventually(sidecar_pulled, what="web's sidecar pulled nginx:1.27")
    alone, _ = image_fixes(offline(sandbox))
    assert images_set(alone) == []  # the sidecar's image is not main's to take

    shop("apply", "-f", "-", input=deployment("other", {"image": "nginx:1.27"}))
    shop(
        "apply", "-f", "-", input=deployment("proxy", {"image": "nginxinc/nginx-unprivileged:1.27"})
    )
    rollout(shop, "other")
    rollout(shop, "proxy")
    fixes, _ = image_fixes(offline(sandbox))
    assert images_set(fixes) == ["nginx:1.27"]
    assert fixes[0]["evidence"][0].startswith(f"pod {NS}/other-")
    assert not any(f"{NS}/web-" in line for fix in fixes for line in fix["evidence"])


def test_an_image_the_registry_no_longer_holds_is_not_offered_once_it_is_asked(
    shop: Kubectl, sandbox: Sandbox
) -> None:
    shop("apply", "-f", "-", input=deployment("web", {"image": "nginx:1.26"}))
    rollout(shop, "web")
    sandbox.call(lambda c: c.faults.add({"kind": "image-missing", "image": "nginx:1.26"}))
    shop("set", "image", "deployment/web", "main=nginx:1.27-alpinee", "-n", NS)
    pulls_fail(sandbox, "nginx:1.27-alpinee")

    cluster_only, _ = image_fixes(offline(sandbox))  # offline, as before: the ready revision
    assert images_set(cluster_only)[0] == "nginx:1.26" and rollbacks(cluster_only) == [1]
    assert "no registry is configured" in cluster_only[0]["evidence"][-1]

    fixes, _ = image_fixes(KubeTools(kube_settings(sandbox)))
    assert images_set(fixes)[0] == "nginx:1.27-alpine" and rollbacks(fixes) == []
    assert "nginx:1.26" not in images_set(fixes)
    assert "'1.27-alpinee' is one character longer than '1.27-alpine'" in fixes[0]["evidence"]
    assert fixes[0]["risk"] == "low"

    unreachable = KubeSettings(
        kubeconfig=sandbox.kubeconfig, registries={"*": "https://127.0.0.1:9/{host}"}
    )
    asked_nobody, partial = image_fixes(KubeTools(unreachable))
    assert images_set(asked_nobody)[0] == "nginx:1.26"
    assert [note for note in partial if note.startswith("registry docker.io not asked: ")]
    assert "the registry could not be asked" in asked_nobody[0]["evidence"][-1]


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("1.27-alpinee", ["1.27-alpine"]),  # the typo is in the variant: 1.27 stays
        ("1.277", ["1.27", "1.27.3"]),  # no 1.277 exists: the version itself is the typo
        ("lastest", ["latest"]),
    ],
)
def test_a_typo_of_a_real_version_keeps_that_version(written: str, meant: list[str]) -> None:
    tags = ["1.26", "1.27", "1.28", "1.26-alpine", "1.28-alpine", "1.27.3", "latest", "alpine"]
    tags += ["1.27-alpine"] if "alpine" in written else []
    assert [m.tag for m in nearest_tags(written, tags)] == meant
    assert nearest_tags("1.27-alpinee", [t for t in tags if t != "1.27-alpine"]) == []
