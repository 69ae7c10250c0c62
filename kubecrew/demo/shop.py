"""The shop the demo plays in and the tests build on: its manifests and who owns what.

`WEB` and `NAMESPACE` are the files of the shop's GitOps repository; `deployment(...)` writes a
small nginx Deployment with the requests a scene or a test gives it (flow-style YAML, as
a person writes a short manifest); `manifests(...)` joins documents into one file.
"""

from __future__ import annotations

WEB = """\
# The web front end. Owned by team shop.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels:
    app: web  # selected by the Service
spec:
  replicas: 1  # raised for the sale
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: web
          image: nginx:1.27  # pinned
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  selector:
    app: web
  ports:
    - port: 80
"""
NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n"
# Who owns what and what matters most: the shop is the Dev Team's, nodes the Cluster Operator's.
OWNERSHIP = """\
apiVersion: kubecrew.io/v1alpha1
kind: Ownership
metadata: {name: cluster}
spec:
  team: cluster-ops
  agent: cluster-operator
  humans: {groups: [sre]}
  owns: [{kinds: [Node]}]
---
apiVersion: kubecrew.io/v1alpha1
kind: Ownership
metadata: {name: shop}
spec:
  team: shop
  agent: dev-team
  humans: {groups: [shop-admins]}
  owns: [{namespaces: [shop]}]
---
apiVersion: kubecrew.io/v1alpha1
kind: PriorityPolicy
metadata: {name: org-priorities}
spec:
  order: [security, reliability, cost]
  tieBreaks: [owner, most-conservative]
"""


def namespace(name: str = "shop") -> str:
    return f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n"


def deployment(
    name: str,
    *,
    replicas: int,
    cpu: str,
    memory: str = "32Mi",
    memory_limit: str = "",
    namespace: str = "shop",
    image: str = "nginx:1.27",
) -> str:
    """A Deployment of `replicas` pods labelled `app: <name>`, one container asking `cpu` and
    `memory` (and limited to `memory_limit` when given)."""
    limits = f", limits: {{memory: {memory_limit}}}" if memory_limit else ""
    return (
        "apiVersion: apps/v1\nkind: Deployment\n"
        f"metadata: {{name: {name}, namespace: {namespace}}}\n"
        f"spec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: {name}}}}}\n"
        f"  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      containers:\n"
        f"      - name: {name}\n        image: {image}\n"
        f"        resources: {{requests: {{cpu: {cpu}, memory: {memory}}}{limits}}}\n"
    )


def manifests(*documents: str) -> str:
    """Documents as one multi-document YAML file."""
    return "---\n".join(documents)
