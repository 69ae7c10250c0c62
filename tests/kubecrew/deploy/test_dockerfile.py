"""A lint of the Dockerfile, read as text: nothing here builds the image (no container runtime
runs the tests). It holds the properties the cluster relies on: two stages with the runtime
copying the builder's venv, every base pinned by version (never `latest`, never untagged), a
numeric non-root user, `kubecrew` as the entrypoint, the health port the manifests probe, the
programs the sandbox overlay runs by path, kubectl at the bound the project tests with, and a
build context that leaves out the repository's history, environments and secrets.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SANDBOX_OVERLAY = ROOT / "deploy" / "overlays" / "sandbox" / "kustomization.yaml"

Instruction = tuple[str, str]  # (keyword, the rest of the line, continuations joined)


def instructions(text: str) -> list[Instruction]:
    joined = re.sub(r"\\\n", " ", text)
    found: list[Instruction] = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            found.append((keyword.upper(), " ".join(rest.split())))
    return found


DOCKERFILE = instructions((ROOT / "Dockerfile").read_text())


def stages() -> list[list[Instruction]]:
    """The instructions of each stage (what follows each FROM, the FROM included)."""
    found: list[list[Instruction]] = []
    for keyword, rest in DOCKERFILE:
        if keyword == "FROM":
            found.append([])
        if found:
            found[-1].append((keyword, rest))
    return found


def final(keyword: str) -> list[str]:
    return [rest for k, rest in stages()[-1] if k == keyword]


def base_images() -> list[str]:
    """Each FROM's image, with the ARGs declared before the first FROM filled in."""
    args = dict(
        rest.split("=", 1) for k, rest in DOCKERFILE[: _first_from()] if k == "ARG" and "=" in rest
    )
    images = []
    for keyword, rest in DOCKERFILE:
        if keyword == "FROM":
            image = rest.split()[0]
            images.append(re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], image))
    return images


def _first_from() -> int:
    return next(i for i, (keyword, _) in enumerate(DOCKERFILE) if keyword == "FROM")


def test_a_builder_stage_installs_and_the_runtime_stage_copies_its_venv() -> None:
    names = [rest.split()[-1] for keyword, rest in DOCKERFILE if keyword == "FROM"]
    assert len(names) == 2 and names[0] == "builder", names
    assert any("pip install" in rest for rest in (r for k, r in stages()[0] if k == "RUN"))
    assert "--from=builder /opt/venv /opt/venv" in final("COPY")
    assert not any("pip install" in rest for rest in final("RUN"))  # no build tools at run time


@pytest.mark.parametrize("image", base_images())
def test_every_base_image_is_pinned_by_version(image: str) -> None:
    name, _, tag = image.rpartition(":")
    assert name and "/" not in tag, f"{image} names no tag: pin a version"
    assert tag != "latest" and re.search(r"\d+\.\d+\.\d+", tag), f"{image}: pin a full version"


def test_the_image_runs_as_a_numeric_non_root_user() -> None:
    [user] = final("USER")
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and int(uid) > 0, f"USER {user}: a kubelet verifies runAsNonRoot by uid"
    assert not gid or (gid.isdigit() and int(gid) > 0)
    assert stages()[-1][-2:] == [("ENTRYPOINT", '["kubecrew"]'), ("CMD", '["--help"]')]
    assert [k for k, _ in stages()[-1]].index("USER") > max(
        i for i, (k, _) in enumerate(stages()[-1]) if k in ("RUN", "COPY")
    ), "USER must come after every step that writes as root"


def test_the_state_and_health_port_are_where_the_manifests_expect_them() -> None:
    env = dict(
        part.split("=", 1) for rest in final("ENV") for part in shlex.split(rest) if "=" in part
    )
    assert env["KUBECREW_HOME"] == "/var/lib/kubecrew"  # the emptyDir deploy/base mounts
    assert env["KUBECREW_HEALTH_PORT"] == "8081"  # the port every probe names
    assert env["KUBECREW_HEALTH_HOST"] == "0.0.0.0"  # the kubelet probes the pod's IP
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"  # a read-only root takes no bytecode


def test_the_programs_the_sandbox_overlay_runs_by_path_are_in_the_image() -> None:
    run_by_path = set(re.findall(r"/usr/local/bin/[\w-]+", SANDBOX_OVERLAY.read_text()))
    linked = set(re.findall(r"ln -s \S+ (/usr/local/bin/[\w-]+)", " ".join(final("RUN"))))
    assert run_by_path == {"/usr/local/bin/kubecrew", "/usr/local/bin/git"}
    assert run_by_path <= linked


def test_kubectl_in_the_image_is_held_to_the_bound_the_project_tests_with() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    [tested] = [d for d in project["optional-dependencies"]["dev"] if d.startswith("kubectl")]
    assert f'"{tested}"' in " ".join(rest for k, rest in stages()[0] if k == "RUN")


def test_the_build_context_leaves_out_history_environments_and_secrets() -> None:
    ignored = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".git", ".venv", "tests", "deploy/overlays/*/secrets.env", "*.token"} <= ignored
    assert not ignored & {"agents", "skills", "policies", "deploy", "README.md"}  # all read
