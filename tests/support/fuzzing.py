"""Hypothesis strategies for hostile requests to the sandbox's Kubernetes API.

Bodies start from real manifests and are then bent: a field set to a value of another type or
range, a tree nested hundreds of levels deep, a long string, a repeated key, YAML with anchors,
timestamps and infinities. Patches come in all four types, JSON patches with every operation
(`copy`, `move` and `test` included) on paths that exist and paths that do not. Reads combine
selectors (well-formed and not) with the list and watch parameters. Every strategy yields what
goes on the wire (bytes and query strings), so a failing example replays with curl.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import yaml
from hypothesis import strategies as st

NAMESPACE = "fuzz"

KEYS = st.sampled_from(
    [
        "metadata",
        "name",
        "labels",
        "annotations",
        "finalizers",
        "spec",
        "replicas",
        "data",
        "containers",
        "image",
        "ports",
        "containerPort",
        "selector",
        "matchLabels",
        "template",
        "status",
        "type",
        "apiVersion",
        "kind",
        "revision",
        "size",
        "extra",
        "$patch",
        "$retainKeys",
        "$setElementOrder/containers",
        "$deleteFromPrimitiveList/finalizers",
        "resourceVersion",
        "creationTimestamp",
    ]
) | st.text(max_size=8)

NUMBERS = (
    st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([-1, 0, 2**31 - 1, 2**31, 2**63 - 1, 2**63, 2**64])
    | st.floats(allow_nan=False, allow_infinity=False)
)
SCALARS = st.none() | st.booleans() | NUMBERS | st.text(max_size=16)
TREES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=16,
)
BIG_STRINGS = st.integers(min_value=1_000, max_value=300_000).map(lambda n: "x" * n)
DEEP = "__deep__"  # replaced in the encoded body by a deeply nested value


def deep_json(depth: int) -> str:
    """A value nested `depth` levels, written as text (no recursion to build it)."""
    return '{"a":' * depth + "[1]" + "}" * depth


# Mostly ordinary trees: a long string or a deep value in every few bodies is enough.
VALUES = st.one_of(TREES, TREES, TREES, TREES, TREES, BIG_STRINGS, st.just(DEEP))
DEPTHS = st.sampled_from([5, 50, 150, 199, 200, 201, 260, 1_000, 2_000])


def _labels(name: str) -> dict[str, str]:
    return {"app": name}


def _pod_spec() -> dict[str, Any]:
    return {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}]}


def manifests(name: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """A valid manifest of each kind, by short name: (collection path, body)."""
    meta = {"name": name, "labels": _labels(name), "annotations": {"note": "fuzz"}}
    template = {"metadata": {"labels": _labels(name)}, "spec": _pod_spec()}
    apps, core = f"/apis/apps/v1/namespaces/{NAMESPACE}", f"/api/v1/namespaces/{NAMESPACE}"
    workload = {"replicas": 1, "selector": {"matchLabels": _labels(name)}, "template": template}
    return {
        "configmap": (f"{core}/configmaps", {"metadata": meta, "data": {"a": "1"}}),
        "secret": (f"{core}/secrets", {"metadata": meta, "stringData": {"a": "1"}}),
        "serviceaccount": (f"{core}/serviceaccounts", {"metadata": meta}),
        "service": (
            f"{core}/services",
            {"metadata": meta, "spec": {"selector": _labels(name), "ports": [{"port": 80}]}},
        ),
        "pod": (f"{core}/pods", {"metadata": meta, "spec": _pod_spec()}),
        "deployment": (f"{apps}/deployments", {"metadata": meta, "spec": workload}),
        "controllerrevision": (
            f"{apps}/controllerrevisions",
            {"metadata": meta, "revision": 1, "data": {"a": [1, "two"]}},
        ),
        "role": (
            f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NAMESPACE}/roles",
            {
                "metadata": meta,
                "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
            },
        ),
        "widget": (
            f"/apis/fuzz.example.com/v1/namespaces/{NAMESPACE}/widgets",
            {"metadata": meta, "spec": {"size": 3, "extra": {"free": ["form"]}}},
        ),
    }


# Kinds whose objects set controllers working: written only with dryRun=All, so a fuzzed
# `replicas: 2147483647` (valid, as in Kubernetes) cannot start a pod storm.
ACTIVE_KINDS = frozenset({"pod", "deployment"})
KINDS = st.sampled_from(sorted(manifests("x")))


def _containers(doc: Any) -> list[Any]:
    """Every object and list inside `doc`, itself included (iteratively)."""
    found, stack = [], [doc]
    while stack:
        node = stack.pop()
        found.append(node)
        children = node.values() if isinstance(node, dict) else node
        stack.extend(c for c in children if isinstance(c, dict | list))
    return found


@st.composite
def bent(draw: st.DrawFn, doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` with a few of its fields (or new ones) set to arbitrary values."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        where = draw(st.sampled_from(_containers(doc)))
        value = draw(VALUES)
        if isinstance(where, dict):
            key = draw(st.sampled_from(sorted(where)) | KEYS) if where else draw(KEYS)
            where[key] = value
        elif where:
            where[draw(st.integers(min_value=0, max_value=len(where) - 1))] = value
        else:
            where.append(value)
    return doc


@st.composite
def encoded(draw: st.DrawFn, doc: Any) -> bytes:
    """`doc` as JSON text, perhaps with a repeated key and a deep value spliced in."""
    text = json.dumps(doc)
    if DEEP in text:
        text = text.replace(json.dumps(DEEP), deep_json(draw(DEPTHS)))
    if draw(st.booleans()) and text.startswith('{"metadata": {'):
        text = text.replace('{"metadata": {', '{"metadata": {"name": "dup", ', 1)
    return text.encode()


YAML_ODDITIES = st.sampled_from(
    [
        "when: 2024-01-01T00:00:00Z\n",
        "number: .inf\n",
        "nan: .nan\n",
        "blob: !!binary aGVsbG8=\n",
        "set: !!set {a, b}\n",
        "? [complex, key]\n: value\n",
        "base: &b {x: 1}\nmore: *b\n",
        "l0: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
        + "".join(
            f"l{i}: &{'a' * (i + 1)} [{', '.join(['*' + 'a' * i] * 10)}]\n" for i in range(1, 8)
        ),
        "huge: 18446744073709551616000\n",
        "1: one\ntrue: yes\nnull: nothing\n",
        "deep: " + "[" * 300 + "]" * 300 + "\n",
        "---\na: 1\n---\nb: 2\n",
        "key: [unclosed\n",
    ]
)


@st.composite
def apply_bodies(draw: st.DrawFn, kind: str, name: str) -> bytes:
    doc = manifests(name)[kind][1]
    group_version = {
        "deployment": "apps/v1",
        "controllerrevision": "apps/v1",
        "role": "rbac.authorization.k8s.io/v1",
        "widget": "fuzz.example.com/v1",
    }
    doc = {"apiVersion": group_version.get(kind, "v1"), "kind": _kind_name(kind), **doc}
    doc = draw(bent(doc))
    if draw(st.booleans()):
        return draw(encoded(doc))
    text = yaml.safe_dump(doc) if DEEP not in json.dumps(doc) else yaml.safe_dump({"a": 1})
    return (text + draw(st.just("") | YAML_ODDITIES)).encode()


def _kind_name(kind: str) -> str:
    special = {
        "configmap": "ConfigMap",
        "serviceaccount": "ServiceAccount",
        "controllerrevision": "ControllerRevision",
    }
    return special.get(kind, kind.capitalize())


POINTERS = st.sampled_from(
    [
        "",
        "/",
        "/metadata",
        "/metadata/labels",
        "/metadata/labels/app",
        "/metadata/annotations",
        "/metadata/annotations/note",
        "/metadata/name",
        "/metadata/resourceVersion",
        "/metadata/finalizers",
        "/metadata/finalizers/-",
        "/data",
        "/data/a",
        "/data/a/0",
        "/spec",
        "/spec/replicas",
        "/spec/size",
        "/spec/extra",
        "/spec/extra/free/-",
        "/spec/template/spec/containers/0/image",
        "/spec/template/spec/containers/-",
        "/spec/template/spec/containers/0",
        "/a~1b",
        "/~0",
        "/data/-1",
        "/data/99999999999",
    ]
) | st.text(max_size=12)
OPS = st.sampled_from(["add", "remove", "replace", "move", "copy", "test"]) | st.text(max_size=6)


@st.composite
def json_patches(draw: st.DrawFn) -> bytes:
    if draw(st.integers(min_value=0, max_value=60)) == 0:
        many = [{"op": "test", "path": "/metadata/name", "value": "target"}] * 10_001
        return json.dumps(many).encode()
    operations = []
    for _ in range(draw(st.integers(min_value=0, max_value=12))):
        operation: dict[str, Any] = {"op": draw(OPS), "path": draw(POINTERS)}
        if draw(st.booleans()):
            operation["from"] = draw(POINTERS)
        if draw(st.booleans()):
            operation["value"] = draw(VALUES)
        operations.append(operation if draw(st.integers(0, 9)) else draw(TREES))
    return draw(encoded(operations))


MERGE_PATCHES = TREES.map(lambda tree: {"spec": tree, "metadata": {"labels": tree}}) | (
    st.dictionaries(KEYS, VALUES, max_size=4)
)
PATCH_BODIES = {
    "json": json_patches(),
    "merge": MERGE_PATCHES.flatmap(encoded),
    "strategic": MERGE_PATCHES.flatmap(encoded),
}
CONTENT_TYPES = {
    "json": "application/json-patch+json",
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}

SELECTORS = st.sampled_from(
    [
        "",
        "app=target",
        "app!=x",
        "app",
        "!app",
        "app in (a,b)",
        "app notin (a)",
        "a=b,c!=d",
        "app in (",
        "=",
        "a==b",
        "x" * 300,
        "a/b/c=d",
        "metadata.name=target",
        "metadata.namespace!=fuzz",
        "spec.nodeName=",
        "status.phase=Running",
        "bogus=1",
    ]
) | st.text(max_size=20)
QUERY_VALUES = {
    "limit": st.sampled_from(["", "0", "1", "2", "-1", "500", "99999999999999999999", "ten"]),
    "continue": st.sampled_from(["", "garbage", "eyJydiI6MX0", "eyJ2IjoxfQ"]) | st.text(max_size=8),
    "resourceVersion": st.sampled_from(["", "0", "1", "-1", "999999999999", "abc"]),
    "resourceVersionMatch": st.sampled_from(["", "Exact", "NotOlderThan", "Sideways"]),
    "timeoutSeconds": st.sampled_from(["0", "1", "-1", "x", "1" * 40]),
    "sendInitialEvents": st.sampled_from(["", "true", "false"] * 3 + ["maybe"]),
    "allowWatchBookmarks": st.sampled_from(["", "true", "1"]),
    "watch": st.sampled_from(["", "true", "1", "True", "false"] * 3 + ["maybe"]),
    "includeObject": st.sampled_from(["", "None", "Metadata", "Object", "Everything"]),
    "labelSelector": SELECTORS,
    "fieldSelector": SELECTORS,
}
WRITE_QUERY = {
    "fieldValidation": st.sampled_from(["Strict", "Warn", "Ignore"] * 5 + ["", "Loose"]),
    "fieldManager": st.sampled_from(["fuzz", "kubectl"] * 5 + ["", "x" * 200]),
    "force": st.sampled_from(["true", "false"] * 5 + ["", "perhaps"]),
}
DRY_RUN = st.sampled_from(["", "All"] * 5 + ["Some"])


def query(values: dict[str, st.SearchStrategy[str]]) -> st.SearchStrategy[dict[str, str]]:
    """Some of the parameters, each with one of its values."""
    return st.fixed_dictionaries({}, optional=values)
