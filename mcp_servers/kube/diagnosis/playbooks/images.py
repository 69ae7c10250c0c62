"""Images that cannot be pulled: set the image the workload meant, or roll back to the revision
that ran.

The candidates for the failing container, and for it alone (another container's image is never
offered in its place):
- its image in the workload's earlier revisions (best: a revision with ready pods now);
- images other workloads' pods pulled, of the failing image's repository or of one a typo away;
- when the kube server was given registries (`KubeSettings.registries`), what the registry
  holds: for a repository it does not hold, the nearest one it does (a name a typo away, among
  its catalog, Docker Hub's well-known images and the repositories the cluster runs) with the
  tag as written or its nearest tag; for a tag it does not hold, the repository's nearest tags
  (`nearest.nearest_tags`). So an image typo in a workload's first revision, with nothing to go
  back to, still has a fix.

A candidate is never an image known to fail: one whose pull failed in this cluster (pods waiting
on a pull error, `Failed to pull image` events: the typo itself, found in the rollout history,
included) or one the registry, when asked, does not hold. Images are compared as a runtime
compares them (`nginx:1.27` is `docker.io/library/nginx:1.27`). Each fix states its evidence:
the revision or pod that ran the image, what the registry lists, how near the name is to the
one written. With no registry, candidates are what the cluster ran, as offline clusters need.

A tag deleted from the registry (image-missing) fails in every revision that uses it, so the
rollback skips every revision running an image known to fail. A StatefulSet never replaces a
pod that is not Running and Ready on its own, even once its template is right again
(Kubernetes' "forced rollback"): its fix also deletes the stuck pods, which never started, so
the controller recreates them from the fixed template.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from core.errors import InvalidArgument
from mcp_servers.kube.diagnosis import history
from mcp_servers.kube.diagnosis.evidence import spec_container
from mcp_servers.kube.diagnosis.findings import Finding, Fix, Risk, Step, patch_step
from mcp_servers.kube.diagnosis.playbooks import nearest
from mcp_servers.kube.diagnosis.playbooks.rollbacks import rollback
from mcp_servers.kube.diagnosis.playbooks.templates import container_patch, pod_risk
from mcp_servers.kube.diagnosis.snapshot import Snapshot, name_of, namespace_of, workload_of
from mcp_servers.kube.registries import DOCKER_HUB, ImageName, TagList, parse

PULL_FAILURES = ("ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull")
_FAILED_PULL = re.compile(r'(?:[Ff]ailed to pull|[Bb]ack-off pulling) image "([^"]+)"')
MAX_REGISTRY_FIXES = 2  # leaves room, among a finding's fixes, for what the cluster ran


@dataclass
class Candidate:
    image: str  # as the patch writes it
    confidence: float
    evidence: list[str]
    risk: Risk
    pulled: bool  # this cluster ran it (else the registry vouches for it)
    listed: bool = False  # the registry lists it
    served: bool = False  # a revision with ready pods now runs it

    def vouched(self) -> str:
        """Why the pull should work, for the expected effect."""
        if self.pulled and self.listed:
            return "which this cluster has pulled before and the registry lists"
        return "which the registry lists" if self.listed else "which this cluster has pulled before"


def image_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    broken = str(finding.details.get("image") or "")
    failing = known_failing(snapshot, broken)
    candidates, asked = _candidates(finding, snapshot, broken, failing)
    stuck = tuple(
        Step("delete", {"kind": "Pod", "name": pod.name, "namespace": pod.namespace})
        for pod in finding.related
        if finding.ref.kind == "StatefulSet" and pod.kind == "Pod"
    )
    for candidate in candidates:
        yield _set_image(finding, broken, candidate, stuck, _where_from(snapshot, asked))
    named = {image for r in history.revisions(snapshot, finding.ref) for image in r.images()}
    bad = {i for i in named if _key(i) in failing or _registry_holds(snapshot, i) is False}
    yield from rollback(
        finding,
        snapshot,
        confidence=0.6,  # below the image of a ready revision: same effect, narrower change
        why=(f"{broken!r} cannot be pulled (the registry has no such image or tag)",),
        bad_images=(broken, *bad),
    )


def _candidates(
    finding: Finding, snapshot: Snapshot, broken: str, failing: set[str]
) -> tuple[list[Candidate], bool]:
    """The candidates, surest first, and whether the registry was asked."""
    found: dict[str, Candidate] = {}
    for candidate in (*_from_history(finding, snapshot, broken), *_from_pods(finding, snapshot)):
        key = _key(candidate.image)
        if key not in failing and key not in found and _kept(candidate, broken, snapshot):
            found[key] = candidate
    written = _parsed(broken)
    asked = written is not None and snapshot.registry_tags(written) is not None
    if written is not None and asked:
        # An image a revision ran with ready pods is known good here: a registry's guess at
        # what was meant ranks below it (a typo in a later revision goes back to what ran).
        served = max((c.confidence for c in found.values() if c.served), default=None)
        for candidate in _from_registry(snapshot, written)[:MAX_REGISTRY_FIXES]:
            key = _key(candidate.image)
            if key in failing:
                continue
            if served is not None and key not in found:
                candidate.confidence = min(candidate.confidence, served - 0.05)
            found[key] = _merged(found.get(key), candidate)
    return sorted(found.values(), key=lambda c: -c.confidence), asked


def _set_image(
    finding: Finding,
    broken: str,
    candidate: Candidate,
    stuck: tuple[Step, ...],
    where: tuple[str, ...],
) -> Fix:
    container = str(finding.details.get("container") or "")
    patch = container_patch(finding.ref.kind, container, {"image": candidate.image})
    recreated = "; the stuck pods are deleted and recreated from the fixed template"
    return Fix(
        finding.code,
        finding.ref,
        f"set image of container {container} to {candidate.image}",
        "strategic",
        patch,
        f"pods pull {candidate.image}, {candidate.vouched()}, and start"
        + (recreated if stuck else ""),
        candidate.risk,
        pod_risk(finding.ref)
        + ("; the deleted pods never started, and their volume claims stay" if stuck else ""),
        round(min(0.95, candidate.confidence), 2),
        (*candidate.evidence, f"{broken!r} cannot be pulled", *where),
        (patch_step(finding.ref, "strategic", patch), *stuck),
    )


# -- what is known to fail -----------------------------------------------------------------------


def known_failing(snapshot: Snapshot, broken: str) -> set[str]:
    """Images (as `_key`s) whose pull failed in this cluster: `broken`, what pods wait on with a
    pull error, and what `Failed to pull image` / `Back-off pulling image` events name."""
    failing = {_key(broken)}
    for pod in snapshot.of("pods"):
        status = pod.get("status") or {}
        for cstatus in [
            *(status.get("initContainerStatuses") or []),
            *(status.get("containerStatuses") or []),
        ]:
            waiting = (cstatus.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") in PULL_FAILURES:
                spec = spec_container(pod, str(cstatus.get("name")))
                failing.add(_key(str(spec.get("image") or cstatus.get("image") or "")))
    for event in snapshot.of("events"):
        for image in _FAILED_PULL.findall(str(event.get("message") or "")):
            failing.add(_key(image))
    return failing


# -- what the cluster ran ------------------------------------------------------------------------


def _from_history(finding: Finding, snapshot: Snapshot, broken: str) -> Iterator[Candidate]:
    """The failing container's image in the workload's earlier revisions."""
    container = str(finding.details.get("container") or "")
    for revision in history.revisions(snapshot, finding.ref):
        image = next(
            (str(c.get("image") or "") for c in revision.containers if c.get("name") == container),
            "",
        )
        if not image or image == broken:
            continue
        good = "ran ready pods" if revision.ready else "is an earlier revision"
        similarity = _similarity(broken, image)
        yield Candidate(
            image,
            similarity * 0.7 + (0.25 if revision.ready else 0.1),
            [
                f"{revision.source} (revision {revision.number}) {good} with image {image}",
                f"similarity of {broken!r} to {image!r}: {similarity:.2f}",
            ],
            "low" if similarity > 0.8 else "medium",
            pulled=True,
            served=bool(revision.ready),
        )


def _from_pods(finding: Finding, snapshot: Snapshot) -> Iterator[Candidate]:
    """Images pods pulled: the failing container's own in the workload's pods, and in other
    workloads' pods any container of the failing image's repository or one a typo away."""
    container = str(finding.details.get("container") or "")
    broken = str(finding.details.get("image") or "")
    written = _parsed(broken)
    mine = (finding.ref.kind, finding.ref.name)
    for pod in snapshot.of("pods"):
        ours = namespace_of(pod) == finding.ref.namespace and workload_of(snapshot, pod) == mine
        for cstatus in (pod.get("status") or {}).get("containerStatuses") or []:
            name = str(cstatus.get("name") or "")
            if not cstatus.get("imageID") or (ours and name != container):
                continue
            image = str(spec_container(pod, name).get("image") or cstatus.get("image") or "")
            if not image or (not ours and not _same_or_near(written, _parsed(image))):
                continue
            similarity = _similarity(broken, image)
            yield Candidate(
                image,
                similarity * 0.7,
                [
                    f"pod {namespace_of(pod)}/{name_of(pod)} runs {image}",
                    f"similarity of {broken!r} to {image!r}: {similarity:.2f}",
                ],
                "low" if similarity > 0.8 else "medium",
                pulled=True,
            )


def _kept(candidate: Candidate, broken: str, snapshot: Snapshot) -> bool:
    """A candidate the cluster ran, near enough to what was written (or from a revision that
    serves now), and not one the registry says it lacks."""
    near = max(
        _similarity(broken, candidate.image), _similarity(_key(broken), _key(candidate.image))
    )
    if near < 0.6 and not candidate.served:
        return False
    said = _registry_holds(snapshot, candidate.image)
    if said is False:
        return False  # the registry no longer holds it: a new pull of it fails too
    if said is True:
        candidate.listed = True
        name = parse(candidate.image)
        candidate.evidence.append(f"the registry lists tag {name.tag} for {name.repository}")
    return True


def _registry_holds(snapshot: Snapshot, image: str) -> bool | None:
    """Whether the registry holds `image` (its tag in the tag list, its digest's manifest);
    None when it cannot tell (not asked, or a tag list cut short)."""
    name = _parsed(image)
    if name is not None and name.digest:
        return snapshot.registry_has(name)
    listed = snapshot.registry_tags(name) if name is not None else None
    if name is None or listed is None:
        return None
    if not listed.found:
        return False
    if name.tag in listed.tags:
        return True
    return False if listed.complete else None


def _cluster_images(snapshot: Snapshot) -> set[ImageName]:
    """Every image the snapshot's workloads and pods name, parsed."""
    images: set[ImageName] = set()
    for pod in snapshot.of("pods"):
        for c in (pod.get("spec") or {}).get("containers") or []:
            if (name := _parsed(str(c.get("image") or ""))) is not None:
                images.add(name)
    for plural in ("replicasets", "controllerrevisions"):
        for obj in snapshot.of(plural):
            template = (obj.get("spec") or {}).get("template") or (
                ((obj.get("data") or {}).get("spec") or {}).get("template") or {}
            )
            for c in (template.get("spec") or {}).get("containers") or []:
                if (name := _parsed(str(c.get("image") or ""))) is not None:
                    images.add(name)
    return images


# -- what the registry holds ---------------------------------------------------------------------


def _from_registry(snapshot: Snapshot, written: ImageName) -> list[Candidate]:
    """What the registry holds nearest to `written`: its repository's nearest tags, or, for a
    repository it lacks, the nearest one it has (the tag as written, else its nearest)."""
    listed = snapshot.registry_tags(written)
    if listed is None or written.digest:
        return []
    if listed.found:
        if written.tag in listed.tags or not listed.complete:
            return []  # the tag exists (the pull failed for another reason), or is unread
        return [
            Candidate(
                str(written.with_tag(match.tag)),
                match.confidence,
                [_lists(listed, match.tag), match.why],
                "low" if nearest.distance(written.tag, match.tag) <= 1 else "medium",
                pulled=False,
                listed=True,
            )
            for match in nearest.nearest_tags(written.tag, listed.tags)
        ]
    found: list[Candidate] = []
    for edits, path in nearest.nearest_names(written.path, _repositories(snapshot, written)):
        meant = written.with_path(path)
        other = snapshot.registry_tags(meant)
        if other is None or not other.found:
            continue
        spelt = nearest.edit_words(written.name, meant.name)
        absent = f"the registry has no repository {written.repository}"
        if written.tag in other.tags:
            found.append(
                Candidate(
                    str(meant),
                    0.9 - 0.1 * (edits - 1),
                    [_lists(other, written.tag), spelt, absent],
                    "low" if edits <= 1 else "medium",
                    pulled=False,
                    listed=True,
                )
            )
            continue
        for match in nearest.nearest_tags(written.tag, other.tags):
            found.append(
                Candidate(
                    str(meant.with_tag(match.tag)),
                    match.confidence - 0.1 * edits,
                    [_lists(other, match.tag), spelt, match.why, absent],
                    "medium",
                    pulled=False,
                    listed=True,
                )
            )
    return sorted(found, key=lambda c: -c.confidence)


def _repositories(snapshot: Snapshot, written: ImageName) -> set[str]:
    """Where a misspelt repository's right name may be: the registry's catalog, Docker Hub's
    well-known images, and the repositories of that registry the cluster runs."""
    names = {image.path for image in _cluster_images(snapshot) if image.host == written.host}
    if written.host == DOCKER_HUB:
        names.update(f"library/{name}" for name in nearest.WELL_KNOWN)
    names.update(snapshot.registry_repositories(written.host) or ())
    names.discard(written.path)
    return names


def _lists(listed: TagList, tag: str) -> str:
    """`the registry lists tags 1.27, 1.27.3 for docker.io/library/nginx (14 tags)`: the tags of
    `tag`'s family (its major.minor), or `tag` alone."""
    version = nearest.version(tag)
    family = ".".join(str(n) for n in version.numbers[:2]) if version else tag
    shown = [t for t in listed.tags if t == family or t.startswith((f"{family}.", f"{family}-"))]
    shown = shown if tag in shown else [tag]
    return (
        f"the registry lists tag{'s' if len(shown) > 1 else ''} {', '.join(shown[:8])} for "
        f"{listed.repository} ({len(listed.tags)} tags)"
    )


def _merged(cluster: Candidate | None, registry: Candidate) -> Candidate:
    """One candidate both ways: the cluster's evidence, the registry's too, the higher score."""
    if cluster is None:
        return registry
    evidence = [*cluster.evidence, *(e for e in registry.evidence if e not in cluster.evidence)]
    confidence = max(cluster.confidence, registry.confidence)
    return Candidate(cluster.image, confidence, evidence, cluster.risk, True, listed=True)


def _where_from(snapshot: Snapshot, asked: bool) -> tuple[str, ...]:
    if asked:
        return ()
    if snapshot.registry is None or not snapshot.registry.configured:
        return ("no registry is configured: the candidates are images this cluster ran",)
    return (
        "the registry could not be asked (see partial): the candidates are images this cluster ran",
    )


# -- references ----------------------------------------------------------------------------------


def _parsed(image: str) -> ImageName | None:
    try:
        return parse(image) if image else None
    except InvalidArgument:
        return None


def _key(image: str) -> str:
    name = _parsed(image)
    return name.key if name is not None else image.strip()


def _same_or_near(written: ImageName | None, other: ImageName | None) -> bool:
    if written is None or other is None or written.host != other.host:
        return False
    return written.path == other.path or nearest.is_typo(written.path, other.path)


def _similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()
