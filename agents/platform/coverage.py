"""Which namespaces each org EgressPolicy covers, and how each namespace is delivered to.

The policies come from the policy server (`list_policies`, `get_policy`: the documents the store
judges by, so the Platform renders exactly what the store enforces) and are read back into the
store's own document model, so a namespace class means what the store's selector means. The
namespaces and their labels come from the cluster (`list_resources`, with the context of a
fleet's cluster): a class is a label, and a namespace joins a class the moment someone labels it.

A namespace is git-managed when the gitops sync stamped it with `kubecrew.io/gitops-repo` (the
repository id): its NetworkPolicies then belong in that repository, and a direct write would be
undone by the next sync. Knows no Kubernetes client; reads only through the tools.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar, cast

import yaml
from pydantic import ValidationError

from agents.platform.fleet import DEFAULT, listed
from agents.runtime.errors import AgentError
from agents.runtime.toolbox import Toolbox
from core.policy.documents import PolicyDocument
from core.policy.documents.egress import EgressPolicy

REPO_LABEL = "kubecrew.io/gitops-repo"  # the gitops server's MANAGED_BY_LABEL
SYSTEM = frozenset({"kube-system", "kube-public", "kube-node-lease"})
FIELDS = ["metadata.name", "metadata.labels"]
D = TypeVar("D", bound=PolicyDocument)


@dataclass(frozen=True)
class Namespace:
    name: str
    labels: dict[str, str]

    @property
    def repo(self) -> str:
        """The repository that manages it, "" when none does."""
        return self.labels.get(REPO_LABEL, "")


@dataclass(frozen=True)
class Covered:
    policy: EgressPolicy
    namespace: Namespace


async def egress_policies(toolbox: Toolbox) -> list[EgressPolicy]:
    return await documents(toolbox, EgressPolicy)


async def documents(toolbox: Toolbox, model: type[D]) -> list[D]:
    """Every policy document of `model`'s kind the policy server judges by, by name."""
    kind = str(model.model_fields["kind"].default)
    stored = await toolbox.call("list_policies", kind=kind, limit=200)
    found: list[D] = []
    for row in stored.get("policies", []):
        got = await toolbox.call("get_policy", name=row["name"], kind=kind)
        try:
            found.append(cast(D, model.model_validate(yaml.safe_load(got["yaml"]))))
        except (yaml.YAMLError, ValidationError) as exc:
            raise AgentError(
                f"the policy server's {kind} {row['name']} does not read back as one "
                f"({exc}); check {row.get('source') or 'its file'} with `kubecrew policy check`"
            ) from exc
    return sorted(found, key=lambda p: p.metadata.name)


async def namespaces(toolbox: Toolbox, cluster: str = DEFAULT) -> list[Namespace]:
    """The team namespaces of one cluster (the default one unless named), with their labels."""
    found = await listed(toolbox, "Namespace", FIELDS, cluster=cluster)
    return sorted(
        (
            Namespace(str(i["metadata.name"]), dict(i.get("metadata.labels") or {}))
            for i in found
            if str(i["metadata.name"]) not in SYSTEM
        ),
        key=lambda n: n.name,
    )


def covered(policies: list[EgressPolicy], found: list[Namespace]) -> list[Covered]:
    """Every (policy, namespace) pair the policy selects, by name or by class."""
    return [
        Covered(policy, namespace)
        for policy in policies
        for namespace in found
        if policy.spec.selects(namespace.name, namespace.labels)
    ]
