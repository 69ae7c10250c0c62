"""What the crew learns belongs to a cluster (`core.home`): a cluster is known by its API server
and its CA, as the kubeconfig names them, so a new sandbox at the same address (a fresh CA) gets
a state folder of its own, a kubeconfig context picks its cluster's folder, and every default
path of the crew's memory (incidents, the agents' checkpoints and memory, the policy store)
lies in the folder `$KUBECREW_STATE` names."""

from __future__ import annotations

from pathlib import Path

import yaml

from agents.runtime.notify.incidents import default_path as incident_book
from agents.runtime.persistence import agent_home
from core.home import Cluster, cluster_state, current_cluster, default_kubeconfigs, state_home
from core.policy.store.sqlite import default_path as policy_store


def kubeconfig(path: Path, clusters: dict[str, tuple[str, str]], current: str) -> Path:
    """A kubeconfig with one context per cluster, named alike; values are (server, CA data)."""
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": current,
        "contexts": [{"name": n, "context": {"cluster": n, "user": "u"}} for n in clusters],
        "clusters": [
            {"name": n, "cluster": {"server": s, "certificate-authority-data": ca}}
            for n, (s, ca) in clusters.items()
        ],
        "users": [{"name": "u", "user": {"token": "t"}}],
    }
    path.write_text(yaml.safe_dump(document))
    return path


def test_a_new_ca_at_the_same_address_is_another_cluster(tmp_path: Path) -> None:
    first = current_cluster(
        [kubeconfig(tmp_path / "a", {"s": ("https://127.0.0.1:6443", "Q0Ex")}, "s")]
    )
    again = current_cluster(
        [kubeconfig(tmp_path / "b", {"s": ("https://127.0.0.1:6443/", "Q0Ex")}, "s")]
    )
    fresh = current_cluster(
        [kubeconfig(tmp_path / "c", {"s": ("https://127.0.0.1:6443", "Q0Ey")}, "s")]
    )

    assert first == again == Cluster("https://127.0.0.1:6443", "Q0Ex")  # a trailing / is the same
    assert first is not None and fresh is not None
    assert first.folder.startswith("127.0.0.1-6443-") and fresh.folder.startswith("127.0.0.1-6443-")
    assert first.folder != fresh.folder


def test_the_context_picks_the_cluster_and_the_first_file_to_say_wins(tmp_path: Path) -> None:
    both = {"prod": ("https://prod.example:443", "UA=="), "dev": ("https://dev.example", "RA==")}
    path = kubeconfig(tmp_path / "config", both, "prod")
    later = kubeconfig(tmp_path / "later", {"x": ("https://x.example", "")}, "x")

    assert current_cluster([path]) == Cluster("https://prod.example:443", "UA==")
    assert current_cluster([path], "dev") == Cluster("https://dev.example", "RA==")
    assert current_cluster([path, later]) == Cluster("https://prod.example:443", "UA==")
    assert current_cluster([path], "nowhere") is None
    assert current_cluster([tmp_path / "missing"]) is None
    dev = current_cluster([path], "dev")
    assert dev is not None and dev.folder.startswith("dev.example-")  # no port: none said
    env = {"KUBECONFIG": f"{tmp_path / 'missing'}:{later}:{path}"}
    assert default_kubeconfigs(env) == [later, path]


def test_every_default_of_the_crews_memory_is_in_the_state_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cluster = Cluster("https://127.0.0.1:6443", "Q0Ex")
    state = cluster_state(cluster, {"KUBECREW_HOME": str(home)})
    env = {"KUBECREW_HOME": str(home), "KUBECREW_STATE": str(state)}

    assert state == home / "clusters" / cluster.folder
    assert state_home(env) == state
    assert incident_book(env) == state / "agents" / "incidents.sqlite"
    assert agent_home("dev_team", env) == state / "agents" / "dev_team"
    assert policy_store(env) == state / "policy" / "store.sqlite"
    assert state_home({"KUBECREW_HOME": str(home)}) == home  # no cluster chosen: the home
