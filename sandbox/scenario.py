"""Scenario files: a whole practice situation in one YAML document, loaded and applied at start.

    apiVersion: sandbox.kubecrew.io/v1alpha1
    kind: Scenario
    metadata: {name: shop}
    spec:
      clock: {rate: 10, start: "2026-12-01T09:00:00Z", seed: 7}
      version: v1.37.2          # the control plane's, as /version reports it (and as a
                                # KubeadmControlPlane in the manifests says, if there is one)
      nodes: [{name: gpu-1, cpu: "32", memory: 256Gi, gpus: 8, labels: {...}, taints: [...],
               version: v1.36.4}]   # the kubelet's (default: the sandbox's), which decides
                                    # the node's status.declaredFeatures
      namespaces: [shop]
      images: [{repository: ghcr.io/acme/api, tags: ["1.0"], profile: shop-api}]
      profiles: [{name: slow-api, base: shop-api, latency_ms: 900}]
      manifests: [{...an object...}, {files: [apps.yaml]}]
      faults: [{kind: node-heartbeat, node: gpu-1, at: 120}]

`load(path)` reads and validates everything it can without a cluster (structure, quantities,
fault specs, that manifest files exist and parse) and raises `ScenarioError` naming the file, the
field and what is wrong. `Scenario.apply(cluster)` then creates the nodes, namespaces and objects
through the API's own write path and hands images, profiles and faults to the world; it is
idempotent, so a sandbox restarted on a state file keeps what it has. The clock and the node count
are decided before the cluster exists: `sandbox.server` asks `make_clock`, `make_world`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from sandbox import bootstrap
from sandbox.clock import Clock, parse_time
from sandbox.clusterapi.vocabulary import CONTROL_PLANE_GROUP, CONTROL_PLANE_KIND
from sandbox.errors import ApiError
from sandbox.faults import FaultSpecError, parse_spec
from sandbox.faults.specs import PROFILE_CHANGES
from sandbox.kubelet.features import with_declared
from sandbox.kubelet.profiles import MIB, Profile, ProfileBook
from sandbox.objects import WriteOptions
from sandbox.quantity import parse_quantity
from sandbox.store import Obj
from sandbox.version import is_version, parse_version
from sandbox.world import World

if TYPE_CHECKING:
    from sandbox.cluster import Cluster

API_VERSION = "sandbox.kubecrew.io/v1alpha1"
FIELD_MANAGER = "sandbox-scenario"
_SPEC_FIELDS = (
    "clock",
    "version",
    "nodes",
    "namespaces",
    "images",
    "profiles",
    "manifests",
    "faults",
)
_FIRST_KINDS = ("Namespace", "CustomResourceDefinition")  # created before everything else


class ScenarioError(ValueError):
    """A scenario file is wrong: `file: field: reason`."""

    def __init__(self, path: Path, field: str, reason: str) -> None:
        self.path, self.field, self.reason = path, field, reason
        super().__init__(f"{path}: {field}: {reason}" if field else f"{path}: {reason}")


@dataclass(frozen=True)
class ClockSpec:
    rate: float | None = None
    start: datetime | None = None
    seed: int | None = None


@dataclass(frozen=True)
class NodeSpec:
    name: str
    cpu: str = bootstrap.NODE_CAPACITY["cpu"]
    memory: str = bootstrap.NODE_CAPACITY["memory"]
    pods: int = int(bootstrap.NODE_CAPACITY["pods"])
    gpus: int = 0
    labels: tuple[tuple[str, str], ...] = ()
    taints: tuple[tuple[str, str, str], ...] = ()  # (key, value, effect)
    version: str | None = None  # the kubelet's and kube-proxy's; None: the sandbox's

    def to_object(self, *, now: str) -> Obj:
        obj = bootstrap.node(self.name, clock_now=now)
        info = dict(obj["status"]["nodeInfo"])
        if self.version is not None:
            info |= {"kubeletVersion": self.version, "kubeProxyVersion": self.version}
        capacity = {
            **obj["status"]["capacity"],
            "cpu": self.cpu,
            "memory": self.memory,
            "pods": str(self.pods),
        }
        if self.gpus:
            capacity["nvidia.com/gpu"] = str(self.gpus)
        spec: dict[str, Any] = {}
        if self.taints:
            spec["taints"] = [
                {"key": k, **({"value": v} if v else {}), "effect": e} for k, v, e in self.taints
            ]
        meta = {**obj["metadata"], "labels": {**obj["metadata"]["labels"], **dict(self.labels)}}
        status = {
            **with_declared({**obj["status"], "nodeInfo": info}),
            "capacity": capacity,
            "allocatable": dict(capacity),
        }
        return {**obj, "metadata": meta, "spec": spec, "status": status}


@dataclass(frozen=True)
class ImageSpec:
    repository: str
    tags: tuple[str, ...]
    profile: str
    size: int | None = None


@dataclass(frozen=True)
class Scenario:
    path: Path
    name: str
    clock: ClockSpec = ClockSpec()
    version: str | None = None  # the control plane's; None: the sandbox's own
    nodes: tuple[NodeSpec, ...] | None = None  # None: the sandbox's default nodes
    namespaces: tuple[str, ...] = ()
    images: tuple[ImageSpec, ...] = ()
    profiles: tuple[Profile, ...] = ()
    manifests: tuple[Obj, ...] = ()
    faults: tuple[Mapping[str, Any], ...] = ()

    def make_clock(self, *, rate: float | None = None) -> Clock:
        """The cluster's clock: `rate` (the command line's) wins over the scenario's."""
        chosen = rate if rate is not None else self.clock.rate
        return Clock(self.clock.start, rate=1.0 if chosen is None else chosen)

    def make_world(self, *, seed: int | None = None) -> World:
        chosen = seed if seed is not None else self.clock.seed
        world = World(seed=chosen or 0)
        if self.version is not None:
            world.control_plane_version = self.version
        return world

    def apply(self, cluster: Cluster) -> None:
        """Make `cluster` what the scenario describes (a cluster built with `nodes=0` when the
        scenario lists nodes). Raises ScenarioError when the API refuses an object."""
        objects, registry = cluster.objects, cluster.registry
        now = cluster.clock.timestamp()
        wanted: list[tuple[str, Obj]] = [
            (f"spec.nodes[{i}]", n.to_object(now=now)) for i, n in enumerate(self.nodes or ())
        ]
        wanted += [
            (f"spec.namespaces[{i}]", _object("v1", "Namespace", name))
            for i, name in enumerate(self.namespaces)
        ]
        manifests = [(f"spec.manifests[{i}]", obj) for i, obj in enumerate(self.manifests)]
        manifests.sort(key=lambda item: item[1]["kind"] not in _FIRST_KINDS)
        for field, obj in [*wanted, *manifests]:
            rt = registry.by_kind(obj["apiVersion"], obj["kind"])
            if rt is None:
                raise ScenarioError(
                    self.path, field, f"no kind {obj['kind']} in {obj['apiVersion']} is served"
                )
            namespace = (obj["metadata"].get("namespace") or "default") if rt.namespaced else ""
            if objects.find(rt, namespace, obj["metadata"]["name"]) is not None:
                continue
            try:
                objects.create(
                    rt, obj, namespace=namespace, opts=WriteOptions(field_manager=FIELD_MANAGER)
                )
            except ApiError as exc:
                raise ScenarioError(self.path, field, exc.message) from exc
            cluster.store.commit()
        world = cluster.world
        for image in self.images:
            extra = {"size": image.size} if image.size is not None else {}
            world.images.add(image.repository, image.tags, profile=image.profile, **extra)
        for profile in self.profiles:
            world.profiles.define(profile)
        for raw in self.faults:
            cluster.faults.add(raw)
        cluster.store.commit()


def load(path: Path | str) -> Scenario:
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ScenarioError(path, "", f"cannot read the file: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise ScenarioError(path, "", f"not valid YAML: {exc}") from exc
    return _Reader(path).scenario(doc)


class _Reader:
    """Reads one scenario document, field by field, raising ScenarioError at the first fault."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, field: str, reason: str) -> ScenarioError:
        return ScenarioError(self.path, field, reason)

    def mapping(self, value: Any, field: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(field, f"must be a map, not {_what(value)}")
        return value

    def sequence(self, value: Any, field: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(field, f"must be a list, not {_what(value)}")
        return value

    def scenario(self, doc: Any) -> Scenario:
        doc = self.mapping(doc, "")
        if doc.get("apiVersion") != API_VERSION:
            raise self.fail("apiVersion", f"must be {API_VERSION}, not {doc.get('apiVersion')!r}")
        if doc.get("kind") != "Scenario":
            raise self.fail("kind", f"must be Scenario, not {doc.get('kind')!r}")
        name = self.mapping(doc.get("metadata"), "metadata").get("name")
        if not isinstance(name, str) or not name:
            raise self.fail("metadata.name", "is required")
        spec = self.mapping(doc.get("spec") or {}, "spec")
        for key in spec:
            if key not in _SPEC_FIELDS:
                raise self.fail(f"spec.{key}", f"unknown field; known: {', '.join(_SPEC_FIELDS)}")
        profiles = self.profiles(spec.get("profiles"))
        manifests = self.manifests(spec.get("manifests"))
        return Scenario(
            path=self.path,
            name=name,
            clock=self.clock(spec.get("clock")),
            version=self.agreed_version(self.version(spec.get("version")), manifests),
            nodes=self.nodes(spec.get("nodes")),
            namespaces=self.namespaces(spec.get("namespaces")),
            images=self.images(spec.get("images"), {p.name for p in profiles}),
            profiles=profiles,
            manifests=manifests,
            faults=self.faults(spec.get("faults")),
        )

    def clock(self, raw: Any) -> ClockSpec:
        if raw is None:
            return ClockSpec()
        raw = self.mapping(raw, "spec.clock")
        rate, start, seed = raw.get("rate"), raw.get("start"), raw.get("seed")
        if rate is not None and (isinstance(rate, bool) or not isinstance(rate, int | float)):
            raise self.fail("spec.clock.rate", f"must be a number, not {rate!r}")
        if rate is not None and rate < 0:
            raise self.fail("spec.clock.rate", f"must be 0 or more, not {rate}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise self.fail("spec.clock.seed", f"must be an integer, not {seed!r}")
        moment = None
        if start is not None:
            try:
                moment = start if isinstance(start, datetime) else parse_time(str(start))
            except ValueError:
                raise self.fail(
                    "spec.clock.start", f"must be RFC 3339 like 2026-12-01T09:00:00Z: {start!r}"
                ) from None
            if moment.tzinfo is None:
                raise self.fail("spec.clock.start", "needs a time zone (end it with Z)")
        return ClockSpec(float(rate) if rate is not None else None, moment, seed)

    def version(self, raw: Any) -> str | None:
        if raw is None:
            return None
        try:
            return parse_version(raw)
        except ValueError as exc:
            raise self.fail("spec.version", str(exc)) from None

    def agreed_version(self, version: str | None, manifests: tuple[Obj, ...]) -> str | None:
        """The sandbox's API server is the control plane a KubeadmControlPlane describes, so
        their versions agree: without `spec.version`, the first one's is the scenario's."""
        for obj in manifests:
            group = str(obj["apiVersion"]).rpartition("/")[0]
            if (group, obj["kind"]) != (CONTROL_PLANE_GROUP, CONTROL_PLANE_KIND):
                continue
            wanted = (obj.get("spec") or {}).get("version")
            if isinstance(wanted, str) and wanted and not wanted.startswith("v"):
                wanted = f"v{wanted}"  # as Cluster API's webhook defaults it
            if not is_version(wanted):
                continue  # the API refuses it when the scenario is applied, saying why
            if version is None:
                version = wanted
            elif wanted != version:
                raise self.fail(
                    "spec.version",
                    f"is {version} but KubeadmControlPlane {obj['metadata']['name']} asks for "
                    f"{wanted}: the sandbox's API server is that control plane, so write one "
                    "version in both (and upgrade the KubeadmControlPlane once the sandbox runs)",
                )
        return version

    def nodes(self, raw: Any) -> tuple[NodeSpec, ...] | None:
        if raw is None:
            return None
        if isinstance(raw, int) and not isinstance(raw, bool):
            if raw < 0:
                raise self.fail("spec.nodes", f"a count must be 0 or more, not {raw}")
            return tuple(NodeSpec(f"node-{i}") for i in range(1, raw + 1))
        found = []
        for i, item in enumerate(self.sequence(raw, "spec.nodes")):
            found.append(self.node(self.mapping(item, f"spec.nodes[{i}]"), i, f"spec.nodes[{i}]"))
        names = [n.name for n in found]
        for name in names:
            if names.count(name) > 1:
                raise self.fail("spec.nodes", f"node name {name!r} appears twice")
        return tuple(found)

    def node(self, raw: Mapping[str, Any], index: int, field: str) -> NodeSpec:
        known = ("name", "cpu", "memory", "pods", "gpus", "labels", "taints", "version")
        for key in raw:
            if key not in known:
                raise self.fail(f"{field}.{key}", f"unknown field; known: {', '.join(known)}")
        values: dict[str, Any] = {"name": str(raw.get("name") or f"node-{index + 1}")}
        for key in ("cpu", "memory"):
            if raw.get(key) is not None:
                values[key] = self.quantity(raw[key], f"{field}.{key}")
        for key in ("pods", "gpus"):
            if raw.get(key) is not None:
                value = raw[key]
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise self.fail(f"{field}.{key}", f"must be a whole number, not {value!r}")
                values[key] = value
        if raw.get("version") is not None:
            try:
                values["version"] = parse_version(raw["version"])
            except ValueError as exc:
                raise self.fail(f"{field}.version", str(exc)) from None
        labels = self.mapping(raw.get("labels") or {}, f"{field}.labels")
        values["labels"] = tuple((str(k), str(v)) for k, v in labels.items())
        values["taints"] = tuple(
            self.taint(t, f"{field}.taints[{i}]")
            for i, t in enumerate(self.sequence(raw.get("taints"), f"{field}.taints"))
        )
        return NodeSpec(**values)

    def quantity(self, value: Any, field: str) -> str:
        try:
            parse_quantity(value)
        except (ValueError, TypeError, AttributeError):
            raise self.fail(field, f"must be a quantity such as 4 or 16Gi, not {value!r}") from None
        return str(value)

    def taint(self, raw: Any, field: str) -> tuple[str, str, str]:
        if isinstance(raw, str):  # "key=value:Effect", as `kubectl taint` writes it
            head, _, effect = raw.rpartition(":") if ":" in raw else (raw, "", "")
            key, _, value = head.partition("=")
        else:
            taint = self.mapping(raw, field)
            key, value = str(taint.get("key") or ""), str(taint.get("value") or "")
            effect = str(taint.get("effect") or "")
        if not key:
            raise self.fail(field, f"a taint needs a key, e.g. gpu=true:NoSchedule: {raw!r}")
        if effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise self.fail(
                field, f"effect must be NoSchedule, PreferNoSchedule or NoExecute: {raw!r}"
            )
        return key, value, effect

    def namespaces(self, raw: Any) -> tuple[str, ...]:
        names = []
        for i, item in enumerate(self.sequence(raw, "spec.namespaces")):
            name = item.get("name") if isinstance(item, Mapping) else item
            if not isinstance(name, str) or not name:
                raise self.fail(f"spec.namespaces[{i}]", f"must be a namespace name, not {item!r}")
            names.append(name)
        return tuple(names)

    def images(self, raw: Any, defined: set[str]) -> tuple[ImageSpec, ...]:
        known = set(ProfileBook().names()) | defined
        found = []
        for i, item in enumerate(self.sequence(raw, "spec.images")):
            field = f"spec.images[{i}]"
            image = self.mapping(item, field)
            repository, profile = image.get("repository"), image.get("profile", "web")
            if not isinstance(repository, str) or not repository:
                raise self.fail(f"{field}.repository", "is required")
            tags = image.get("tags") or ["latest"]
            if not isinstance(tags, list) or not all(
                isinstance(t, str | int | float) for t in tags
            ):
                raise self.fail(f"{field}.tags", f"must be a list of tags, not {tags!r}")
            if profile not in known:
                raise self.fail(f"{field}.profile", f"no profile named {profile!r}")
            size = image.get("size")
            found.append(
                ImageSpec(
                    repository,
                    tuple(str(t) for t in tags),
                    str(profile),
                    int(parse_quantity(self.quantity(size, f"{field}.size"))) if size else None,
                )
            )
        return tuple(found)

    def profiles(self, raw: Any) -> tuple[Profile, ...]:
        book = ProfileBook()
        found: list[Profile] = []
        for i, item in enumerate(self.sequence(raw, "spec.profiles")):
            field = f"spec.profiles[{i}]"
            fields = dict(self.mapping(item, field))
            name, base_name = fields.pop("name", None), fields.pop("base", None)
            if not isinstance(name, str) or not name:
                raise self.fail(f"{field}.name", "is required")
            base = book.get(str(base_name)) if base_name is not None else _BLANK
            if base is None:
                raise self.fail(f"{field}.base", f"no profile named {base_name!r}")
            changes: dict[str, Any] = {"name": name}
            for key, value in fields.items():
                changes[key] = self.profile_field(key, value, f"{field}.{key}")
            profile = dataclasses.replace(base, **changes)
            book.define(profile)
            found.append(profile)
        return tuple(found)

    def profile_field(self, key: str, value: Any, field: str) -> Any:
        try:
            if key in ("ports", "http_paths"):
                items = value if isinstance(value, list) else [value]
                return tuple(int(v) if key == "ports" else str(v) for v in items)
            convert = PROFILE_CHANGES.get(key)
            if convert is None or key == "profile":
                known = ", ".join(sorted({*PROFILE_CHANGES, "ports", "http_paths"} - {"profile"}))
                raise self.fail(field, f"not a profile field; known: {known}")
            return convert(value)
        except (TypeError, ValueError, KeyError) as exc:
            if isinstance(exc, ScenarioError):
                raise
            raise self.fail(field, f"bad value {value!r}") from None

    def manifests(self, raw: Any) -> tuple[Obj, ...]:
        found: list[Obj] = []
        if isinstance(raw, Mapping):  # `manifests: {files: [...]}`
            raw = [raw]
        for i, item in enumerate(self.sequence(raw, "spec.manifests")):
            field = f"spec.manifests[{i}]"
            entry = self.mapping(item, field)
            if "kind" in entry:
                found.append(self.manifest(entry, field))
                continue
            files = entry.get("files", entry.get("file"))
            if files is None:
                raise self.fail(field, "must be an object (with kind) or {files: [paths]}")
            for j, name in enumerate(files if isinstance(files, list) else [files]):
                found += self.manifest_file(name, f"{field}.files[{j}]")
        return tuple(found)

    def manifest_file(self, name: Any, field: str) -> list[Obj]:
        target = self.path.parent / str(name)
        try:
            docs = [d for d in yaml.safe_load_all(target.read_text()) if d is not None]
        except OSError as exc:
            raise self.fail(field, f"cannot read {target}: {exc.strerror or exc}") from exc
        except yaml.YAMLError as exc:
            raise self.fail(field, f"{target} is not valid YAML: {exc}") from exc
        objs = []
        for k, doc in enumerate(docs):
            where = f"{field} ({target.name}, document {k + 1})"
            doc = self.mapping(doc, where)
            if doc.get("kind") == "List":
                objs += [self.manifest(o, where) for o in self.sequence(doc.get("items"), where)]
            else:
                objs.append(self.manifest(doc, where))
        return objs

    def manifest(self, raw: Any, field: str) -> Obj:
        obj = self.mapping(raw, field)
        for key in ("apiVersion", "kind"):
            if not isinstance(obj.get(key), str) or not obj[key]:
                raise self.fail(f"{field}.{key}", "is required")
        meta = self.mapping(obj.get("metadata"), f"{field}.metadata")
        if not isinstance(meta.get("name"), str) or not meta["name"]:
            raise self.fail(f"{field}.metadata.name", "is required")
        return dict(obj)

    def faults(self, raw: Any) -> tuple[Mapping[str, Any], ...]:
        found = []
        for i, item in enumerate(self.sequence(raw, "spec.faults")):
            try:
                parse_spec(item)
            except FaultSpecError as exc:
                raise self.fail(f"spec.faults[{i}].{exc.field}", exc.reason) from None
            found.append(dict(item))
        return tuple(found)


_BLANK = Profile("blank", (), (), 1.0, cpu_millis=10, memory_bytes=32 * MIB)


def _object(api_version: str, kind: str, name: str) -> Obj:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}}


def _what(value: Any) -> str:
    return "nothing" if value is None else f"{type(value).__name__} {value!r}"[:80]
