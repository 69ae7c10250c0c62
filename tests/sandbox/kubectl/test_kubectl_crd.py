"""kubectl and CustomResourceDefinitions: a CRD's whole life as a user drives it with kubectl.

Apply the CRD, see its kind in discovery, apply custom resources, read them through the CRD's
printer columns and every name kubectl accepts, patch and re-apply them, write status through
the status subresource, have the schema enforced, and delete it all again. CRDs are
cluster-wide, so each test gets a sandbox of its own.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import yaml

from tests.sandbox.kubectl.suite import MANIFESTS, header, rows
from tests.support.kubectl import Kubectl

pytestmark = pytest.mark.kubectl

WIDGETS_CRD = MANIFESTS / "a" / "widgets-crd.yaml"
GADGETS_CRD = MANIFESTS / "a" / "gadgets-crd.yaml"
CRD_REF = "customresourcedefinition.apiextensions.k8s.io/widgets.stable.example.com"
# Ten and a half years ago reads "10y" however far the sandbox's accelerated clock has moved:
# the date column is aged on the sandbox's clock.
MADE = (datetime.now(UTC) - timedelta(days=365 * 10 + 180)).strftime("%Y-%m-%dT%H:%M:%SZ")


def widget(name: str = "w1", **spec: Any) -> str:
    """A Widget manifest in the default namespace, as YAML."""
    body = {"color": "blue", "size": 3, "madeAt": MADE} | spec
    manifest = {
        "apiVersion": "stable.example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {k: v for k, v in body.items() if v is not None},
    }
    return yaml.safe_dump(manifest)


@pytest.fixture
def widgets(kubectl: Kubectl) -> Kubectl:
    """kubectl against a fresh sandbox that serves the Widget CRD."""
    assert kubectl("apply", "-f", str(WIDGETS_CRD)) == f"{CRD_REF} created\n"
    kubectl("wait", "--for=condition=Established", CRD_REF, "--timeout=10s")
    return kubectl


@pytest.fixture
def w1(widgets: Kubectl) -> Kubectl:
    """The Widget CRD with one widget, `w1`, applied in `default`."""
    assert widgets("apply", "-f", "-", input=widget()) == ("widget.stable.example.com/w1 created\n")
    return widgets


def test_crd_kind_appears_in_discovery(widgets: Kubectl) -> None:
    listed = rows(widgets("api-resources", "--api-group=stable.example.com"))
    assert listed == [
        {
            "NAME": "widgets",
            "SHORTNAMES": "wd",
            "APIVERSION": "stable.example.com/v1",
            "NAMESPACED": "true",
            "KIND": "Widget",
        }
    ]
    assert "stable.example.com/v1" in widgets("api-versions").split()
    crds = rows(widgets("get", "crds"))
    assert [r["NAME"] for r in crds] == ["widgets.stable.example.com"]
    assert header(widgets("get", "crds")) == ["NAME", "CREATED AT"]


def test_crd_status_reports_established_and_accepted_names(widgets: Kubectl) -> None:
    status = widgets.json("get", CRD_REF)["status"]
    conditions = {c["type"]: c["status"] for c in status["conditions"]}
    assert conditions | {"Established": "True", "NamesAccepted": "True"} == conditions
    assert status["acceptedNames"]["shortNames"] == ["wd"]
    assert status["storedVersions"] == ["v1"]


def test_get_custom_resources_shows_the_printer_columns(w1: Kubectl) -> None:
    w1(
        "patch",
        "wd",
        "w1",
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status":{"phase":"Ready"}}',
    )
    table = w1("get", "widgets")
    assert header(table) == ["NAME", "COLOR", "SIZE", "PHASE", "MADE", "AGE"]
    [row] = rows(table)
    assert row | {"AGE": "?"} == {
        "NAME": "w1",
        "COLOR": "blue",
        "SIZE": "3",
        "PHASE": "Ready",
        "MADE": "10y",
        "AGE": "?",
    }
    assert row["AGE"].endswith("s")
    everywhere = rows(w1("get", "widgets", "-A"))
    assert [(r["NAMESPACE"], r["NAME"], r["PHASE"]) for r in everywhere] == [
        ("default", "w1", "Ready")
    ]


def test_get_custom_resource_without_status_shows_none(w1: Kubectl) -> None:
    [row] = rows(w1("get", "widgets"))
    # The server sends a null cell for a path that finds nothing; kubectl prints it empty.
    assert row["PHASE"] == ""


@pytest.mark.parametrize(
    "name",
    [
        "wd",
        "widget",
        "widgets",
        "Widget",
        "widgets.stable.example.com",
        "widgets.v1.stable.example.com",
    ],
)
def test_get_finds_custom_resources_by_every_name(w1: Kubectl, name: str) -> None:
    assert w1("get", name, "-o", "name") == "widget.stable.example.com/w1\n"
    assert w1("get", name, "w1", "-o", "jsonpath={.spec.color}") == "blue"


def test_get_custom_resource_yaml_is_the_applied_object(w1: Kubectl) -> None:
    printed = yaml.safe_load(w1("get", "wd", "w1", "-o", "yaml"))
    assert (printed["apiVersion"], printed["kind"]) == ("stable.example.com/v1", "Widget")
    assert printed["spec"] == {"color": "blue", "size": 3, "madeAt": MADE}
    meta = printed["metadata"]
    assert (meta["name"], meta["namespace"], meta["generation"]) == ("w1", "default", 1)
    applied = json.loads(meta["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert applied["spec"] == printed["spec"]
    assert meta["uid"] and meta["resourceVersion"] and meta["creationTimestamp"]


def test_patch_merge_changes_the_spec_and_bumps_generation(w1: Kubectl) -> None:
    before = w1.json("get", "wd", "w1")
    done = w1("patch", "wd", "w1", "--type=merge", "-p", '{"spec":{"size":5,"color":null}}')
    assert done == "widget.stable.example.com/w1 patched\n"
    after = w1.json("get", "wd", "w1")
    assert after["spec"] == {"size": 5, "madeAt": MADE}
    assert after["metadata"]["generation"] == before["metadata"]["generation"] + 1
    assert int(after["metadata"]["resourceVersion"]) > int(before["metadata"]["resourceVersion"])


def test_status_is_written_only_through_the_status_subresource(w1: Kubectl) -> None:
    ignored = w1("patch", "wd", "w1", "--type=merge", "-p", '{"status":{"phase":"Hacked"}}')
    assert ignored == "widget.stable.example.com/w1 patched (no change)\n"
    assert "status" not in w1.json("get", "wd", "w1")
    w1(
        "patch",
        "wd",
        "w1",
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status":{"phase":"Ready"},"spec":{"size":99}}',
    )
    stored = w1.json("get", "wd", "w1")
    assert stored["status"] == {"phase": "Ready"}
    assert (stored["spec"]["size"], stored["metadata"]["generation"]) == (3, 1)


def test_second_apply_merges_the_change_and_keeps_others_fields(w1: Kubectl) -> None:
    w1("label", "wd", "w1", "team=blue")
    changed = widget(size=7, color=None)
    assert w1("apply", "-f", "-", input=changed) == "widget.stable.example.com/w1 configured\n"
    stored = w1.json("get", "wd", "w1")
    # color was in the last applied manifest and is gone from this one: apply removes it.
    assert stored["spec"] == {"size": 7, "madeAt": MADE}
    assert stored["metadata"]["labels"] == {"team": "blue"}
    assert w1("apply", "-f", "-", input=changed) == "widget.stable.example.com/w1 unchanged\n"


def test_delete_custom_resource_removes_it(w1: Kubectl) -> None:
    deleted = w1("delete", "wd", "w1")
    assert deleted == 'widget.stable.example.com "w1" deleted from default namespace\n'
    done = w1.fails("get", "wd", "w1")
    assert done.stderr.strip() == (
        'Error from server (NotFound): widgets.stable.example.com "w1" not found'
    )


def test_deleting_the_crd_removes_the_kind_and_its_objects(w1: Kubectl) -> None:
    deleted = w1("delete", "-f", str(WIDGETS_CRD))
    assert deleted == (
        'customresourcedefinition.apiextensions.k8s.io "widgets.stable.example.com" deleted\n'
    )
    assert rows(w1("api-resources", "--api-group=stable.example.com")) == []
    assert "stable.example.com/v1" not in w1("api-versions").split()
    gone = w1.fails("get", "widgets")
    assert 'the server doesn\'t have a resource type "widgets"' in gone.stderr
    w1("apply", "-f", str(WIDGETS_CRD))
    w1("wait", "--for=condition=Established", CRD_REF, "--timeout=10s")
    assert w1("get", "widgets", "-A", "-o", "name") == ""


def test_cluster_scoped_crd_serves_objects_without_namespace(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", str(GADGETS_CRD))
    kubectl("wait", "--for=condition=Established", "crd/gadgets.ops.example.com", "--timeout=10s")
    listed = rows(kubectl("api-resources", "--api-group=ops.example.com"))
    assert [(r["NAME"], r["SHORTNAMES"], r["NAMESPACED"], r["KIND"]) for r in listed] == [
        ("gadgets", "gd", "false", "Gadget")
    ]
    manifest = {
        "apiVersion": "ops.example.com/v1alpha1",
        "kind": "Gadget",
        "metadata": {"name": "g1"},
        "spec": {"owner": "ops"},
    }
    created = kubectl("apply", "-f", "-", input=json.dumps(manifest))
    assert created == "gadget.ops.example.com/g1 created\n"
    table = kubectl("get", "gd")
    assert header(table) == ["NAME", "OWNER"]
    assert rows(table) == [{"NAME": "g1", "OWNER": "ops"}]
    assert "namespace" not in kubectl.json("get", "gadget", "g1")["metadata"]
    kubectl("delete", "crd", "gadgets.ops.example.com")
    assert rows(kubectl("api-resources", "--api-group=ops.example.com")) == []


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param(
            {"colour": "blue"},
            'Error from server (BadRequest): error when creating "STDIN": Widget in version '
            '"v1" cannot be handled as a Widget: strict decoding error: unknown field '
            '"spec.colour"',
            id="unknown-field",
        ),
        pytest.param(
            {"size": 0},
            'The Widget "w1" is invalid: spec.size: Invalid value: 0: spec.size in body should '
            "be greater than or equal to 1",
            id="below-minimum",
        ),
        pytest.param(
            {"color": "pink"},
            'The Widget "w1" is invalid: spec.color: Unsupported value: "pink": supported '
            'values: "red", "green", "blue"',
            id="not-in-enum",
        ),
        pytest.param(
            {"size": "big"},
            'The Widget "w1" is invalid: spec.size: Invalid value: "string": spec.size in body '
            'must be of type integer: "string"',
            id="wrong-type",
        ),
    ],
)
def test_apply_rejects_a_custom_resource_the_schema_refuses(
    widgets: Kubectl, spec: dict[str, Any], message: str
) -> None:
    done = widgets.fails("apply", "-f", "-", input=widget(**spec))
    assert done.stderr.strip() == message
    assert widgets("get", "widgets", "-o", "name") == ""


def test_explain_describes_a_crd_field(widgets: Kubectl) -> None:
    explained = widgets("explain", "widget.spec.color")
    for line in (
        "GROUP:      stable.example.com",
        "KIND:       Widget",
        "VERSION:    v1",
        "FIELD: color <string>",
        "The paint on the widget.",
    ):
        assert line in explained
    assert "A Widget is a made-up kind" in widgets("explain", "widgets")
