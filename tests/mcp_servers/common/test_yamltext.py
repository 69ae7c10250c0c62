"""The fast YAML writer: whatever it writes, PyYAML and kubectl read back as the same data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mcp_servers.common.yamltext import dump
from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl

SHOP = Path(__file__).parents[3] / "scenarios" / "manifests" / "shop.yaml"

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | st.sampled_from(["yes", "no", "on", "~", "null", "1.0", "0755", "12:30", "2026-01-01",
                       "=", "<<", "a: b", "a #b", "- x", "x:", " x", "x ", "@x", "'x'", "\n",
                       "a\n\n", "\x7f\x85\u2028", "nginx:1.27", "Back-off (x), y=z"])
)  # fmt: skip
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=600, deadline=None)
@given(documents)
@example("0\n")  # a document that is only a multi-line string: its block lines are indented
def test_pyyaml_reads_back_exactly_what_was_written(data: Any) -> None:
    assert yaml.safe_load(dump(data)) == data
    assert yaml.load(dump(data), Loader=yaml.CSafeLoader) == data


def test_multi_line_text_is_a_literal_block_and_short_words_stay_plain() -> None:
    text = dump({"script": "set -e\necho hi\n", "image": "nginx:1.27", "on": "yes"})
    assert text == 'script: |\n  set -e\n  echo hi\nimage: nginx:1.27\n"on": "yes"\n'


def test_kubectl_reads_the_objects_of_the_shop_as_written(
    shared_sandbox: Sandbox, tmp_path: Path
) -> None:
    """kubectl's YAML reader (YAML 1.2, Go) agrees with PyYAML's on everything we write."""
    kubectl = Kubectl(shared_sandbox.kubeconfig, tmp_path / "cache")
    objects = [o for o in yaml.safe_load_all(SHOP.read_text()) if o]
    objects[0].setdefault("metadata", {}).setdefault("annotations", {}).update(
        {"note": "two\nlines\n", "flag": "yes", "when": "2026-01-01", "odd": "x\x7f\u2028y"}
    )
    rendered = "---\n".join(dump(o) for o in objects)
    printed = kubectl("create", "--dry-run=client", "-o", "json", "-f", "-", input=rendered)
    read, at = [], 0
    while at < len(printed.rstrip()):  # one JSON document per object, one after the other
        obj, at = json.JSONDecoder().raw_decode(printed, at)
        read.append(obj)
        at = len(printed) - len(printed[at:].lstrip())
    assert [o["metadata"] for o in read] == [o["metadata"] for o in objects]
    assert [o.get("spec") for o in read] == [o.get("spec") for o in objects]
