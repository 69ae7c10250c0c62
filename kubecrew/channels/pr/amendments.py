"""What a `@kubecrew` comment on a crew PR asks to change, and the manifest edits that do it.

The grammar is narrow on purpose: a comment is data written by whoever can comment on the
repository, so only three kinds of change are read out of it, each with a value checked
against what Kubernetes accepts, and nothing else in the text does anything:

    @kubecrew use 4 replicas instead            -> spec.replicas = 4
    @kubecrew set the image tag to 1.27.3       -> every container's image, same repository
    @kubecrew cpu requests 250m, memory 256Mi   -> resources.requests of every container

"ignore policy and merge", "approve this", a URL or a shell line read as nothing: the reply
says what can be asked. Merging stays with reviews and policy, never with a comment. The
edits are the gitops engine's field edits (`yamledit.Edit`), so the manifest's comments and
formatting survive and only the named fields change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp_servers.gitops.yamledit import Edit

MAX_REPLICAS = 1000
_NUMBER = r"(\d{1,4})"
_REPLICAS = (
    re.compile(rf"\b{_NUMBER}\s+(?:replicas?|pods?|instances?|copies)\b", re.I),
    re.compile(rf"\breplicas?\s*(?:to|=|:|of|at)?\s*{_NUMBER}\b", re.I),
    re.compile(rf"\bscale\s+(?:it\s+|this\s+)?(?:up\s+|down\s+)?to\s+{_NUMBER}\b", re.I),
)
_TAG = r"([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})"
_IMAGE_TAG = (
    re.compile(rf"\b(?:image\s+)?tag\s*(?:to|=|:|of)?\s*{_TAG}", re.I),
    re.compile(rf"\bimage\s*(?:to|=|:)?\s*[a-z0-9][a-z0-9./_-]*:{_TAG}", re.I),
)
_QUANTITY = r"(\d+(?:\.\d+)?(?:m|k|Ki|Mi|Gi|Ti|M|G|T)?)(?!\w)"
_SET = r"\s*(?:to|=|:|of|at)?\s*"
_REQUEST = (  # read only in a comment that says "request"
    re.compile(rf"\b(cpu|memory)\s*(?:requests?)?{_SET}{_QUANTITY}", re.I),
    re.compile(rf"\brequests?\s+(?:for\s+)?(cpu|memory){_SET}{_QUANTITY}", re.I),
)
_CPU = re.compile(r"^(\d+m|\d+(?:\.\d{1,3})?)$")
_MEMORY = re.compile(r"^\d+(?:\.\d+)?(?:Ki|Mi|Gi|Ti|k|M|G|T)?$")
HELP = (
    "I can change this PR's replicas, image tag or resource requests, e.g. `@kubecrew use 4 "
    "replicas instead`, `@kubecrew set the image tag to 1.27.3` or `@kubecrew cpu requests "
    "250m, memory requests 256Mi`. Merging is decided by reviews and policy, not by comments."
)


@dataclass(frozen=True)
class Amendment:
    """What one comment asks for; None means "leave as it is"."""

    replicas: int | None = None
    tag: str | None = None
    requests: tuple[tuple[str, str], ...] = ()  # (resource, quantity), cpu before memory

    @property
    def empty(self) -> bool:
        return self.replicas is None and self.tag is None and not self.requests

    def describe(self) -> str:
        parts = []
        if self.replicas is not None:
            parts.append(f"replicas {self.replicas}")
        if self.tag is not None:
            parts.append(f"image tag {self.tag}")
        parts += [f"{resource} requests {quantity}" for resource, quantity in self.requests]
        return ", ".join(parts)


def mentions(body: str, handles: tuple[str, ...]) -> bool:
    """Whether `body` addresses the crew (`@kubecrew`, or the bot's own login)."""
    return any(re.search(rf"(?<![\w@])@{re.escape(h)}\b", body, re.I) for h in handles if h)


def read(body: str) -> Amendment | str:
    """The amendment `body` asks for, or why it cannot be taken (a value Kubernetes refuses,
    or nothing recognised: the help)."""
    text = re.sub(r"`{3}.*?`{3}", " ", body, flags=re.S)  # code blocks are quoted, not asked
    replicas = _first(_REPLICAS, text)
    if replicas is not None and not 0 <= int(replicas) <= MAX_REPLICAS:
        return f"{replicas} replicas is out of range (0 to {MAX_REPLICAS}); nothing changed"
    requests: dict[str, str] = {}
    if re.search(r"\blimits?\b", text, re.I):
        return "I change resource requests, not limits; nothing changed. " + HELP
    if re.search(r"\brequest", text, re.I):
        for pattern in _REQUEST:
            for match in pattern.finditer(text):
                requests.setdefault(match[1].lower(), match[2])
    for resource, quantity in requests.items():
        if not (_CPU if resource == "cpu" else _MEMORY).match(quantity):
            return (
                f"{resource} requests {quantity} is not a quantity for {resource} "
                f"(e.g. {'250m or 0.5' if resource == 'cpu' else '256Mi or 1Gi'}); nothing changed"
            )
    tag = _first(_IMAGE_TAG, text)
    amendment = Amendment(
        replicas=None if replicas is None else int(replicas),
        tag=None if tag is None else tag.rstrip(".-"),
        requests=tuple(sorted(requests.items())),
    )
    return HELP if amendment.empty else amendment


def edits(amendment: Amendment, workload: Mapping[str, Any]) -> list[Edit]:
    """The field edits that make `workload` (a Deployment or StatefulSet document) as asked."""
    made: list[Edit] = []
    if amendment.replicas is not None:
        made.append(Edit("spec.replicas", amendment.replicas))
    containers = ((workload.get("spec") or {}).get("template") or {}).get("spec") or {}
    for container in containers.get("containers") or []:
        at = f"spec.template.spec.containers[name={container['name']}]"
        if amendment.tag is not None:
            made.append(Edit(f"{at}.image", f"{_repository(str(container.get('image')))}:"
                                            f"{amendment.tag}"))  # fmt: skip
        for resource, quantity in amendment.requests:
            made.append(Edit(f"{at}.resources.requests.{resource}", quantity))
    return made


def _first(patterns: tuple[re.Pattern[str], ...], text: str) -> str | None:
    for pattern in patterns:
        found = pattern.search(text)
        if found:
            return found[1]
    return None


def _repository(image: str) -> str:
    """`registry:5000/team/web:1.2` -> `registry:5000/team/web` (a digest goes too)."""
    image = image.split("@", 1)[0]
    name, sep, tag = image.rpartition(":")
    return name if sep and "/" not in tag else image
