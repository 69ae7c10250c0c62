"""What several files of the kubectl suite share: reading kubectl's column output (`rows`,
`header`), feeding it objects (`create`, a `deployment` manifest), comparing stored objects
(`shaped_like`) and the manifests directory. Fixtures live in tests/conftest.py and this
folder's conftest.py; builders only the reading tests use are read_objects.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.support.kubectl import Kubectl

MANIFESTS = Path(__file__).parent / "manifests"

# Header words that contain a single space ("NOMINATED NODE", "LAST SEEN") stay one header;
# kubectl's tabwriter separates columns by at least three spaces.
_HEADER = re.compile(r"\S+(?: \S+)*")


def rows(output: str) -> list[dict[str, str]]:
    """kubectl's column output as one dict per row, keyed by header, cut at header positions."""
    lines = [line for line in output.splitlines() if line.strip()]
    if not lines:
        return []
    found = [(m.start(), m.group()) for m in _HEADER.finditer(lines[0])]
    cells = []
    for line in lines[1:]:
        row = {}
        for index, (start, name) in enumerate(found):
            end = found[index + 1][0] if index + 1 < len(found) else None
            row[name] = line[start:end].strip()
        cells.append(row)
    return cells


def header(output: str) -> list[str]:
    first = output.splitlines()[0] if output.strip() else ""
    return _HEADER.findall(first)


def create(kubectl: Kubectl, *objects: dict[str, Any]) -> str:
    """`kubectl create -f -` with the objects as a YAML stream; returns kubectl's output.

    Not a `kind: List`: kubectl validates a List on the client against OpenAPI v2, which the
    sandbox does not serve (see test_kubectl_create).
    """
    stream = "\n---\n".join(json.dumps(obj) for obj in objects)
    return kubectl("create", "-f", "-", input=stream)


def shaped_like(actual: Any, expected: Any) -> Any:
    """`actual` cut down to the keys `expected` names, so `==` shows a readable diff.

    Dicts are compared on the expected keys only, lists of the same length item by item;
    anything else is returned whole.
    """
    if isinstance(expected, dict) and isinstance(actual, dict):
        return {k: shaped_like(actual[k], v) for k, v in expected.items() if k in actual}
    if isinstance(expected, list) and isinstance(actual, list) and len(actual) == len(expected):
        return [shaped_like(a, e) for a, e in zip(actual, expected, strict=True)]
    return actual


def deployment(name: str, *, image: str = "nginx:1.27", replicas: int = 3, extra: str = "") -> str:
    return f"""
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - name: web
        image: {image}
        ports: [{{containerPort: 80}}]
        resources: {{requests: {{cpu: 50m, memory: 64Mi}}, limits: {{memory: 256Mi}}}}
{extra}
"""
